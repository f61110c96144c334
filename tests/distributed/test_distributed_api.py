"""tc.distributed's API in this (uninitialised) process: availability, errors, ReduceOp; NCCL skipped here."""
import datetime

import pytest
import torch.distributed as tdist

import tinygrad_course as tc
import tinygrad_course.distributed as dist


def test_public_names_follow_torch():
    for name in ["init_process_group", "destroy_process_group", "is_initialized", "is_available", "get_rank",
                 "get_world_size", "get_backend", "all_reduce", "reduce", "broadcast", "all_gather",
                 "all_gather_into_tensor", "barrier", "ReduceOp", "is_mpi_available", "is_nccl_available",
                 "DistBackendError"]:
        assert hasattr(dist, name) and hasattr(tdist, name), name
    for op in ["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]:
        assert hasattr(dist.ReduceOp, op) and hasattr(tdist.ReduceOp, op)
    assert issubclass(dist.DistBackendError, RuntimeError)
    assert tc.distributed is dist and tc.nn.parallel.DistributedDataParallel is not None


def test_uninitialised_errors_match_torch():
    assert not dist.is_initialized() and not tdist.is_initialized()
    with pytest.raises(ValueError) as ours:
        dist.get_rank()
    with pytest.raises(ValueError) as theirs:
        tdist.get_world_size()
    assert str(ours.value).startswith(str(theirs.value).split(". Hint")[0].rstrip("."))
    with pytest.raises(ValueError, match="has not been initialized"):
        dist.all_reduce(tc.ones(2))
    with pytest.raises(ValueError, match="has not been initialized"):
        dist.destroy_process_group()


def test_backend_choice_errors():
    with pytest.raises(ValueError, match="Invalid backend: 'smoke'"):
        dist.init_process_group("smoke")
    with pytest.raises(RuntimeError, match="doesn't have Gloo built in.*backend=\"mpi\""):
        dist.init_process_group("gloo")
    with pytest.raises(ValueError, match="MPI launcher"):
        dist.init_process_group("mpi", init_method="tcp://127.0.0.1:1234")
    assert not dist.is_initialized()


def test_timeout_accepts_timedelta_and_seconds():
    from tinygrad_course.distributed.process_group import _seconds

    assert _seconds(datetime.timedelta(seconds=3)) == 3.0
    assert _seconds(2.5) == 2.5
    assert _seconds(None) == 30 * 60


def test_ddp_needs_a_process_group():
    model = tc.nn.Linear(2, 2)
    with pytest.raises(ValueError, match="init_process_group"):
        tc.nn.parallel.DistributedDataParallel(model)


@pytest.mark.gpu
@pytest.mark.skipif(not dist.is_nccl_available(), reason="the nccl backend needs CuPy with NCCL and NVIDIA GPUs")
def test_nccl_backend_world_of_one():
    """Runs where a GPU exists (the multi-GPU path is the same code with more ranks)."""
    import subprocess
    import sys

    code = ("import tinygrad_course as tc, tinygrad_course.distributed as d; d.init_process_group('nccl'); "
            "t = tc.ones(3, device='cuda'); d.all_reduce(t); d.barrier(); print(t.sum().item()); "
            "d.destroy_process_group()")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "3.0"
