"""Training-step speed of the seed lab's MLP: tinygrad_course vs PyTorch (CPU) vs hand-written NumPy.

Model: 784-256-256-10 with ReLU, cross-entropy loss, Adam (lr 1e-3), batch 64, float32. One step is
zero_grad + forward + loss + backward + optimizer step. The three implementations run interleaved in
rounds (so machine load affects them alike); the script prints median per-step times and the ratios.

    python bench/mlp.py [--rounds 7] [--steps 50]

PyTorch gets as many threads as this process may use (len(os.sched_getaffinity(0))), the same cores
NumPy's BLAS uses.
"""
from __future__ import annotations

import argparse
import os
import platform

import numpy as np
import torch

import tinygrad_course as tc
from _timing import interleaved_medians

SIZES = [784, 256, 256, 10]
BATCH = 64


def init_weights(seed=0):
    rng = np.random.default_rng(seed)
    ws = []
    for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:]):
        bound = 1 / np.sqrt(fan_in)
        ws.append(rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32))
        ws.append(rng.uniform(-bound, bound, fan_out).astype(np.float32))
    return ws


def batches(n, seed=1, batch=BATCH):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((batch, 784)).astype(np.float32), rng.integers(0, 10, batch)) for _ in range(n)]


# ---- tinygrad_course and PyTorch (the same code: the API is the same) ------------------------------------
def make_step(lib, weights, batch=BATCH):
    """One training step `step(i)` of the MLP in `lib` (tinygrad_course or torch), returning the loss tensor."""
    nn = lib.nn
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
    with lib.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(lib.from_numpy(w.copy()))
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    data = [(lib.from_numpy(x), lib.from_numpy(y)) for x, y in batches(8, batch=batch)]

    def step(i):
        x, y = data[i % len(data)]
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def make_tc(weights):
    return make_step(tc, weights), None


def make_torch(weights):
    return make_step(torch, weights), None


# ---- hand-written NumPy -------------------------------------------------------------------------
def make_numpy(weights):
    params = [w.copy() for w in weights]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    t = [0]
    data = batches(8)
    lr, b1, b2, eps = 1e-3, 0.9, 0.999, 1e-8

    def step(i):
        x, y = data[i % len(data)]
        W1, b1_, W2, b2_, W3, b3 = params
        h1 = x @ W1.T + b1_
        a1 = np.maximum(h1, 0)
        h2 = a1 @ W2.T + b2_
        a2 = np.maximum(h2, 0)
        logits = a2 @ W3.T + b3
        shifted = logits - logits.max(1, keepdims=True)
        logp = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
        loss = -logp[np.arange(BATCH), y].mean()
        d = np.exp(logp)
        d[np.arange(BATCH), y] -= 1
        d /= BATCH
        gW3, gb3 = d.T @ a2, d.sum(0)
        d = (d @ W3) * (h2 > 0)
        gW2, gb2 = d.T @ a1, d.sum(0)
        d = (d @ W2) * (h1 > 0)
        gW1, gb1 = d.T @ x, d.sum(0)
        t[0] += 1
        c1, c2 = 1 - b1 ** t[0], 1 - b2 ** t[0]
        for p, g, mi, vi in zip(params, [gW1, gb1, gW2, gb2, gW3, gb3], m, v):
            mi *= b1
            mi += (1 - b1) * g
            vi *= b2
            vi += (1 - b2) * g * g
            p -= (lr / c1) * mi / (np.sqrt(vi) / np.sqrt(c2) + eps)
        return loss

    return step, params


def _value(loss) -> float:
    return float(loss.item()) if hasattr(loss, "item") else float(loss)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args(argv)
    cores = len(os.sched_getaffinity(0))
    torch.set_num_threads(cores)
    weights = init_weights()
    runners = {"tinygrad_course": make_tc(weights)[0], "pytorch": make_torch(weights)[0],
               "numpy": make_numpy(weights)[0]}
    # correctness: a few identical steps give the same loss everywhere
    losses = {name: [_value(step(i)) for i in range(3)] for name, step in runners.items()}
    for name, ls in losses.items():
        assert np.allclose(ls, losses["pytorch"], rtol=1e-4), (name, ls, losses["pytorch"])
    med = interleaved_medians(runners, args.rounds, args.steps, warmup=10, start=100)
    print(f"MLP 784-256-256-10, Adam, batch {BATCH}, float32 -- {platform.processor() or platform.machine()}, "
          f"{cores} cores available, torch.set_num_threads({cores}), numpy {np.__version__}, torch {torch.__version__}")
    for name, t in med.items():
        print(f"  {name:16s} {t * 1e3:8.3f} ms/step")
    print(f"  ratio tinygrad_course / pytorch: {med['tinygrad_course'] / med['pytorch']:.2f}x (target <= 1.3x)")
    print(f"  ratio tinygrad_course / numpy:   {med['tinygrad_course'] / med['numpy']:.2f}x")
    return med


if __name__ == "__main__":
    main()
