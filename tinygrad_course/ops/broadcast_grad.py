"""Gradients of broadcast operands: `sum_to_shape` sums a gradient over the dimensions broadcasting added
or stretched, `_grad_like` also casts it to the input's dtype (what every broadcasting op's backward does).
Kept on its own so that any op family (and autograd) can import it without the ops themselves.
"""
from __future__ import annotations


def sum_to_shape(g, shape):
    """Sum gradient `g` over the dimensions that broadcasting added or stretched, to get `shape`."""
    gshape = g._data.shape
    shape = tuple(shape)
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    dims = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and gshape[lead + i] != 1
    )
    if dims:
        g = g.sum(dims, keepdim=True)
    if lead:
        g = g.reshape(shape)
    return g


def _grad_like(g, shape, dtype):
    """`g` reduced to `shape` and cast to `dtype` (the input it is the gradient of)."""
    if g._data.shape != shape:
        g = sum_to_shape(g, shape)
    if g.dtype is not dtype:
        g = g.to(dtype)
    return g


def _meta(x):
    return (x._data.shape, x.dtype) if getattr(x, "_data", None) is not None else None
