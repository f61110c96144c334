"""DistributedDataParallel where the ranks' backward passes differ, on 2 MPI processes (workers/ddp_dynamic.py).

- find_unused_parameters=True with a layer that only some ranks' batches use: the missing gradient counts as
  zero, so every rank gets sum(grads) / world_size, as PyTorch's reducer does; a parameter no rank used keeps
  `.grad = None`; training matches one process that averages the per-rank losses.
- The one-time bucket rebuild: after the first step the buckets follow rank 0's gradient-ready order (on
  both ranks, even where rank 1's own order differs), bucketed like PyTorch's
  `_compute_bucket_assignment_by_size`, and the gradients stay those of one process.
"""
import numpy as np
import pytest
import torch

import tinygrad_course as tc

from mpi_launch import WORKERS, needs_mpi, run_mpi, set_flat_parameters

STEPS = 6

pytestmark = [needs_mpi, pytest.mark.slow]


def _worker_namespace():
    """The worker's model classes and helpers, without running it (`rank` only picks the shuffled model's
    branch order, which does not change its values)."""
    source = (WORKERS / "ddp_dynamic.py").read_text()
    start, end = source.index("class Branchy"), source.index("saved = {}")
    namespace = {"rank": 0}
    exec("import numpy as np\nimport tinygrad_course as tc\n" + source[start:end], namespace)
    return namespace


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("ddp_dynamic")
    result = run_mpi("ddp_dynamic.py", out, STEPS, n=2, timeout=120)
    assert result.returncode == 0, result.output
    return [dict(np.load(out / f"rank{r}.npz")) for r in range(2)]


def _single_process(runs, name, model):
    """Train `model` from DDP's starting weights on the mean of the two ranks' losses; yield grads, weights."""
    ns = _worker_namespace()
    set_flat_parameters(model, runs[0][f"{name}_init"])
    opt = tc.optim.SGD(model.parameters(), lr=0.3, momentum=0.9)
    loss_fn = tc.nn.CrossEntropyLoss()
    for step in range(STEPS):
        opt.zero_grad()
        losses = [loss_fn(model(tc.tensor(run[f"{name}_x{step}"])), tc.tensor(run[f"{name}_y{step}"])) for run in runs]
        ((losses[0] + losses[1]) / 2).backward()
        grads = ns["grads"](model)
        opt.step()
        yield step, grads, ns["weights"](model)


def test_branch_inputs_take_every_combination(runs):
    """The test data really exercise: both ranks use `skip`, only rank 0, only rank 1, neither."""
    pattern = [tuple(bool(run[f"branch_x{k}"][0, 0] > 0) for run in runs) for k in range(4)]
    assert pattern == [(True, True), (True, False), (False, True), (False, False)]


def test_branch_gradients_are_sum_over_using_ranks_divided_by_world(runs):
    ns = _worker_namespace()
    sizes = [p.numel() for p in ns["Branchy"]().parameters()]
    skip = slice(sum(sizes[:2]), sum(sizes[:4]))  # skip.weight, skip.bias
    spare = slice(sum(sizes[:6]), sum(sizes))
    for step in range(STEPS):
        g0, g1 = runs[0][f"branch_grads{step}"], runs[1][f"branch_grads{step}"]
        np.testing.assert_array_equal(g0, g1)  # the rank that skipped the layer gets the average too
        assert np.isnan(g0[spare]).all()  # unused on every rank: `.grad` stays None
        assert np.isnan(g0[skip]).all() == (step % 4 == 3)
    # single rank used `skip` at step 1: its local gradient halved
    model = ns["Branchy"]()
    set_flat_parameters(model, runs[0]["branch_weights0"])
    loss = tc.nn.CrossEntropyLoss()(model(tc.tensor(runs[0]["branch_x1"])), tc.tensor(runs[0]["branch_y1"]))
    loss.backward()
    np.testing.assert_allclose(runs[1]["branch_grads1"][skip], ns["grads"](model)[skip] / 2, rtol=1e-5, atol=1e-7)


