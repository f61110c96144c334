"""Helpers shared by the op families: operand preparation, device checks, dim normalisation."""
from __future__ import annotations

import numbers

import numpy as np

from .. import dtypes as _dt
from ..autograd.grad_mode import _state  # noqa: F401  (re-exported for ops that branch on grad mode)
from ..dtypes import TYPE_NAMES, type_name  # noqa: F401  (re-exported for the ops' error messages)
from ..factories import tensor as _tensor
from ..shapes import (  # noqa: F401
    BROADCAST_HINT,
    broadcast_shapes_checked,
    normalize_dim,
    normalize_dims,
)
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


def binary_operands(a, b, float_only=False):
    """Arrays of `a` and `b` converted to their PyTorch result dtype (and that dtype)."""
    da = getattr(a, "_data", None)
    db = getattr(b, "_data", None)
    if da is not None:
        rd = a.dtype
        # the common cases first, with nothing to convert: two tensors of one dtype on one device, and a
        # float tensor with a Python float
        if (b.dtype is rd and a._device is b._device) if db is not None else (
                type(b) is float and rd.category == 2):
            if float_only and rd.category != 2:
                rd = _dt.float_result(rd)
                return da.astype(rd.np_dtype), db.astype(rd.np_dtype), rd
            return da, (b if db is None else db), rd
    ta = da is not None
    tb = db is not None
    if ta and tb:
        check_same_device(a, b)
        rd = a.dtype if a.dtype is b.dtype else _dt.result_type(a, b)
        xp = a._xp
        if a._device is not b._device and a._device != b._device:
            return _with_cpu_scalar(a, b, _dt.float_result(rd) if float_only else rd)
    elif ta and type(b) in _dt.PYTHON_SCALARS:  # the most common mixed case: tensor (op) number
        rd = _dt.with_python_scalar(a.dtype, b)
        xp = a._xp
    else:
        rd = _dt.result_type(a, b)
        xp = (a if ta else b)._xp if ta or tb else None  # two numbers (tc.where(cond, 1.0, 0.0))
    if float_only:
        rd = _dt.float_result(rd)
    return as_array(a, rd, xp), as_array(b, rd, xp), rd


def _with_cpu_scalar(a, b, rd):
    """Operands where one tensor is a 0-d CPU tensor and the other lives on a GPU: as in PyTorch, the CPU
    value takes part as a scalar (a NumPy scalar, which CuPy accepts) and the result lives on the GPU."""
    xa, xb = as_array(a, rd, a._xp), as_array(b, rd, b._xp)
    if a._device.type == "cpu":
        return xa[()], xb, rd
    return xa, xb[()], rd


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
