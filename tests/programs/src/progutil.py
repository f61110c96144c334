"""Helpers the programs share (plain PyTorch code): deterministic weights and data from NumPy, so a run
with PyTorch and a run with tinygrad_course start from the same numbers."""
import numpy as np
import torch


def seed_params(model, seed=0, scale=0.3):
    """Overwrite every parameter with uniform(-scale, scale) values from a NumPy generator."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(rng.uniform(-scale, scale, size=tuple(p.shape)).astype(np.float32)))
    return model


def randn(*shape, seed=0):
    """float32 normal samples from NumPy as a tensor."""
    return torch.from_numpy(np.random.default_rng(seed).normal(size=shape).astype(np.float32))


def randint(high, *shape, seed=0):
    """int64 samples in [0, high) from NumPy as a tensor."""
    return torch.from_numpy(np.random.default_rng(seed).integers(0, high, size=shape).astype(np.int64))


def show(name, value):
    """Print a loss or metric with a fixed format."""
    print(f"{name}: {float(value):.6f}")