def test_branch_training_matches_one_process(runs):
    ns = _worker_namespace()
    for step, grads, weights in _single_process(runs, "branch", ns["Branchy"]()):
        np.testing.assert_allclose(runs[0][f"branch_grads{step}"], grads, rtol=1e-5, atol=1e-6,
                                   err_msg=f"step {step}")  # NaN (None) in the same places
        np.testing.assert_allclose(runs[0][f"branch_weights{step}"], weights, rtol=1e-5, atol=1e-6,
                                   err_msg=f"step {step}")
        np.testing.assert_array_equal(runs[0][f"branch_weights{step}"], runs[1][f"branch_weights{step}"])


def test_unused_parameters_are_ready_when_backward_starts(runs):
    for run in runs:
        for step in range(STEPS):
            at_first, at_last, count = run[f"branch_launched{step}"]
            assert at_first >= 2  # spare's two buckets (first in order) started with the first gradient
            assert at_last == count  # skipped layer's buckets did not hold back the later ones


def test_no_rebuild_with_find_unused_parameters(runs):
    assert bool(runs[0]["branch_buckets_kept"]) and bool(runs[1]["branch_buckets_kept"])


def test_buckets_rebuilt_in_rank0_ready_order_on_every_rank(runs):
    r0, r1 = runs
    assert list(r0["shuffled_buckets_initial"]) == [6]  # PyTorch: one bucket for the first step
    order0, order1 = r0["shuffled_ready_order"], r1["shuffled_ready_order"]
    assert sorted(order0) == list(range(6)) and list(order0) != list(order1)  # the ranks' orders differ
    sizes = [p.numel() for p in _worker_namespace()["Shuffled"]().parameters()]
    cap = int(1e-4 * 1024 * 1024)
    expected, _ = torch.distributed._compute_bucket_assignment_by_size(
        [torch.zeros(sizes[i]) for i in order0], [cap, cap], [False] * 6, [int(i) for i in order0])
    for run in runs:
        assert list(run["shuffled_buckets_rebuilt"]) == [len(b) for b in expected]
        assert list(run["shuffled_buckets_rebuilt_members"]) == [i for b in expected for i in b]
        np.testing.assert_array_equal(run["shuffled_buckets_final"], run["shuffled_buckets_rebuilt_members"])


def test_rebuild_leaves_training_unchanged(runs):
    for step, grads, weights in _single_process(runs, "shuffled", _worker_namespace()["Shuffled"]()):
        for run in runs:
            np.testing.assert_allclose(run[f"shuffled_grads{step}"], grads, rtol=1e-5, atol=1e-6,
                                       err_msg=f"step {step}")
            np.testing.assert_allclose(run[f"shuffled_weights{step}"], weights, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(runs[0][f"shuffled_weights{step}"], runs[1][f"shuffled_weights{step}"])


def test_no_sync_gradient_of_a_parameter_the_synced_pass_skips_is_averaged(runs):
    """As in PyTorch: a parameter used in a no_sync() pass counts as used; its accumulated `.grad` is reduced
    even though the synced pass's graph does not reach it."""
    ns = _worker_namespace()
    np.testing.assert_array_equal(runs[0]["branch_accum_grads"], runs[1]["branch_accum_grads"])
    model = ns["Branchy"]()
    set_flat_parameters(model, runs[0][f"branch_weights{STEPS - 1}"])
    loss_fn = tc.nn.CrossEntropyLoss()
    total = 0
    for run in runs:
        for name in ("accum_local", "accum_synced"):
            total = total + loss_fn(model(tc.tensor(run[f"branch_{name}_x"])), tc.tensor(run[f"branch_{name}_y"]))
    (total / 2).backward()
    expected = ns["grads"](model)
    assert not np.isnan(expected[:-12]).any()  # every layer but `spare` has a gradient
    np.testing.assert_allclose(runs[0]["branch_accum_grads"], expected, rtol=1e-5, atol=1e-6)
