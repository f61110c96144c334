"""`tc.cpu`: the CPU as a device module, like `torch.cpu` (`is_available()`, `device_count()`,
`synchronize()`), and `tc.cpu.amp`, PyTorch's old spelling of CPU mixed precision."""
from __future__ import annotations

import importlib

__all__ = ["current_device", "device_count", "is_available", "is_initialized", "set_device", "synchronize"]


def is_available() -> bool:
    """True: the CPU is always there."""
    return True


def is_initialized() -> bool:
    return True


def device_count() -> int:
    """1, as in PyTorch."""
    return 1


def current_device() -> str:
    return "cpu"


def set_device(device) -> None:
    """Does nothing (there is one CPU device), as in PyTorch."""


def synchronize(device=None) -> None:
    """Does nothing: CPU work is finished when a call returns."""


def __getattr__(name):
    if name == "amp":  # `tc.cpu.amp` (the old mixed-precision spelling) sits above this layer
        return importlib.import_module(".amp", __name__)
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")
