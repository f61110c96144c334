"""tc.distributed collectives across real MPI processes, and what happens when a rank dies."""
import os
import re

import pytest

from mpi_launch import needs_mpi, run_mpi

pytestmark = [needs_mpi]


@pytest.mark.slow
@pytest.mark.parametrize("n", [2, 3])
def test_every_collective_on_every_rank(n):
    result = run_mpi("collectives.py", n=n, timeout=120)
    assert result.returncode == 0, result.output
    for r in range(n):
        assert f"rank {r} of {n} OK" in result.output


def test_world_of_one_without_a_launcher():
    """`python script.py` without mpirun is a world of one process: the same script still runs."""
    result = run_mpi("collectives.py", n=0, timeout=60)
    assert result.returncode == 0, result.output
    assert "rank 0 of 1 OK" in result.output


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["stuck", "exit0"])
def test_rank_that_stops_answering_makes_the_others_time_out(mode):
    result = run_mpi("dying_rank.py", mode, 2, n=2, timeout=60)
    assert result.returncode != 0
    assert "rank 0 finished the first all_reduce" in result.output
    assert "UNEXPECTEDLY" not in result.output
    assert "DistBackendError: [Rank 0] all_reduce timed out after 2 seconds" in result.output
    assert "have probably crashed, exited early or are stuck" in result.output
    assert result.seconds < 45


@pytest.mark.slow
def test_uncaught_error_on_one_rank_aborts_the_whole_job_at_once():
    # a long collective timeout: the job must end because of the abort, not the timeout
    result = run_mpi("dying_rank.py", "raise", 300, n=2, timeout=60)
    assert result.returncode != 0
    assert "ValueError: rank 1 fails on purpose" in result.output
    assert "[Rank 1] uncaught exception: aborting all 2 ranks of the MPI job" in result.output
    assert "UNEXPECTEDLY" not in result.output
    assert result.seconds < 45


@pytest.mark.slow
def test_crashed_rank_stops_the_job_with_its_exit_code():
    """What mpich's launcher (hydra) guarantees when one rank exits non-zero: it kills the other ranks and the
    job ends at once, with a non-zero status. That status is the bitwise OR of every rank's raw wait status, so
    it is the crashed rank's code (3) when the others had not been signalled yet, or a signal number (9) when
    the launcher's SIGKILL reached them first: which one depends on scheduling. Each rank's own status is
    exact, and `-print-all-exitcodes` reports it."""
    result = run_mpi("dying_rank.py", "crash", 300, n=2, timeout=60, launcher_args=["-print-all-exitcodes"])
    assert result.returncode != 0, result.output
    codes = re.search(r"Exit codes: \[[^\]]*\] ([-\d,]+)", result.output)
    assert codes, result.output
    statuses = [int(s) for s in codes.group(1).split(",")]
    assert os.waitstatus_to_exitcode(statuses[1]) == 3, result.output  # the crashed rank's own status
    assert statuses[0] == 0 or os.WIFSIGNALED(statuses[0]), result.output  # rank 0: stopped by the launcher
    assert "UNEXPECTEDLY" not in result.output
    assert result.seconds < 45
