"""Per-op overhead of the framework against PyTorch on tiny tensors (issue 2, "Speed").

Both frameworks run the same small autograd loop on 100-element float32 tensors: seven
element-wise ops and one reduction forward, then `backward()`. With tensors this small the array
math is negligible, so the time per op is the framework's bookkeeping (building the graph,
dtype/broadcast checks, running the backward nodes). Rounds alternate between the two frameworks
(interleaved, in one process) so that machine load affects both alike; the best round of each
is reported, with the ratio. Target: tc <= 3x PyTorch.

Run: .venv/bin/python bench/op_overhead.py [--rounds 15] [--iters 300]
"""
import argparse
import platform
import time

import numpy as np
import torch

import tinygrad_course as tc

OPS_PER_ITER = 8  # forward ops in `step` (7 element-wise + 1 reduction)


def step(x, w, b):
    """One iteration: forward through 8 ops, then backward."""
    h = x * w + b          # mul, add
    a = h.tanh()           # tanh
    y = a * a - x          # mul, sub
    z = y.exp() / 2.0      # exp, div
    s = z.sigmoid()        # sigmoid
    loss = s.sum()         # reduction
    loss.backward()
    return loss


def make_inputs(fw):
    rng = np.random.default_rng(0)
    data = [rng.standard_normal(100).astype(np.float32) for _ in range(3)]
    return tuple(fw.tensor(d, requires_grad=True) for d in data)


def time_round(fw, inputs, iters):
    """Seconds per iteration for one round (grads reset between iterations, as in training)."""
    start = time.perf_counter()
    for _ in range(iters):
        for t in inputs:
            t.grad = None
        step(*inputs)
    return (time.perf_counter() - start) / iters


def check_same_gradients(tc_inputs, torch_inputs):
    for t in tc_inputs + torch_inputs:
        t.grad = None
    step(*tc_inputs)
    step(*torch_inputs)
    for a, b in zip(tc_inputs, torch_inputs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-6)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--iters", type=int, default=300)
    args = parser.parse_args()
    torch.set_num_threads(1)

    tc_inputs, torch_inputs = make_inputs(tc), make_inputs(torch)
    check_same_gradients(tc_inputs, torch_inputs)
    time_round(tc, tc_inputs, 20)  # warm-up
    time_round(torch, torch_inputs, 20)
    ours, theirs = [], []
    for _ in range(args.rounds):
        ours.append(time_round(tc, tc_inputs, args.iters))
        theirs.append(time_round(torch, torch_inputs, args.iters))
    best_tc, best_torch = min(ours), min(theirs)
    print(f"machine: {platform.processor() or platform.machine()}, python {platform.python_version()}, "
          f"numpy {np.__version__}, torch {torch.__version__}")
    print(f"loop: {OPS_PER_ITER} ops forward + backward on 100-element float32 tensors; "
          f"{args.rounds} interleaved rounds x {args.iters} iterations, best round")
    print(f"tc     : {best_tc * 1e6:8.1f} us/iteration  {best_tc / OPS_PER_ITER * 1e6:6.1f} us/op")
    print(f"PyTorch: {best_torch * 1e6:8.1f} us/iteration  {best_torch / OPS_PER_ITER * 1e6:6.1f} us/op")
    print(f"ratio tc / PyTorch: {best_tc / best_torch:.2f}x (target <= 3x); "
          f"median-round ratio {np.median(ours) / np.median(theirs):.2f}x")


if __name__ == "__main__":
    main()
