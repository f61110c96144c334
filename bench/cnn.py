"""Training-step speed of a small CNN: tinygrad_course vs PyTorch (CPU), interleaved in one run.

Model: Conv2d(1,16,3)-ReLU-MaxPool2d(2)-Conv2d(16,32,3)-ReLU-MaxPool2d(2)-Flatten-Linear(32*5*5,10) on
28x28 inputs, batch 64, float32, cross-entropy, Adam. One step = zero_grad + forward + backward + step.

    python bench/cnn.py [--rounds 7] [--steps 10] [--profile]

PyTorch gets as many threads as this process may use (len(os.sched_getaffinity(0))). `--profile` prints
tinygrad_course's time per op (tc.profiler) to show where a step spends its time.
"""
from __future__ import annotations

import argparse
import os
import platform

import numpy as np
import torch

import tinygrad_course as tc
from _timing import interleaved_medians

BATCH = 64


def _layers(nn):
    return nn.Sequential(nn.Conv2d(1, 16, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(16, 32, 3), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 5 * 5, 10))


def weights(seed=0):
    torch.manual_seed(seed)
    return [p.detach().numpy().copy() for p in _layers(torch.nn).parameters()]


def data(n=4, seed=1, batch=BATCH):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((batch, 1, 28, 28)).astype(np.float32), rng.integers(0, 10, batch)) for _ in range(n)]


def make(lib, ws, batch=BATCH):
    """One training step `step(i)` of the CNN in `lib` (tinygrad_course or torch), returning the loss."""
    nn = lib.nn
    model = _layers(nn)
    with lib.no_grad():
        for p, w in zip(model.parameters(), ws):
            p.copy_(lib.from_numpy(w.copy()))
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    batches = [(lib.from_numpy(x), lib.from_numpy(y)) for x, y in data(batch=batch)]

    def step(i):
        x, y = batches[i % len(batches)]
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    return step


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    cores = len(os.sched_getaffinity(0))
    torch.set_num_threads(cores)
    ws = weights()
    runners = {"tinygrad_course": make(tc, ws), "pytorch": make(torch, ws)}
    first = {name: [step(i) for i in range(3)] for name, step in runners.items()}
    assert np.allclose(first["tinygrad_course"], first["pytorch"], rtol=1e-4), first
    med = interleaved_medians(runners, args.rounds, args.steps, warmup=3, start=10)
    print(f"CNN conv16-pool-conv32-pool-linear, 28x28, Adam, batch {BATCH}, float32 -- "
          f"{platform.processor() or platform.machine()}, {cores} cores available, torch.set_num_threads({cores})")
    for name, t in med.items():
        print(f"  {name:16s} {t * 1e3:8.3f} ms/step")
    print(f"  ratio tinygrad_course / pytorch: {med['tinygrad_course'] / med['pytorch']:.2f}x (target <= 3x)")
    if args.profile:
        with tc.profiler.profile() as prof:
            for i in range(5):
                runners["tinygrad_course"](i)
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))
    return med


if __name__ == "__main__":
    main()
