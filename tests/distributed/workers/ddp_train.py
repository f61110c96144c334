"""Train a small MLP with DistributedDataParallel + DistributedSampler; save every rank's weights per step.

Usage: ddp_train.py OUT_DIR STEPS BATCH. Each rank writes OUT_DIR/rank{R}.npz with an array
`step{k}` (all parameters flattened) after each optimizer step, plus the initial weights `step-1`.
"""
import datetime
import sys

import numpy as np

import tinygrad_course as tc
import tinygrad_course.distributed as dist
from tinygrad_course.nn.parallel import DistributedDataParallel
from tinygrad_course.utils.data import DataLoader, DistributedSampler, TensorDataset

out_dir, steps, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=30))
rank, world = dist.get_rank(), dist.get_world_size()


def make_model():
    return tc.nn.Sequential(tc.nn.Linear(5, 16), tc.nn.Tanh(), tc.nn.Linear(16, 3))


def make_data():
    rng = np.random.default_rng(42)
    X = rng.standard_normal((64, 5)).astype(np.float32)
    y = (X @ rng.standard_normal((5, 3))).argmax(1)
    return TensorDataset(tc.tensor(X), tc.tensor(y))


tc.manual_seed(1000 + rank)  # deliberately different on each rank: DDP must start from rank 0's weights
model = make_model()
ddp = DistributedDataParallel(model)
assert ddp.module is model
opt = tc.optim.SGD(ddp.parameters(), lr=0.5, momentum=0.9)
data = make_data()
sampler = DistributedSampler(data, shuffle=True, seed=7)
loader = DataLoader(data, batch_size=batch, sampler=sampler)
loss_fn = tc.nn.CrossEntropyLoss()


def flat():
    return np.concatenate([p.detach().numpy().ravel() for p in model.parameters()])


saved = {"step-1": flat()}
step = 0
epoch = 0
while step < steps:
    sampler.set_epoch(epoch)
    for xb, yb in loader:
        opt.zero_grad()
        loss_fn(ddp(xb), yb).backward()
        opt.step()
        saved[f"step{step}"] = flat()
        step += 1
        if step == steps:
            break
    epoch += 1

# gradient accumulation: no_sync() defers the all-reduce to the next synced backward
opt.zero_grad()
xb, yb = next(iter(loader))
with ddp.no_sync():
    loss_fn(ddp(xb[:2]), yb[:2]).backward()
local = [p.grad.numpy().copy() for p in model.parameters()]
loss_fn(ddp(xb[2:]), yb[2:]).backward()
saved["accumulated_grads"] = np.concatenate([p.grad.numpy().ravel() for p in model.parameters()])
saved["accum_x"], saved["accum_y"] = xb.numpy(), yb.numpy()
saved["no_sync_local_grads"] = np.concatenate([g.ravel() for g in local])
np.savez(f"{out_dir}/rank{rank}.npz", **saved)
dist.destroy_process_group()
print(f"rank {rank} done", flush=True)
