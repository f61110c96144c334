"""`tc.accelerator`: the device-agnostic way to pick a device (`torch.accelerator`, PyTorch 2.6+).

The only accelerator the framework knows is a CUDA GPU (through CuPy); on a machine without one
`is_available()` is False and `current_accelerator()` is None, so

    device = tc.accelerator.current_accelerator().type if tc.accelerator.is_available() else "cpu"

picks the CPU, as it does in PyTorch.
"""
from __future__ import annotations

from . import cuda as _cuda
from ._backend import device as _device

__all__ = [
    "current_accelerator",
    "current_device_idx",
    "current_device_index",
    "device_count",
    "empty_cache",
    "is_available",
    "max_memory_allocated",
    "memory_allocated",
    "memory_reserved",
    "reset_peak_memory_stats",
    "set_device_idx",
    "set_device_index",
    "synchronize",
]


def is_available() -> bool:
    """True when an accelerator (here: a CUDA GPU) can be used."""
    return _cuda.is_available()


def current_accelerator(check_available: bool = False):
    """`device("cuda")` when a GPU is present, else None (like `torch.accelerator.current_accelerator`)."""
    return _device("cuda") if _cuda.is_available() else None


def device_count() -> int:
    """Number of accelerator devices (0 without a GPU)."""
    return _cuda.device_count()


def _require():
    if not _cuda.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")


def current_device_index() -> int:
    """Index of the current accelerator device."""
    _require()
    return _cuda.current_device()


def set_device_index(device) -> None:
    """Make `device` (an index, a device or a string) the current accelerator device."""
    _require()
    _cuda.set_device(device)


current_device_idx = current_device_index
set_device_idx = set_device_index


def synchronize(device=None) -> None:
    """Wait for all queued work on the accelerator."""
    _require()
    _cuda.synchronize(device)


def empty_cache() -> None:
    """Release cached accelerator memory."""
    _cuda.empty_cache()


def memory_allocated(device_index=None) -> int:
    """Bytes held by tensors on the accelerator."""
    return _cuda.memory_allocated(device_index)


def max_memory_allocated(device_index=None) -> int:
    """Highest `memory_allocated` seen so far."""
    return _cuda.max_memory_allocated(device_index)


def memory_reserved(device_index=None) -> int:
    """Bytes reserved by the accelerator's caching allocator."""
    return _cuda.memory_reserved(device_index)


def reset_peak_memory_stats(device_index=None) -> None:
    """Forget the peak memory statistic."""
    _cuda.reset_peak_memory_stats(device_index)
