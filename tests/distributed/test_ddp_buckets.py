"""Gradient bucketing in DistributedDataParallel: bucket assignment (parity with PyTorch) and 2-process runs
with several buckets, no_sync() across buckets, and unused parameters."""
import numpy as np
import pytest
import torch

import tinygrad_course as tc
from tinygrad_course.nn.parallel.reducer import compute_bucket_assignment

from mpi_launch import needs_mpi, run_mpi


@pytest.mark.parametrize("sizes, limits", [
    ([10, 300, 7, 7, 1000, 3], [100]),
    ([10, 300, 7, 7, 1000, 3], [40, 2000]),
    ([64, 64, 64, 64], [1 << 30]),
    ([1, 2, 3], [1]),
])
def test_bucket_assignment_matches_torch(sizes, limits):
    ours = compute_bucket_assignment([tc.zeros(n) for n in sizes], limits)
    theirs, _ = torch.distributed._compute_bucket_assignment_by_size([torch.zeros(n) for n in sizes], limits)
    assert ours == [list(b) for b in theirs]


def test_bucket_assignment_keeps_dtypes_apart():
    params = [tc.zeros(4), tc.zeros(4, dtype=tc.float64), tc.zeros(4)]
    assert compute_bucket_assignment(params, [1 << 20]) == [[0, 2], [1]]


def _local_grad(x, params_from):
    """Gradient of (model(x)**2).sum() on one process, for the model DDP starts from."""
    tc.manual_seed(0)
    model = tc.nn.Sequential(tc.nn.Linear(5, 16), tc.nn.Tanh(), tc.nn.Linear(16, 8), tc.nn.Tanh(),
                             tc.nn.Linear(8, 3))
    model(tc.tensor(x)).square().sum().backward()
    return np.concatenate([p.grad.numpy().ravel() for p in model.parameters()])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("ddp_buckets")
    result = run_mpi("ddp_buckets.py", out, n=2, timeout=120)
    assert result.returncode == 0, result.output
    return [dict(np.load(out / f"rank{r}.npz")) for r in range(2)]


@needs_mpi
@pytest.mark.slow
def test_several_buckets_average_like_one(runs):
    r0, r1 = runs
    assert list(r0["small_buckets_initial"]) == [6]  # PyTorch: one bucket until the first rebuild
    assert len(r0["small_buckets"]) > 2 and r0["small_buckets"].sum() == 6
    np.testing.assert_array_equal(r0["small_grads"], r0["first_step_grads"])
    assert list(r0["default_buckets"]) == [6]
    assert bool(r0["grads_contiguous_writable"])
    np.testing.assert_array_equal(r0["small_grads"], r1["small_grads"])
    np.testing.assert_array_equal(r0["small_grads"], r0["default_grads"])  # same sums, element by element
    expected = (_local_grad(r0["x"], 0) + _local_grad(r1["x"], 0)) / 2
    np.testing.assert_allclose(r0["small_grads"], expected, rtol=1e-5, atol=1e-6)


@needs_mpi
@pytest.mark.slow
def test_no_sync_accumulates_across_buckets_then_averages(runs):
    r0, r1 = runs
    assert not np.allclose(r0["no_sync_local"], r1["no_sync_local"])
    np.testing.assert_array_equal(r0["no_sync_then_synced"], r1["no_sync_then_synced"])
    expected = (_local_grad(r0["x"], 0) + _local_grad(r1["x"], 0)) / 2  # 3 slices sum to the whole batch
    np.testing.assert_allclose(r0["no_sync_then_synced"], expected, rtol=1e-5, atol=1e-5)


@needs_mpi
@pytest.mark.slow
def test_unused_parameters(runs):
    for r, run in enumerate(runs):
        message = str(run["unused_error"])
        assert "find_unused_parameters=True" in message
        assert f"Parameter indices which did not receive grad for rank {r}: 6 7 (spare.weight, spare.bias)" in message
        assert run["find_unused_spare_is_none"].all()
    np.testing.assert_array_equal(runs[0]["find_unused_body_grads"], runs[1]["find_unused_body_grads"])
    np.testing.assert_array_equal(runs[0]["find_unused_body_grads"], runs[0]["default_grads"])
