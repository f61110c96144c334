"""Helpers shared by the op families: operand preparation, device checks, dim normalisation."""
from __future__ import annotations

import numbers

import numpy as np

from .. import dtypes as _dt
from ..factories import tensor as _tensor
from ..tensor_base import TensorBase


def check_same_device(a, b):
    """Raise PyTorch's error when two tensors live on different devices."""
    da, db = a._device, b._device
    if da is not db and da != db and a.ndim and b.ndim:
        raise RuntimeError(
            f"Expected all tensors to be on the same device, but found at least two devices, {da} and {db}! "
            "Hint: move the model and every batch to one device with .to(device)."
        )


_INT_BOUNDS = {d: (int(np.iinfo(d.np_dtype).min), int(np.iinfo(d.np_dtype).max))
               for d in _dt.ALL_DTYPES if d.category == 1}


def as_array(x, dt, xp):
    """The backend array of tensor `x` in dtype `dt`, or a Python scalar left as it is (a Python int
    outside an integer dtype's range wraps around, as in PyTorch, where NumPy would raise)."""
    d = getattr(x, "_data", None)
    if d is None:
        if type(x) is int and dt.category == 1:
            lo, hi = _INT_BOUNDS[dt]
            if not lo <= x <= hi:
                return np.uint64(x % 2 ** 64).astype(dt.np_dtype)  # a NumPy scalar: fine for CuPy too
        return x
    if x.dtype is dt:
        return d
    return d.astype(dt.np_dtype)


def first_out_of_range(idx, n, negative_ok=False):
    """The first entry (in order) of integer index array `idx` outside [0, n) -- or outside [-n, n) with
    `negative_ok` -- or None. Every index check uses it: NumPy wraps negative indices where PyTorch may
    refuse them, and CuPy wraps any out-of-range index around silently."""
    if not idx.size:
        return None
    bad = (idx < (-n if negative_ok else 0)) | (idx >= n)
    if not bad.any():
        return None
    return int(idx.reshape(-1)[int(bad.reshape(-1).argmax())])


_PLAIN_OPERANDS = {float, int, bool}


def operand(o):
    """A tensor or Python scalar usable in arithmetic, or None when the type is not supported."""
    if type(o) in _PLAIN_OPERANDS or isinstance(o, TensorBase):  # tensors (any subclass) and numbers
        return o
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return _tensor(o)
    if isinstance(o, numbers.Number):
        return float(o)
    return None


def as_tensor_like(x, like=None):
    """`x` as a tensor (on `like`'s device when it is not one already)."""
    if isinstance(x, TensorBase):
        return x
    return _tensor(x, device=like.device if like is not None else None)
