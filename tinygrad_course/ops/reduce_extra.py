"""More reductions: var_mean / std_mean (one node, two outputs), nansum, aminmax."""
from __future__ import annotations

import math
from collections import namedtuple

from .. import dtypes as _dt
from .._namespace import namespace
from ..autograd.engine import Op
from ..tensor_base import _wrap
from ..shapes import normalize_dims
from .reduce import _unreduce


class VarMean(Op):
    """(var, mean) over `dim` with `correction`, as one node with two outputs (`StdMean`: std instead)."""

    node_name = "VarMeanBackward0"
    use_std = False

    @staticmethod
    def forward(ctx, x, dim=None, correction=1, keepdim=False):
        name = "std_mean" if ctx._fn.use_std else "var_mean"
        if x.dtype.category != 2:
            raise RuntimeError(f"{name} only support floating point and complex dtypes")
        dims = normalize_dims(dim, x.ndim)
        a = x._data
        n = math.prod([a.shape[d] for d in dims]) if dims else 1
        ctx.dims, ctx.keepdim, ctx.n, ctx.denom = dims, keepdim, n, max(n - correction, 0)
        mean = a.mean(axis=dims, keepdims=True)
        spread = ((a - mean) ** 2).sum(axis=dims, keepdims=keepdim) / ctx.denom
        spread = spread.astype(a.dtype, copy=False)
        if ctx._fn.use_std:
            spread = x._xp.sqrt(spread)
        ctx.save_for_backward(x)
        ctx.correction = correction
        return spread, (mean if keepdim else mean.reshape(spread.shape))

    @staticmethod
    def backward(ctx, g_spread, g_mean):
        (x,) = ctx.saved_tensors
        centered = x - x.mean(ctx.dims, keepdim=True)
        out = 0
        if g_spread is not None:
            g = _unreduce(g_spread, x.shape, ctx.dims, ctx.keepdim)
            if ctx._fn.use_std:
                std = x.std(ctx.dims, correction=ctx.correction, keepdim=True)
                out = g * centered / (std * ctx.denom)
            else:
                out = g * centered * (2.0 / ctx.denom if ctx.denom else float("inf"))
        if g_mean is not None:
            out = out + _unreduce(g_mean, x.shape, ctx.dims, ctx.keepdim).expand(x.shape) / ctx.n
        return out


class StdMean(VarMean):
    node_name = "StdMeanBackward0"
    use_std = True


class Nansum(Op):
    """Sum treating NaN as zero."""

    node_name = "NansumBackward0"

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False, dtype=None):
        dims = normalize_dims(dim, x.ndim)
        od = _dt.to_dtype(dtype) if dtype is not None else (_dt.int64 if x.dtype.category < 2 else x.dtype)
        ctx.dims, ctx.keepdim, ctx.in_dtype = dims, keepdim, x.dtype
        ctx.save_for_backward(x)
        a = x._data
        if x.dtype.category == 2:
            a = x._xp.where(x._xp.isnan(a), 0, a)
        return a.sum(axis=dims, keepdims=keepdim, dtype=od.np_dtype)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        g = _unreduce(g, x.shape, ctx.dims, ctx.keepdim).expand(x.shape) * ~x.isnan()
        return g if g.dtype is ctx.in_dtype else g.to(ctx.in_dtype)


class _Aminmax(namedtuple("_Aminmax", ["min", "max"])):
    """(min, max) of `aminmax`; prints like `torch.return_types.aminmax(...)`."""

    __slots__ = ()

    def __repr__(self):
        return f"{namespace()}.return_types.aminmax(\nmin={self.min!r},\nmax={self.max!r})"


class Aminmax(Op):
    """(amin, amax) in one node; tied extremes share their gradient equally, as in amin/amax."""

    node_name = "AminmaxBackward0"

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        a = x._data
        dims = normalize_dims(dim, x.ndim)
        if a.size == 0 and (dim is None or any(a.shape[d] == 0 for d in dims)):
            raise RuntimeError(
                "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.")
        ctx.dims, ctx.keepdim = dims, keepdim
        ctx.save_for_backward(x)
        lo, hi = a.min(axis=dims, keepdims=keepdim), a.max(axis=dims, keepdims=keepdim)
        if ctx.needs_input_grad:
            ctx.extremes = (lo, hi)
        return lo, hi

    @staticmethod
    def backward(ctx, g_min, g_max):
        (x,) = ctx.saved_tensors
        out = 0
        for g, extreme in ((g_min, ctx.extremes[0]), (g_max, ctx.extremes[1])):
            if g is None:
                continue
            e = _unreduce(_wrap(extreme), x.shape, ctx.dims, ctx.keepdim)
            mask = (x == e).to(g.dtype)
            out = out + _unreduce(g, x.shape, ctx.dims, ctx.keepdim) * mask / mask.sum(ctx.dims, keepdim=True)
        return out


def aminmax(x, dim=None, keepdim=False):
    """The named pair (min, max), like `torch.aminmax`."""
    return _Aminmax(*Aminmax.apply(x, dim, keepdim))
