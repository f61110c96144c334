"""Gradients of broadcast operands: `_grad_like` sums a gradient back to an input's shape (autograd's
`sum_to_shape`) and casts it to the input's dtype -- what every broadcasting op's backward does."""
from __future__ import annotations

from ..autograd.sum_to_shape import sum_to_shape


def _grad_like(g, shape, dtype):
    """`g` reduced to `shape` and cast to `dtype` (the input it is the gradient of)."""
    if g._data.shape != shape:
        g = sum_to_shape(g, shape)
    if g.dtype is not dtype:
        g = g.to(dtype)
    return g


def _meta(x):
    return (x._data.shape, x.dtype) if getattr(x, "_data", None) is not None else None
