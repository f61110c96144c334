"""Training-step speed on a GPU: tinygrad_course (CuPy) against PyTorch CUDA, in one run (issue 8).

Two models, batch 512, one full step each (zero_grad, forward, cross-entropy, backward, Adam step):
  MLP  784 -> 512 -> 256 -> 10 (ReLU)                              target: tc <= 2x PyTorch CUDA
  CNN  conv(1->32, 3x3) ReLU maxpool, conv(32->64, 3x3) ReLU maxpool,
       linear(64*7*7 -> 128) ReLU, linear(128 -> 10), on 28x28 images   target: tc <= 4x PyTorch CUDA
Both frameworks start from the same weights and data, which already sit on the GPU (the timing is the
step, not the transfer). Every timed region ends with a device synchronize (GPU work is asynchronous:
without it the clock stops when the kernels are queued, not when they finish). Rounds alternate between
the frameworks so that clock boosts and other load affect both alike; the best round of each is reported.
`--amp` adds a float16 autocast + GradScaler variant of each model.

Run on a GPU machine:  python bench/gpu.py [--rounds 7] [--steps 20] [--amp]
`--dry-run` runs the same harness on the CPU with tiny sizes (checks the script, measures nothing useful).
"""
import argparse
import datetime
import platform
import sys
import time

import numpy as np

import tinygrad_course as tc

TARGETS = {"MLP": 2.0, "CNN": 4.0}


# ---- the two models, written once per framework -----------------------------------------------------------
def build(fw, name, rng, scale=1):
    """(model, x, y) for framework `fw` (tinygrad_course or torch); weights come from `rng` in both."""
    nn = fw.nn
    if name == "MLP":
        model = nn.Sequential(nn.Linear(784, 512 // scale), nn.ReLU(), nn.Linear(512 // scale, 256 // scale),
                              nn.ReLU(), nn.Linear(256 // scale, 10))
    else:
        c1, c2 = 32 // scale, 64 // scale
        model = nn.Sequential(nn.Conv2d(1, c1, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Conv2d(c1, c2, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                              nn.Linear(c2 * 7 * 7, 128 // scale), nn.ReLU(), nn.Linear(128 // scale, 10))
    with fw.no_grad():
        for p in model.parameters():
            p.copy_(fw.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.05))
    return model


def batch(name, batch_size, seed=0):
    rng = np.random.default_rng(seed)
    shape = (batch_size, 784) if name == "MLP" else (batch_size, 1, 28, 28)
    return rng.standard_normal(shape).astype(np.float32), rng.integers(0, 10, batch_size)


class Runner:
    """One framework's model, optimizer and batch on one device, with a `step()` and a `sync()`."""

    def __init__(self, fw, name, device, batch_size, amp, scale=1):
        import torch.nn.functional as torch_F

        self.fw, self.amp, self.device = fw, amp, device
        self.F = tc.nn.functional if fw is tc else torch_F
        self.model = build(fw, name, np.random.default_rng(1), scale).to(device)
        self.opt = fw.optim.Adam(self.model.parameters(), lr=1e-3)
        x, y = batch(name, batch_size)
        self.x, self.y = fw.tensor(x).to(device), fw.tensor(y).to(device)
        dev_type = "cuda" if "cuda" in str(device) else "cpu"
        self.dev_type = dev_type
        self.scaler = fw.amp.GradScaler(dev_type, enabled=amp and dev_type == "cuda")

    def step(self):
        self.opt.zero_grad()
        with self.fw.autocast(self.dev_type, enabled=self.amp):
            loss = self.F.cross_entropy(self.model(self.x), self.y)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.opt)
        self.scaler.update()
        return loss

    def sync(self):
        if self.dev_type == "cuda":
            (tc.cuda if self.fw is tc else self.fw.cuda).synchronize()

    def time(self, steps):
        self.sync()
        start = time.perf_counter()
        for _ in range(steps):
            self.step()
        self.sync()
        return (time.perf_counter() - start) / steps


def compare(name, device, batch_size, rounds, steps, amp, scale=1):
    import torch

    ours = Runner(tc, name, device, batch_size, amp, scale)
    theirs = Runner(torch, name, device, batch_size, amp, scale)
    first_ours, first_theirs = ours.step().item(), theirs.step().item()
    if not np.isclose(first_ours, first_theirs, rtol=2e-2):
        print(f"  warning: first-step losses differ ({first_ours:.5f} vs {first_theirs:.5f})")
    for runner in (ours, theirs):  # warm-up: kernel compilation, allocator caches, cuBLAS handles
        for _ in range(3):
            runner.step()
    best = {"tc": float("inf"), "torch": float("inf")}
    for _ in range(rounds):
        best["tc"] = min(best["tc"], ours.time(steps))
        best["torch"] = min(best["torch"], theirs.time(steps))
    return best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--amp", action="store_true", help="also time float16 autocast + GradScaler")
    parser.add_argument("--dry-run", action="store_true", help="run the harness on the CPU with tiny sizes")
    args = parser.parse_args(argv)

    import torch

    if args.dry_run:
        device, scale, args.batch, args.rounds, args.steps = "cpu", 8, 16, 1, 1
        gpu_name = "none (dry run on the CPU)"
    else:
        if not tc.cuda.is_available():
            sys.exit("bench/gpu.py: no CUDA GPU is usable here (CuPy missing or no NVIDIA device), so there is "
                     "nothing to measure.\nRun it on a GPU machine after `pip install cupy-cuda12x` "
                     "(see docs/gpu.md), or use --dry-run to check the script on the CPU.")
        if not torch.cuda.is_available():
            sys.exit("bench/gpu.py: PyTorch was installed without CUDA support, so there is no baseline. "
                     "Install a CUDA build of torch (see docs/gpu.md).")
        device, scale = "cuda", 1
        gpu_name = tc.cuda.get_device_name()
        import cupy

        print(f"cupy {cupy.__version__}, torch {torch.__version__} (CUDA {torch.version.cuda})")
    print(f"{datetime.date.today()}  {platform.python_version()}  GPU: {gpu_name}")
    print(f"batch {args.batch}, best of {args.rounds} rounds x {args.steps} steps, Adam, cross-entropy\n")
    print(f"{'model':<10}{'tc ms/step':>12}{'torch ms/step':>15}{'ratio':>8}{'target':>8}")
    failed = []
    variants = [(name, False) for name in ("MLP", "CNN")]
    if args.amp:
        variants += [(name, True) for name in ("MLP", "CNN")]
    for name, amp in variants:
        best = compare(name, device, args.batch, args.rounds, args.steps, amp, scale)
        ratio = best["tc"] / best["torch"]
        label = name + (" amp" if amp else "")
        target = TARGETS[name]
        ok = ratio <= target
        if not ok and not amp and not args.dry_run:
            failed.append(label)
        verdict = "(dry run)" if args.dry_run else "ok" if ok else "MISSED"
        print(f"{label:<10}{best['tc'] * 1e3:>12.2f}{best['torch'] * 1e3:>15.2f}{ratio:>7.2f}x"
              f"{'<=' + str(target) + 'x':>8} {verdict}")
    if failed:
        print(f"\nmissed target: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
