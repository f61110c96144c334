"""Gradient bucketing of DistributedDataParallel on 2 ranks; saves what test_ddp_buckets.py checks.

Usage: ddp_buckets.py OUT_DIR. Each rank writes OUT_DIR/rank{R}.npz.
"""
import datetime
import sys

import numpy as np

import tinygrad_course as tc
import tinygrad_course.distributed as dist
from tinygrad_course.nn.parallel import DistributedDataParallel

out_dir = sys.argv[1]
dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=30))
rank = dist.get_rank()


class WithSpare(tc.nn.Module):
    """An MLP plus a layer its forward never uses."""

    def __init__(self):
        super().__init__()
        self.body = tc.nn.Sequential(tc.nn.Linear(5, 16), tc.nn.Tanh(), tc.nn.Linear(16, 8), tc.nn.Tanh(),
                                     tc.nn.Linear(8, 3))
        self.spare = tc.nn.Linear(3, 3)

    def forward(self, x):
        return self.body(x)


def fresh(**options):
    tc.manual_seed(0)
    model = tc.nn.Sequential(tc.nn.Linear(5, 16), tc.nn.Tanh(), tc.nn.Linear(16, 8), tc.nn.Tanh(), tc.nn.Linear(8, 3))
    return model, DistributedDataParallel(model, **options)


def grads(model):
    return np.concatenate([p.grad.numpy().ravel() for p in model.parameters()])


rng = np.random.default_rng(rank)
x = tc.tensor(rng.standard_normal((6, 5)).astype(np.float32))
saved = {"x": x.numpy()}

# the first step runs with one bucket; the next forward rebuilds small buckets in gradient-ready order
small, ddp_small = fresh(bucket_cap_mb=1e-4)
saved["small_buckets_initial"] = np.array([len(b.members) for b in ddp_small.reducer.buckets])
ddp_small(x).square().sum().backward()
saved["first_step_grads"] = grads(small)
for p in small.parameters():
    p.grad = None
out = ddp_small(x)
saved["small_buckets"] = np.array([len(b.members) for b in ddp_small.reducer.buckets])
out.square().sum().backward()
saved["small_grads"] = grads(small)
saved["grads_contiguous_writable"] = np.array(all(p.grad._data.flags.c_contiguous and p.grad._data.flags.writeable
                                                  for p in small.parameters()))
default, ddp_default = fresh()
saved["default_buckets"] = np.array([len(b.members) for b in ddp_default.reducer.buckets])
ddp_default(x).square().sum().backward()
saved["default_grads"] = grads(default)

# no_sync across buckets: two local backward passes, then one synced one
for p in small.parameters():
    p.grad = None
with ddp_small.no_sync():
    ddp_small(x[:2]).square().sum().backward()
    ddp_small(x[2:4]).square().sum().backward()
saved["no_sync_local"] = grads(small)
ddp_small(x[4:]).square().sum().backward()
saved["no_sync_then_synced"] = grads(small)

# a parameter that gets no gradient: an error by default, None with find_unused_parameters=True
tc.manual_seed(0)
spare = WithSpare()
try:
    DistributedDataParallel(spare, bucket_cap_mb=1e-4)(x).sum().backward()
    saved["unused_error"] = np.array("no error")
except RuntimeError as e:
    saved["unused_error"] = np.array(str(e))
tc.manual_seed(0)
spare = WithSpare()  # a fresh module: the first wrapper's hooks stay on the old one's parameters
DistributedDataParallel(spare, bucket_cap_mb=1e-4, find_unused_parameters=True)(x).square().sum().backward()
saved["find_unused_spare_is_none"] = np.array([p.grad is None for p in spare.spare.parameters()])
saved["find_unused_body_grads"] = grads(spare.body)

np.savez(f"{out_dir}/rank{rank}.npz", **saved)
dist.destroy_process_group()
print(f"rank {rank} done", flush=True)
