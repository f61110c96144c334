"""Run tests while every core is kept busy, to catch tests that depend on timing or scheduling.

A test that starts processes, waits on a clock or expects one process to win a race can pass on an idle
machine and fail when another job shares the cores. This script starts one busy loop per core (a `stress`-like
CPU hog, each in its own process), runs pytest beside them, and stops the loops when pytest ends.

    python scripts/under_load.py                        # the whole suite, once, both cores busy
    python scripts/under_load.py --repeat 3             # three runs in a row; stops at the first failure
    python scripts/under_load.py --process-tests        # only the tests that start processes or wait on time
    python scripts/under_load.py --hogs 4 tests/data -k timeout   # any pytest arguments after the options

The exit status is pytest's (0 when every run passed). Use the project's venv python (`.venv/bin/python`).
"""
import argparse
import multiprocessing
import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Tests that start processes (MPI jobs, sandboxed graders, worker pools, notebooks' kernels, subprocesses) or
# wait on a clock. `--process-tests` runs these; keep the list in step with `grep -rlE "subprocess|Popen|
# mpiexec|multiprocessing|time.sleep|timeout" tests`.
PROCESS_TESTS = [
    "tests/distributed",
    "tests/compat/test_multiprocessing.py",
    "tests/data/test_dataloader.py",
    "tests/grading/test_grader_stops.py",
    "tests/grading/test_grader_landlock.py",
    "tests/grading/test_redteam.py",
    "tests/grading/test_batch_grader.py",
    "tests/grading/test_grader_parts.py",
    "tests/profiler/test_profiler_table.py",
    "tests/core/test_numpy_warnings.py",
    "tests/test_optional_imports.py",
    "tests/programs/test_programs.py",
]


def busy_loop():
    """Spin forever: one core's worth of load."""
    while True:
        pass


def start_hogs(count: int) -> list:
    """Start `count` busy-loop processes (daemons, so they die with this script)."""
    hogs = [multiprocessing.Process(target=busy_loop, daemon=True) for _ in range(count)]
    for hog in hogs:
        hog.start()
    return hogs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hogs", type=int, default=os.cpu_count() or 2,
                        help="busy loops to run beside the tests (default: one per core)")
    parser.add_argument("--repeat", type=int, default=1, help="run the tests this many times in a row")
    parser.add_argument("--process-tests", action="store_true",
                        help="run only the tests that start processes or wait on time (PROCESS_TESTS)")
    args, pytest_args = parser.parse_known_args(argv)
    if args.process_tests:
        pytest_args = PROCESS_TESTS + pytest_args
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))  # still stop the loops
    hogs = start_hogs(args.hogs)
    print(f"under_load: {len(hogs)} busy loops running; pytest {' '.join(pytest_args) or '(whole suite)'}",
          flush=True)
    status = 0
    try:
        for run in range(1, args.repeat + 1):
            status = subprocess.call([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *pytest_args],
                                     cwd=ROOT)
            print(f"under_load: run {run} of {args.repeat} exited with {status}", flush=True)
            if status != 0:
                break
    finally:
        for hog in hogs:
            hog.terminate()
        for hog in hogs:
            hog.join()
    return status


if __name__ == "__main__":
    sys.exit(main())
