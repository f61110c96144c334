"""Data-parallel throughput: samples/s of DistributedDataParallel training on 1 vs 2 MPI processes.

Run: .venv/bin/python bench/ddp.py [--steps 30] [--batch 128] [--procs 2]
Each process trains the same MLP on its own batch of `--batch` samples per step (weak scaling, as
with DistributedSampler), so ideal scaling doubles the samples per second with 2 processes; the
printed ratio shows what is left after the gradient all-reduce and the machine's shared cores. BLAS
is pinned to one thread per process so that "1 process" really means one core.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path


def worker(steps, batch):
    import numpy as np

    import tinygrad_course as tc
    import tinygrad_course.distributed as dist

    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    tc.manual_seed(0)
    model = tc.nn.Sequential(tc.nn.Linear(256, 512), tc.nn.ReLU(), tc.nn.Linear(512, 512), tc.nn.ReLU(),
                             tc.nn.Linear(512, 10))
    ddp = tc.nn.parallel.DistributedDataParallel(model)
    opt = tc.optim.SGD(ddp.parameters(), lr=0.01)
    loss_fn = tc.nn.CrossEntropyLoss()
    rng = np.random.default_rng(rank)
    x = tc.tensor(rng.standard_normal((batch, 256)).astype(np.float32))
    y = tc.tensor(rng.integers(0, 10, batch))

    def step():
        opt.zero_grad()
        loss_fn(ddp(x), y).backward()
        opt.step()

    for _ in range(3):
        step()
    dist.barrier()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    dist.barrier()
    seconds = time.perf_counter() - t0
    if rank == 0:
        print(json.dumps({"world": world, "seconds": seconds, "samples_per_s": world * batch * steps / seconds}))
    dist.destroy_process_group()


def launch(n, steps, batch):
    mpiexec = Path(sys.executable).parent / "mpiexec"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    out = subprocess.run([str(mpiexec), "-n", str(n), sys.executable, __file__, "--worker", "--steps", str(steps),
                          "--batch", str(batch)], capture_output=True, text=True, env=env, timeout=600)
    if out.returncode != 0:
        raise SystemExit(out.stdout + out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch", type=int, default=128, help="samples per process per step")
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.steps, args.batch)
    one = launch(1, args.steps, args.batch)
    many = launch(args.procs, args.steps, args.batch)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}")
    print(f"MLP 256-512-512-10, batch {args.batch} per process, {args.steps} steps, SGD, backend mpi")
    print(f"1 process : {one['samples_per_s']:9.0f} samples/s")
    print(f"{args.procs} processes: {many['samples_per_s']:9.0f} samples/s")
    print(f"throughput ratio {args.procs} vs 1 processes: {many['samples_per_s'] / one['samples_per_s']:.2f}x "
          f"(ideal {args.procs:.2f}x)")


if __name__ == "__main__":
    main()
