"""The tests that start processes pass with every core busy (scripts/under_load.py beside them)."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# MPI jobs (a rank that crashes, hangs or raises) and process pools: the quickest of the process-starting
# tests whose result once depended on which process the scheduler ran first. `python scripts/under_load.py
# --process-tests --repeat 3` runs all of them.
UNDER_LOAD = ["tests/distributed/test_collectives_mpi.py", "tests/compat/test_multiprocessing.py"]


@pytest.mark.slow
def test_process_starting_tests_pass_with_both_cores_busy():
    run = subprocess.run([sys.executable, "scripts/under_load.py", *UNDER_LOAD, "-q", "-m", "slow or not slow"],
                         cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "busy loops running" in run.stdout
    assert " passed" in run.stdout
