"""Copies with the elements moved: repeat (tiling), flip, roll and rot90. The backward of each moves the
gradient back (repeat sums the copies).
"""
from __future__ import annotations

from ..autograd.engine import Op
from ..shapes import normalize_dim


class Repeat(Op):
    node_name = "RepeatBackward0"

    @staticmethod
    def forward(ctx, x, sizes):
        sizes = tuple(int(s) for s in sizes)
        if len(sizes) < x.ndim:
            raise RuntimeError(
                "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
            )
        data = x._data.reshape((1,) * (len(sizes) - x.ndim) + x._data.shape)
        ctx.in_shape, ctx.sizes, ctx.exp_shape = x._data.shape, sizes, data.shape
        return x._xp.tile(data, sizes)

    @staticmethod
    def backward(ctx, g):
        split = []
        for r, s in zip(ctx.sizes, ctx.exp_shape):
            split += [r, s]
        g = g.reshape(split).sum(tuple(range(0, len(split), 2)))
        return g.reshape(ctx.in_shape)


class Flip(Op):
    node_name = "FlipBackward0"

    @staticmethod
    def forward(ctx, x, dims):
        dims = tuple(normalize_dim(d, x.ndim) for d in dims)
        ctx.dims = dims
        return x._xp.flip(x._data, dims).copy() if dims else x._data.copy()

    @staticmethod
    def backward(ctx, g):
        return g.flip(ctx.dims)


class Roll(Op):
    """`roll(shifts, dims)`: elements shifted cyclically along dims (over the flattened tensor without dims)."""

    node_name = "RollBackward0"

    @staticmethod
    def forward(ctx, x, shifts, dims):
        ctx.shifts, ctx.dims = shifts, dims
        xp = x._xp
        if not dims:
            return xp.roll(x._data.reshape(-1), shifts[0]).reshape(x._data.shape)
        return xp.roll(x._data, shifts, tuple(normalize_dim(d, x.ndim) for d in dims))

    @staticmethod
    def backward(ctx, g):
        return Roll.apply(g, tuple(-s for s in ctx.shifts), ctx.dims)


class Rot90(Op):
    """`rot90(k, dims)`: rotation by 90 degrees k times in the plane of dims (a copy laid out like PyTorch's)."""

    node_name = "Rot90Backward0"

    @staticmethod
    def forward(ctx, x, k, dims):
        d0, d1 = dims
        xp = x._xp
        ctx.k, ctx.dims = k, dims
        a = x._data
        if k == 1:
            return xp.swapaxes(xp.flip(a, d1).copy(), d0, d1)
        if k == 2:
            return xp.flip(a, (d0, d1)).copy()
        if k == 3:
            return xp.swapaxes(xp.flip(a, d0).copy(), d0, d1)
        return a.copy()

    @staticmethod
    def backward(ctx, g):
        return Rot90.apply(g, (-ctx.k) % 4, ctx.dims)
