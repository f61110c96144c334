"""`tc.backends.cudnn`: `enabled`, `benchmark`, `deterministic`, `allow_tf32`, as module attributes.

There is no cuDNN here: `is_available()` is False and `version()` None, as in a CPU build of PyTorch;
the flags keep PyTorch's defaults and whatever a program assigns."""
from __future__ import annotations

import contextlib
import sys

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True
benchmark_limit = 10

__all__ = [
    "allow_tf32",
    "benchmark",
    "benchmark_limit",
    "deterministic",
    "enabled",
    "flags",
    "is_available",
    "version",
]


def is_available() -> bool:
    """False: the framework has no cuDNN."""
    return False


def version():
    """None: no cuDNN is linked."""
    return


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, deterministic=False, allow_tf32=True):
    """Set the flags inside a `with` block and restore them after, like `torch.backends.cudnn.flags`."""
    mod = sys.modules[__name__]
    names = ("enabled", "benchmark", "deterministic", "allow_tf32")
    old = {n: getattr(mod, n) for n in names}
    for n, v in zip(names, (enabled, benchmark, deterministic, allow_tf32)):
        setattr(mod, n, v)
    try:
        yield
    finally:
        for n, v in old.items():
            setattr(mod, n, v)
