"""Reductions: sum, mean, var/std, max/min, argmax/argmin, prod, cumsum, logsumexp, all/any, norm.

Each takes PyTorch's `dim` (None, an int or a tuple) and `keepdim`. Backward re-inserts the
reduced dimensions (`_unreduce`) and broadcasts the gradient back over them.
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from .. import dtypes as _dt
from .. import factories
from .._namespace import namespace
from ..autograd.engine import Op
from ..tensor_base import _wrap
from ..shapes import normalize_dim, normalize_dims


class _ValuesIndices(namedtuple("_ValuesIndices", ["values", "indices"])):
    """(values, indices) of max/min along a dim; prints like `torch.return_types.max(...)`."""

    __slots__ = ()
    op_name = ""

    def __repr__(self):
        return f"{namespace()}.return_types.{self.op_name}(\nvalues={self.values!r},\nindices={self.indices!r})"


RETURN_TYPES = {name: type(name, (_ValuesIndices,), {"__slots__": (), "op_name": name}) for name in ("max", "min")}


def values_indices(name, values, indices):
    """The named (values, indices) pair PyTorch returns from `max(dim)` / `min(dim)`."""
    return RETURN_TYPES[name](values, indices)


def _unreduce(g, in_shape, dims, keepdim):
    """Gradient `g` of a reduction, reshaped so it broadcasts against the input (size-1 reduced dims)."""
    if not keepdim and dims:
        shape = list(in_shape)
        for d in dims:
            shape[d] = 1
        g = g.reshape(shape)
    return g


def _sum_dtype(x, dtype):
    if dtype is not None:
        return _dt.to_dtype(dtype)
    return _dt.int64 if x.dtype.category < 2 else x.dtype


class Sum(Op):
    node_name = "SumBackward1"
    component = "Sum"  # build mode: a learner's Sum computes x.sum(dim) and x.sum() alike

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False, dtype=None):
        dims = normalize_dims(dim, x.ndim)
        ctx.dims, ctx.keepdim, ctx.shape = dims, keepdim, x._data.shape
        return x._data.sum(axis=dims, keepdims=keepdim, dtype=_sum_dtype(x, dtype).np_dtype)

    @staticmethod
    def backward(ctx, grad):
        if grad._data.ndim:  # a 0-d gradient (a full reduction) expands as it is
            grad = _unreduce(grad, ctx.shape, ctx.dims, ctx.keepdim)
        return grad.expand(ctx.shape)


class SumAll(Op):
    """`x.sum()`: every element's gradient is the sum's."""

    node_name = "SumBackward0"
    component = "Sum"

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False, dtype=None):
        ctx.shape = x._data.shape
        return x._data.sum(dtype=_sum_dtype(x, dtype).np_dtype)

    @staticmethod
    def backward(ctx, grad):
        return grad.expand(ctx.shape)


class Mean(Op):
    node_name = "MeanBackward1"
    component = "Mean"  # build mode: a learner's Mean computes x.mean(dim) and x.mean() (MeanAll) alike

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False, dtype=None):
        if dtype is None and x.dtype.category < 2:
            raise RuntimeError(
                "mean(): could not infer output dtype. Input dtype must be either a floating point or complex "
                f"dtype. Got: {x.dtype.name.capitalize()}. Hint: call .float() first."
            )
        dims = normalize_dims(dim, x.ndim)
        ctx.dims, ctx.keepdim, ctx.shape = dims, keepdim, x._data.shape
        ctx.count = math.prod([x._data.shape[d] for d in dims]) if dims else 1
        od = _dt.to_dtype(dtype) if dtype is not None else x.dtype
        with np.errstate(invalid="ignore", divide="ignore"):
            return x._data.mean(axis=dims, keepdims=keepdim, dtype=od.np_dtype)

    @staticmethod
    def backward(ctx, g):
        if g._data.ndim:
            g = _unreduce(g, ctx.shape, ctx.dims, ctx.keepdim)
        return g.expand(ctx.shape) / ctx.count


class MeanAll(Mean):
    node_name = "MeanBackward0"


def _spread_forward(ctx, x, dim, correction, keepdim, method):
    """var or std of `x` over `dim` with `correction`; saves what both backwards need (the dims and the
    denominator n - correction)."""
    dims = normalize_dims(dim, x.ndim)
    ctx.save_for_backward(x)
    ctx.dims, ctx.keepdim = dims, keepdim
    n = math.prod([x._data.shape[d] for d in dims]) if dims else 1
    ctx.denom = max(n - correction, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return getattr(x._data, method)(axis=dims, ddof=correction, keepdims=keepdim)


class Var(Op):
    node_name = "VarBackward0"

    @staticmethod
    def forward(ctx, x, dim=None, correction=1, keepdim=False):
        return _spread_forward(ctx, x, dim, correction, keepdim, "var")

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        g = _unreduce(g, x.shape, ctx.dims, ctx.keepdim)
        centered = x - x.mean(ctx.dims, keepdim=True)
        return g * centered * (2.0 / ctx.denom if ctx.denom else float("inf"))


class Std(Op):
    node_name = "StdBackward0"
    save_output = True

    @staticmethod
    def forward(ctx, x, dim=None, correction=1, keepdim=False):
        return _spread_forward(ctx, x, dim, correction, keepdim, "std")

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        std = _unreduce(ctx.saved_output, x.shape, ctx.dims, ctx.keepdim)
        g = _unreduce(g, x.shape, ctx.dims, ctx.keepdim)
        centered = x - x.mean(ctx.dims, keepdim=True)
        return g * centered / (std * ctx.denom)


class MaxMinAll(Op):
    """max()/min()/amax/amin over the whole tensor or dims: ties share the gradient equally."""

    node_name = "MaxBackward1"
    component = "Max"  # build mode: a learner's Max computes x.max() (min, amax and amin stay these classes')

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False, largest=True):
        if x._data.size == 0:
            raise RuntimeError(
                "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument."
            )
        dims = normalize_dims(dim, x.ndim)
        ctx.dims, ctx.keepdim = dims, keepdim
        ctx.save_for_backward(x)
        ctx.save_output = True
        return (x._data.max if largest else x._data.min)(axis=dims, keepdims=keepdim)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        out = _unreduce(ctx.saved_output, x.shape, ctx.dims, ctx.keepdim)
        g = _unreduce(g, x.shape, ctx.dims, ctx.keepdim)
        mask = (x == out).to(g.dtype)
        return g * mask / mask.sum(ctx.dims, keepdim=True)


class MinAll(MaxMinAll):
    node_name = "MinBackward1"


class AmaxOp(MaxMinAll):
    node_name = "AmaxBackward0"


class AminOp(MaxMinAll):
    node_name = "AminBackward0"


class MaxMinDim(Op):
    """max(dim)/min(dim): (values, indices); the gradient goes to the selected index."""

    node_name = "MaxBackward0"
    non_differentiable_outputs = (1,)
    component = "Max"  # build mode: a learner's Max computes x.max(dim, keepdim) (min(dim) stays this class's)

    @staticmethod
    def forward(ctx, x, dim, keepdim=False, largest=True):
        d = normalize_dim(dim, x.ndim)
        xp = x._xp
        data = x._data if x.ndim else x._data.reshape(1)
        if data.shape[d] == 0:
            raise IndexError(
                f"{'max' if largest else 'min'}(): Expected reduction dim {dim} to have non-zero size."
            )
        idx = (xp.argmax if largest else xp.argmin)(data, axis=d)
        idx = xp.expand_dims(idx, d)
        vals = xp.take_along_axis(data, idx, axis=d)
        if not keepdim:
            vals, idx = vals.squeeze(d), idx.squeeze(d)
        if not x.ndim:
            vals, idx = vals.reshape(()), idx.reshape(())
        ctx.d, ctx.keepdim, ctx.shape = d, keepdim, x._data.shape
        ctx.save_for_backward(None)
        ctx.indices = idx.astype(np.int64)
        return vals, idx.astype(np.int64)

    @staticmethod
    def backward(ctx, g, g_idx=None):
        shape = ctx.shape
        idx = _wrap(ctx.indices)
        if not shape:
            return g
        if not ctx.keepdim:
            g, idx = g.unsqueeze(ctx.d), idx.unsqueeze(ctx.d)

        return factories.zeros(shape, dtype=g.dtype, device=g.device).scatter(ctx.d, idx, g)


class MinDim(MaxMinDim):
    node_name = "MinBackward0"


class ArgMaxMin(Op):
    node_name = "ArgmaxBackward"
    differentiable = False
    component = "Max"  # build mode: argmax is the indices of a learner's Max (argmin stays this class's)

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False, largest=True):
        if x.dtype is _dt.bool_:
            raise RuntimeError(f"{'argmax' if largest else 'argmin'}(): does not support bool input")
        xp = x._xp
        fn = xp.argmax if largest else xp.argmin
        if dim is None:
            r = fn(x._data)
            if keepdim:
                r = xp.asarray(r).reshape((1,) * x.ndim)
            return xp.asarray(r, dtype=np.int64)
        d = normalize_dim(dim, x.ndim)
        data = x._data if x.ndim else x._data.reshape(1)
        r = fn(data, axis=d)
        if keepdim:
            r = xp.expand_dims(r, d)
        if not x.ndim:
            r = r.reshape(())
        return r.astype(np.int64)


class Prod(Op):
    node_name = "ProdBackward1"

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False, dtype=None):
        dims = normalize_dims(dim, x.ndim)
        ctx.dims, ctx.keepdim = dims, keepdim
        ctx.save_for_backward(x)
        ctx.save_output = True
        return x._data.prod(axis=dims, keepdims=keepdim, dtype=_sum_dtype(x, dtype).np_dtype)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        out = _unreduce(ctx.saved_output, x.shape, ctx.dims, ctx.keepdim)
        g = _unreduce(g, x.shape, ctx.dims, ctx.keepdim)
        if not bool((x._data == 0).any()):
            return g * out / x
        # With zeros, product of all *other* elements, computed directly (exclusive products).

        xp, data = x._xp, x.detach()._data
        moved = xp.moveaxis(data, ctx.dims, tuple(range(len(ctx.dims)))) if ctx.dims else data[None]
        flat = moved.reshape((-1,) + moved.shape[len(ctx.dims) or 1:])
        left = xp.cumprod(xp.concatenate([xp.ones_like(flat[:1]), flat[:-1]]), axis=0)
        right = xp.flip(xp.cumprod(xp.flip(xp.concatenate([flat[1:], xp.ones_like(flat[:1])]), 0), axis=0), 0)
        others = (left * right).reshape(moved.shape)
        others = xp.moveaxis(others, tuple(range(len(ctx.dims))), ctx.dims) if ctx.dims else others[0]
        return g * _wrap(xp.ascontiguousarray(others))


class ProdAll(Prod):
    node_name = "ProdBackward0"


class Cumsum(Op):
    node_name = "CumsumBackward0"

    @staticmethod
    def forward(ctx, x, dim, dtype=None):
        d = normalize_dim(dim, x.ndim)
        ctx.d = d
        data = x._data if x.ndim else x._data.reshape(1)
        r = data.cumsum(axis=d, dtype=_sum_dtype(x, dtype).np_dtype)
        return r if x.ndim else r.reshape(())

    @staticmethod
    def backward(ctx, g):
        if g.ndim == 0:
            return g
        return g.flip(ctx.d).cumsum(ctx.d).flip(ctx.d)


class Logsumexp(Op):
    node_name = "LogsumexpBackward0"

    @staticmethod
    def forward(ctx, x, dim, keepdim=False):
        dims = normalize_dims(dim, x.ndim)
        xp = x._xp
        data = x._data if x.dtype.category == 2 else x._data.astype(_dt.get_default_dtype().np_dtype)
        m = data.max(axis=dims, keepdims=True)
        m = xp.where(xp.isfinite(m), m, 0)
        with np.errstate(divide="ignore"):
            r = xp.log(xp.exp(data - m).sum(axis=dims, keepdims=True)) + m
        ctx.dims, ctx.keepdim = dims, keepdim
        ctx.save_for_backward(x)
        ctx.save_output = True
        return r if keepdim else r.squeeze(dims) if dims else r

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        out = _unreduce(ctx.saved_output, x.shape, ctx.dims, ctx.keepdim)
        g = _unreduce(g, x.shape, ctx.dims, ctx.keepdim)
        return g * (x - out).exp()


class AllAny(Op):
    node_name = "AllBackward"
    differentiable = False

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False, op="all"):
        dims = normalize_dims(dim, x.ndim)
        return getattr(x._data, op)(axis=dims, keepdims=keepdim)


class Norm(Op):
    node_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx, x, p=2, dim=None, keepdim=False):
        if x.dtype.category != 2:
            raise RuntimeError(
                f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {x.dtype.name.capitalize()}"
            )
        dims = normalize_dims(dim, x.ndim)
        ctx.dims, ctx.keepdim, ctx.p = dims, keepdim, p
        ctx.save_for_backward(x)
        ctx.save_output = True
        xp = x._xp
        a = xp.abs(x._data)
        if p == float("inf"):
            return a.max(axis=dims, keepdims=keepdim)
        if p == -float("inf"):
            return a.min(axis=dims, keepdims=keepdim)
        if p == 0:
            return (a != 0).sum(axis=dims, keepdims=keepdim).astype(x._data.dtype)
        if p == 1:
            return a.sum(axis=dims, keepdims=keepdim)
        if p == 2:
            return xp.sqrt((a * a).sum(axis=dims, keepdims=keepdim))
        return (a ** p).sum(axis=dims, keepdims=keepdim) ** (1.0 / p)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        p = ctx.p
        out = _unreduce(ctx.saved_output, x.shape, ctx.dims, ctx.keepdim)
        g = _unreduce(g, x.shape, ctx.dims, ctx.keepdim)
        if p == 0:
            return g * 0
        if p == 1:
            return g * x.sign()
        if p in (float("inf"), -float("inf")):
            mask = (x.abs() == out).to(g.dtype)
            return g * x.sign() * mask / mask.sum(ctx.dims, keepdim=True)
        if p == 2:
            return (g * x / out).masked_fill(out == 0, 0.0)
        scale = x * x.abs() ** (p - 2) / out ** (p - 1)
        return (g * scale).masked_fill(out == 0, 0.0)
