"""DistributedDataParallel with graphs that differ between ranks or from the registration order, on 2 ranks.

Usage: ddp_dynamic.py OUT_DIR STEPS. Each rank writes OUT_DIR/rank{R}.npz with:
- branch_*: a model whose batch decides whether a layer runs (find_unused_parameters=True); per step the
  inputs, every parameter's gradient after backward (NaN where `.grad` is None) and the weights after the
  SGD step, and how many buckets had started their all-reduce at the first and last gradient of backward;
  then a no_sync() pass that uses the layer followed by a synced pass that skips it (branch_accum_*);
- shuffled_*: a model that registers its layers in another order than it uses them, and computes two
  branches in a different order on each rank; the ready order this rank saw, the buckets before and after
  the rebuild, gradients and weights per step.
"""
import datetime
import sys

import numpy as np

import tinygrad_course as tc
import tinygrad_course.distributed as dist
from tinygrad_course.nn.parallel import DistributedDataParallel

out_dir, steps = sys.argv[1], int(sys.argv[2])
dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=30))
rank = dist.get_rank()


class Branchy(tc.nn.Module):
    """`skip` runs only for batches whose first value is positive; `spare` never runs."""

    def __init__(self):
        super().__init__()
        self.inp = tc.nn.Linear(5, 8)
        self.skip = tc.nn.Linear(8, 8)
        self.out = tc.nn.Linear(8, 3)
        self.spare = tc.nn.Linear(3, 3)

    def forward(self, x):
        h = self.inp(x).tanh()
        if x[0, 0].item() > 0:
            h = self.skip(h).tanh()
        return self.out(h)


class Shuffled(tc.nn.Module):
    """Registered head-first, used head-last; rank 0 builds `left` before `right`, rank 1 the other way."""

    def __init__(self):
        super().__init__()
        self.head = tc.nn.Linear(8, 3)
        self.left = tc.nn.Linear(5, 8)
        self.right = tc.nn.Linear(5, 8)

    def forward(self, x):
        if rank == 0:
            left = self.left(x)
            right = self.right(2 * x)
        else:
            right = self.right(2 * x)
            left = self.left(x)
        return self.head((left + right).tanh())


def uses_skip(step, r):
    """Both ranks, only rank 0, only rank 1, neither: in turn."""
    return {0: True, 1: r == 0, 2: r == 1, 3: False}[step % 4]


def batch(step, r, name):
    rng = np.random.default_rng([step, r, len(name)])
    x = rng.standard_normal((4, 5)).astype(np.float32)
    x[0, 0] = abs(x[0, 0]) + 0.1 if uses_skip(step, r) else -abs(x[0, 0]) - 0.1
    return x, rng.integers(0, 3, 4)


def grads(model):
    return np.concatenate([np.full(p.numel(), np.nan, np.float32) if p.grad is None else p.grad.numpy().ravel()
                           for p in model.parameters()])


def weights(model):
    return np.concatenate([p.detach().numpy().ravel() for p in model.parameters()])


def members(ddp):
    return [list(b.members) for b in ddp.reducer.buckets]


saved = {}
loss_fn = tc.nn.CrossEntropyLoss()

# ---- a data-dependent branch with find_unused_parameters=True ----------------------------------------
tc.manual_seed(rank)  # DDP starts every rank from rank 0's weights
model = Branchy()
ddp = DistributedDataParallel(model, find_unused_parameters=True, bucket_cap_mb=1e-6)
opt = tc.optim.SGD(ddp.parameters(), lr=0.3, momentum=0.9)
buckets_before = members(ddp)
trace = []
for p in model.parameters():  # registered after DDP's hooks, so they run after DDP has marked the parameter
    p.register_hook(lambda g: trace.append(len(ddp.reducer.launched)))
saved["branch_init"] = weights(model)
for step in range(steps):
    x, y = batch(step, rank, "branch")
    saved[f"branch_x{step}"], saved[f"branch_y{step}"] = x, y
    opt.zero_grad()
    trace.clear()
    loss_fn(ddp(tc.tensor(x)), tc.tensor(y)).backward()
    saved[f"branch_launched{step}"] = np.array([trace[0], trace[-1], len(ddp.reducer.buckets)])
    saved[f"branch_grads{step}"] = grads(model)
    opt.step()
    saved[f"branch_weights{step}"] = weights(model)
saved["branch_buckets_kept"] = np.array(members(ddp) == buckets_before)
# no_sync(): `skip` runs only in the local pass, so the synced pass finds it unused but reduces its `.grad`
opt.zero_grad()
for k, name in enumerate(("accum_local", "accum_synced")):
    x, y = batch(k, rank, name)
    x[0, 0] = 1.0 if name == "accum_local" else -1.0
    saved[f"branch_{name}_x"], saved[f"branch_{name}_y"] = x, y
    if name == "accum_local":
        with ddp.no_sync():
            loss_fn(ddp(tc.tensor(x)), tc.tensor(y)).backward()
    else:
        loss_fn(ddp(tc.tensor(x)), tc.tensor(y)).backward()
saved["branch_accum_grads"] = grads(model)

# ---- the one-time bucket rebuild in gradient-ready order --------------------------------------------
tc.manual_seed(10 + rank)
model = Shuffled()
ddp = DistributedDataParallel(model, bucket_cap_mb=1e-4)
opt = tc.optim.SGD(ddp.parameters(), lr=0.3, momentum=0.9)
order = []
for i, p in enumerate(model.parameters()):
    p.register_hook(lambda g, i=i: order.append(i))
saved["shuffled_init"] = weights(model)
saved["shuffled_buckets_initial"] = np.array([len(b) for b in members(ddp)])
for step in range(steps):
    x, y = batch(step, rank, "shuffled")
    saved[f"shuffled_x{step}"], saved[f"shuffled_y{step}"] = x, y
    opt.zero_grad()
    order.clear()
    out = ddp(tc.tensor(x))
    if step == 1:  # the forward after the first backward rebuilt the buckets
        saved["shuffled_buckets_rebuilt"] = np.array([len(b) for b in members(ddp)])
        saved["shuffled_buckets_rebuilt_members"] = np.concatenate(members(ddp))
    loss_fn(out, tc.tensor(y)).backward()
    if step == 0:
        saved["shuffled_ready_order"] = np.array(order)
    saved[f"shuffled_grads{step}"] = grads(model)
    opt.step()
    saved[f"shuffled_weights{step}"] = weights(model)
saved["shuffled_buckets_final"] = np.concatenate(members(ddp))

np.savez(f"{out_dir}/rank{rank}.npz", **saved)
dist.destroy_process_group()
print(f"rank {rank} done", flush=True)
