"""Gradients of broadcast operands: `_grad_like` sums a gradient back to an input's shape (autograd's
`sum_to_shape`) and casts it to the input's dtype -- what every broadcasting op's backward does."""
from __future__ import annotations

from .. import dtypes as _dt
from .. import seams
from ..autograd.grad_mode import _state
from ..autograd.sum_to_shape import sum_to_shape
from ..tensor_base import _wrap

_ARRAY_GRAD_DTYPES = (_dt.float32, _dt.float64)


def _sum_to_shape_array(a, shape):
    """`sum_to_shape` on a backend array: the same sums (kept dims, then a reshape) without recording ops."""
    lead = a.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and a.shape[lead + i] != 1)
    if dims:
        a = a.sum(axis=dims, keepdims=True)
    return a.reshape(shape) if lead else a


def _grad_like(g, shape, dtype):
    """`g` reduced to `shape` and cast to `dtype` (the input it is the gradient of)."""
    if g._data.shape != shape:
        if not _state.enabled and not seams.ACTIVE and g.dtype is dtype and dtype in _ARRAY_GRAD_DTYPES:
            return _wrap(_sum_to_shape_array(g._data, tuple(shape)))  # create_graph=False: no ops to record
        g = sum_to_shape(g, shape)
    if g.dtype is not dtype:
        g = g.to(dtype)
    return g


def _meta(x):
    return (x._data.shape, x.dtype) if getattr(x, "_data", None) is not None else None
