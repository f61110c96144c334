"""DDP used wrongly on 2 ranks; the job must stop with a clear error.

Modes: model (the ranks build different models); branch (the ranks' forward passes use different
parameters of the same sizes, without find_unused_parameters: an unused-parameter error);
swapped_backward (two DDP models whose backward passes run in a different order on each rank: the
ranks' bucket all-reduces pair up wrongly and the bucket check catches it).
"""
import datetime
import sys

import tinygrad_course as tc
import tinygrad_course.distributed as dist
from tinygrad_course.nn.parallel import DistributedDataParallel

mode = sys.argv[1]
dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=20))
rank = dist.get_rank()


class TwoBranches(tc.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = tc.nn.Linear(3, 3)
        self.b = tc.nn.Linear(3, 3)

    def forward(self, x):
        return self.a(x) if rank == 0 else self.b(x)


class Vectors(tc.nn.Module):
    """`count` parameters of 4 values each: with a tiny bucket cap, one bucket of 4 (+2 check) values per parameter."""

    def __init__(self, count):
        super().__init__()
        self.count = count
        for i in range(count):
            setattr(self, f"v{i}", tc.nn.Parameter(tc.ones(4)))

    def forward(self, x):
        out = x
        for i in range(self.count):
            out = out * getattr(self, f"v{i}")
        return out


if mode == "model":
    DistributedDataParallel(tc.nn.Linear(3, 4 if rank == 0 else 5))
elif mode == "branch":
    ddp = DistributedDataParallel(TwoBranches())
    ddp(tc.ones(2, 3)).sum().backward()
else:
    two = DistributedDataParallel(Vectors(2), bucket_cap_mb=1e-6)
    one = DistributedDataParallel(Vectors(1), bucket_cap_mb=1e-6)
    x = tc.ones(4)
    two(x).sum().backward()  # first step: the same order on both ranks (buckets are rebuilt after it)
    one(x).sum().backward()
    a, b = two(x).sum(), one(x).sum()
    for loss in ((a, b) if rank == 0 else (b, a)):
        loss.backward()
print(f"rank {rank} UNEXPECTEDLY finished", flush=True)
