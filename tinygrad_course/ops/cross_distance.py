"""The cross product of 3-vectors (`linalg.cross`) and pairwise p-norm distances (`cdist`).
Forwards compute on backend arrays; backwards use framework ops, so double backward works.
"""
from __future__ import annotations

import math

import numpy as np

from ..autograd.engine import Op
from ..dtypes import type_name
from ..shapes import normalize_dim
from ._util import check_same_device
from .products import _in_float32, _same_dtype


def _cross_arrays(xp, a, b, dim):
    def take(v, i):
        return xp.take(v, i, axis=dim)

    a0, a1, a2 = take(a, 0), take(a, 1), take(a, 2)
    b0, b1, b2 = take(b, 0), take(b, 1), take(b, 2)
    return xp.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=dim)


class Cross(Op):
    """Cross product of 3-vectors along `dim`, with broadcasting (like `torch.linalg.cross`)."""

    node_name = "LinalgCrossBackward0"

    @staticmethod
    def forward(ctx, a, b, dim=-1):
        _same_dtype((a, b), lambda x, y: f"expected scalar type {type_name(x)} but found {type_name(y)}")
        shape = np.broadcast_shapes(a._data.shape, b._data.shape)
        d = normalize_dim(dim, len(shape))
        if a.ndim != b.ndim:
            raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions.")
        if a._data.shape[d] != 3 or b._data.shape[d] != 3:
            raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. "
                               f"Got {a._data.shape[d]} and {b._data.shape[d]}")
        ctx.dim = d
        ctx.save_for_backward(a, b)
        xp = a._xp
        return _cross_arrays(xp, xp.broadcast_to(a._data, shape), xp.broadcast_to(b._data, shape), d)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return Cross.apply(b.expand(g.shape), g, ctx.dim), Cross.apply(g, a.expand(g.shape), ctx.dim)


def _pnorm_arrays(xp, d, p, axis):
    a = xp.abs(d)
    if p == 0:
        return (a != 0).sum(axis=axis).astype(d.dtype)
    if p == 1:
        return a.sum(axis=axis)
    if p == 2:
        return xp.sqrt((a * a).sum(axis=axis))
    if p == math.inf:
        return a.max(axis=axis) if a.shape[axis] else a.sum(axis=axis)
    return (a ** p).sum(axis=axis) ** (1.0 / p)


class Cdist(Op):
    """p-norm distances between the rows of x1 (.., P, M) and x2 (.., R, M): (.., P, R)."""

    node_name = "CdistBackward0"

    @staticmethod
    def forward(ctx, x1, x2, p=2.0):
        for name, x in (("X1", x1), ("X2", x2)):
            if x.ndim < 2:
                raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
            if x.dtype.category != 2:
                raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {type_name(x.dtype)}")
        check_same_device(x1, x2)
        if x1._data.shape[-1] != x2._data.shape[-1]:
            raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1._data.shape[-1]} "
                               f"X2: {x2._data.shape[-1]}")
        if p < 0:
            raise RuntimeError("cdist only supports non-negative p values")
        _same_dtype((x1, x2), lambda a, b: f"expected scalar type {type_name(a)} but found {type_name(b)}")
        ctx.p = p
        ctx.save_for_backward(x1, x2)
        ctx.save_output = True
        diff = x1._data[..., :, None, :] - x2._data[..., None, :, :]
        return _in_float32(x1._xp, lambda d: _pnorm_arrays(x1._xp, d, p, -1), diff)

    @staticmethod
    def backward(ctx, g):
        x1, x2 = ctx.saved_tensors
        p, dist = ctx.p, ctx.saved_output.unsqueeze(-1)
        diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
        if p == 0:
            coeff = diff * 0
        elif p == 1:
            coeff = diff.sign()
        elif p == 2:
            coeff = (diff / dist).masked_fill(dist == 0, 0.0)
        elif p == math.inf:
            mask = (diff.abs() == dist).to(diff.dtype)
            coeff = diff.sign() * mask / mask.sum(-1, keepdim=True)
        else:
            coeff = (diff.sign() * diff.abs() ** (p - 1) / dist ** (p - 1)).masked_fill(dist == 0, 0.0)
        weighted = g.unsqueeze(-1) * coeff
        return weighted.sum(-2), -weighted.sum(-3)
