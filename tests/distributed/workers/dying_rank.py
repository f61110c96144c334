"""Rank 1 misbehaves after one good all_reduce; rank 0 must not wait forever.

Modes: stuck (rank 1 sleeps), crash (rank 1 exits with code 3 without finalising MPI),
raise (rank 1 raises an uncaught error), exit0 (rank 1 leaves early with status 0).
"""
import datetime
import os
import sys
import time

import tinygrad_course as tc
import tinygrad_course.distributed as dist

mode = sys.argv[1]
dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=float(sys.argv[2])))
rank = dist.get_rank()
t = tc.ones(4)
dist.all_reduce(t)
print(f"rank {rank} finished the first all_reduce", flush=True)
if rank == 1:
    if mode == "stuck":
        time.sleep(600)
    elif mode == "crash":
        os._exit(3)
    elif mode == "raise":
        raise ValueError("rank 1 fails on purpose")
    elif mode == "exit0":
        sys.exit(0)
dist.all_reduce(t)
print(f"rank {rank} UNEXPECTEDLY finished the second all_reduce", flush=True)
