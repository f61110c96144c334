"""DistributedDataParallel across 2 real MPI processes on this machine.

The weights must stay bit-identical across ranks after every step and equal a single-process run
on the combined batch (to float32 tolerance); `no_sync()` must defer the averaging.
"""
import re

import numpy as np
import pytest

import tinygrad_course as tc
from tinygrad_course.utils.data import DataLoader, DistributedSampler, TensorDataset

from mpi_launch import WORKERS, needs_mpi, run_mpi, set_flat_parameters

STEPS, BATCH = 10, 4

pytestmark = [needs_mpi]


def _load_worker_module():
    """make_model/make_data from the worker script, without running its training loop."""
    source = (WORKERS / "ddp_train.py").read_text()
    namespace = {}
    start = source.index("def make_model")
    end = source.index("tc.manual_seed(1000 + rank)")
    exec("import numpy as np\nimport tinygrad_course as tc\nfrom tinygrad_course.utils.data import TensorDataset\n"
         + source[start:end], namespace)
    return namespace["make_model"], namespace["make_data"]


def _flat(model):
    return np.concatenate([p.detach().numpy().ravel() for p in model.parameters()])


@pytest.fixture(scope="module")
def ddp_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("ddp")
    result = run_mpi("ddp_train.py", out, STEPS, BATCH, n=2, timeout=120)
    assert result.returncode == 0, result.output
    return [dict(np.load(out / f"rank{r}.npz")) for r in range(2)]


@pytest.mark.slow
def test_weights_identical_across_ranks_after_every_step(ddp_run):
    r0, r1 = ddp_run
    for k in range(-1, STEPS):
        np.testing.assert_array_equal(r0[f"step{k}"], r1[f"step{k}"], err_msg=f"ranks differ after step {k}")
    assert not np.array_equal(r0["step-1"], r0[f"step{STEPS - 1}"])  # training did move the weights


@pytest.mark.slow
def test_matches_single_process_on_combined_batch(ddp_run):
    make_model, make_data = _load_worker_module()
    tc.manual_seed(1000)  # rank 0's initialisation, which DDP broadcast to every rank
    model = make_model()
    np.testing.assert_array_equal(_flat(model), ddp_run[0]["step-1"])
    opt = tc.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    loss_fn = tc.nn.CrossEntropyLoss()
    data = make_data()
    samplers = [DistributedSampler(data, num_replicas=2, rank=r, shuffle=True, seed=7) for r in range(2)]
    step, epoch = 0, 0
    while step < STEPS:
        for s in samplers:
            s.set_epoch(epoch)
        loaders = [DataLoader(data, batch_size=BATCH, sampler=s) for s in samplers]
        for (x0, y0), (x1, y1) in zip(*loaders):
            opt.zero_grad()
            loss_fn(model(tc.cat([x0, x1])), tc.cat([y0, y1])).backward()
            opt.step()
            np.testing.assert_allclose(_flat(model), ddp_run[0][f"step{step}"], rtol=1e-5, atol=1e-6,
                                       err_msg=f"step {step}")
            step += 1
            if step == STEPS:
                break
        epoch += 1


@pytest.mark.slow
def test_no_sync_accumulates_locally_then_averages(ddp_run):
    r0, r1 = ddp_run
    assert not np.allclose(r0["no_sync_local_grads"], r1["no_sync_local_grads"])
    np.testing.assert_array_equal(r0["accumulated_grads"], r1["accumulated_grads"])
    make_model, _ = _load_worker_module()
    loss_fn = tc.nn.CrossEntropyLoss()
    per_rank = []
    for run in (r0, r1):
        model = make_model()
        set_flat_parameters(model, run[f"step{STEPS - 1}"])
        x, y = tc.tensor(run["accum_x"]), tc.tensor(run["accum_y"])
        loss_fn(model(x[:2]), y[:2]).backward()
        loss_fn(model(x[2:]), y[2:]).backward()
        per_rank.append(np.concatenate([p.grad.numpy().ravel() for p in model.parameters()]))
    np.testing.assert_allclose(r0["accumulated_grads"], np.mean(per_rank, axis=0), rtol=1e-5, atol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("mode, message", [
    ("model", "DDP expects same model across all ranks"),
    ("branch", r"Parameter indices which did not receive grad for rank \d: \d \d \(\w\.weight, \w\.bias\)"),
    ("swapped_backward", r"rank \d reduced the gradients of bucket \d while another rank reduced a different one"),
])
def test_misuse_stops_the_job_with_a_clear_error(mode, message):
    result = run_mpi("ddp_misuse.py", mode, n=2, timeout=60)
    assert result.returncode != 0
    assert re.search(message, result.output)
    assert "UNEXPECTEDLY" not in result.output
