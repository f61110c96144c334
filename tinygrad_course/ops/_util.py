"""Helpers shared by the op families: operand preparation, device checks, dim normalisation."""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import _state  # noqa: F401  (re-exported for ops that branch on grad mode)

TYPE_NAMES = {
    "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
    "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double",
}


def Tensor():
    from ..tensor import Tensor as T

    return T


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
    ta = getattr(a, "_data", None) is not None
    tb = getattr(b, "_data", None) is not None
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


def normalize_dim(dim, ndim, wrap_scalar=True):
    """A non-negative dim index; raises PyTorch's IndexError when out of range."""
    n = max(ndim, 1) if wrap_scalar else ndim
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n if n else 0


def normalize_dims(dim, ndim):
    """A sorted tuple of non-negative dims from None (all), an int or a sequence."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        return (normalize_dim(dim, ndim),) if ndim else ()
    dims = tuple(sorted(normalize_dim(d, ndim) for d in dim)) if ndim else ()
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
    return dims


def type_name(dt) -> str:
    """PyTorch's scalar-type name (Float, Long, ...) used in error messages."""
    return TYPE_NAMES[dt.name]


BROADCAST_HINT = "Hint: shapes are compared from the right; each pair of sizes must be equal or one of them 1."


def broadcast_shapes_checked(*shapes, hint=True):
    """The shape `shapes` broadcast to, or PyTorch's RuntimeError naming the right-most mismatch between the
    shapes broadcast so far ("tensor a") and the next one ("tensor b")."""
    acc = ()
    for shape in shapes:
        n = max(len(acc), len(shape))
        a, b = (1,) * (n - len(acc)) + tuple(acc), (1,) * (n - len(shape)) + tuple(shape)
        for i in reversed(range(n)):
            if a[i] != b[i] and a[i] != 1 and b[i] != 1:
                raise RuntimeError(f"The size of tensor a ({a[i]}) must match the size of tensor b ({b[i]}) at "
                                   f"non-singleton dimension {i}" + (f". {BROADCAST_HINT}" if hint else ""))
        acc = tuple(y if x == 1 else x for x, y in zip(a, b))
    return acc
