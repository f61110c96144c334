"""DDP used wrongly on 2 ranks; the job must stop with a clear error.

Modes: model (the ranks build different models); branch (the ranks' forward passes use different
parameters of the same sizes: an unused-parameter error); branch_find_unused (the same with
find_unused_parameters=True, one bucket: the ranks disagree on which parameters got gradients);
branch_buckets (the same with one bucket per parameter: the ranks' bucket all-reduces pair up wrongly).
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


if mode == "model":
    DistributedDataParallel(tc.nn.Linear(3, 4 if rank == 0 else 5))
else:
    options = {"branch": {}, "branch_find_unused": {"find_unused_parameters": True},
               "branch_buckets": {"find_unused_parameters": True, "bucket_cap_mb": 1e-6}}[mode]
    ddp = DistributedDataParallel(TwoBranches(), **options)
    ddp(tc.ones(2, 3)).sum().backward()
print(f"rank {rank} UNEXPECTEDLY finished", flush=True)
