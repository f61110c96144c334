"""Devices and their array modules: NumPy for "cpu", CuPy for "cuda".

This is the only module that imports CuPy. Everything else asks a tensor for its array module
(`tensor._xp`) so that one code path serves both devices.
"""
from __future__ import annotations

import numpy as np

_cupy = None
_cupy_checked = False


def cupy_module():
    """CuPy if it is installed and sees a GPU, else None (never raises)."""
    global _cupy, _cupy_checked
    if not _cupy_checked:
        _cupy_checked = True
        try:
            import cupy

            if cupy.cuda.runtime.getDeviceCount() > 0:
                _cupy = cupy
        except Exception:
            _cupy = None
    return _cupy


class device:
    """A device, like `torch.device`: `device("cpu")`, `device("cuda")`, `device("cuda", 0)`, `device("cuda:1")`."""

    __slots__ = ("type", "index")

    def __new__(cls, type_or_str, index=None):
        if isinstance(type_or_str, device):
            return type_or_str
        if isinstance(type_or_str, int):
            type_or_str, index = "cuda", type_or_str
        s = str(type_or_str)
        if ":" in s:
            s, idx = s.split(":", 1)
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was passed explicitly: {type_or_str}")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type_or_str}'")
            index = int(idx)
        if s not in ("cpu", "cuda"):
            raise RuntimeError(
                f"Expected one of cpu, cuda device type at start of device string: {type_or_str}"
            )
        self = object.__new__(cls)
        object.__setattr__(self, "type", s)
        object.__setattr__(self, "index", index)
        return self

    def __setattr__(self, name, value):
        raise AttributeError("device objects are immutable")

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (str(self),))


CPU = device("cpu")


_default_device = None  # set by set_default_device; None means the CPU


def set_default_device(d) -> None:
    """Make factory functions (`tc.tensor`, `tc.zeros`, layers' parameters, ...) create tensors on `d`
    when no `device=` is given, like `torch.set_default_device`; `None` or "cpu" restores the CPU."""
    global _default_device
    _default_device = None if d is None or device(d).type == "cpu" else canonical_device(d)


def get_default_device() -> device:
    """The device factory functions use when no `device=` is given, like `torch.get_default_device`."""
    return _default_device or CPU


def requested_device(d):
    """The device a factory was asked for: `d` made concrete, or the default device if one was set with
    `set_default_device` (else None, so that `tc.tensor(data)` keeps `data`'s device)."""
    return canonical_device(d) if d is not None else _default_device


def canonical_device(d) -> device:
    """A concrete device: `None` -> the default device (cpu unless changed); "cuda" -> cuda:<current>.
    Raises if CUDA is unavailable."""
    if d is None:
        return _default_device or CPU
    d = device(d)
    if d.type == "cpu":
        return CPU
    cp = cupy_module()
    if cp is None:
        raise RuntimeError(
            "Torch not compiled with CUDA enabled: no CUDA device is available here (CuPy is missing or "
            "found no GPU). Hint: use device='cpu', or check tc.cuda.is_available() first."
        )
    index = d.index if d.index is not None else cp.cuda.runtime.getDevice()
    return device("cuda", index)


def array_module(d: device):
    """The array module (numpy or cupy) that holds data on device `d`."""
    if d.type == "cpu":
        return np
    return cupy_module()


def device_of_array(arr) -> device:
    """The device an array lives on."""
    if isinstance(arr, np.ndarray):
        return CPU
    dev = getattr(arr, "device", None)
    if dev is not None and hasattr(dev, "id"):
        return device("cuda", dev.id)
    return CPU


def check_dtype_on_device(np_dtype, d: device):
    """Raise a clear error for dtypes CuPy cannot hold (bfloat16) on a GPU."""
    if d.type == "cuda" and np.dtype(np_dtype).name == "bfloat16":
        raise RuntimeError(
            "bfloat16 tensors cannot live on cuda here: CuPy has no bfloat16 arrays. Hint: use tc.float16 on the "
            "GPU (tc.autocast('cuda') does), or keep bfloat16 tensors on the CPU."
        )


def to_device_array(arr, d: device):
    """Copy an array onto device `d` (no copy if it already lives there)."""
    check_dtype_on_device(arr.dtype, d)
    src = device_of_array(arr)
    if src == d:
        return arr
    cp = cupy_module()
    if d.type == "cpu":
        return cp.asnumpy(arr)
    with cp.cuda.Device(d.index):
        return cp.asarray(arr)
