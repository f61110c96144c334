"""Unbroadcasting: the gradient of a broadcast input is the output gradient summed back to the input's shape.

Every binary op and the engine's gradient check use this one helper (chapter 02's `sum_to_shape`).
"""
from __future__ import annotations

from ..seams import component


@component("sum_to_shape")
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
