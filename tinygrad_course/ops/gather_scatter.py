"""Gather and scatter along one dimension: gather, scatter, scatter_add and scatter_reduce (sum, prod, mean,
amax, amin; with or without the existing values). Indices are checked as PyTorch checks them (no negative
indices). Forwards work on backend arrays; backwards are framework ops (so double backward works).
"""
from __future__ import annotations

import numpy as np

from .. import factories
from ..autograd.engine import Op
from ..shapes import normalize_dim
from ._util import first_out_of_range
from .comparison import where
from .indexing import IndexPutZeros, _pad_to, _wrap


def _open_grids(xp, shape):
    """One arange per dim, shaped to broadcast against the others (NumPy's `indices(shape, sparse=True)`,
    which CuPy lacks)."""
    return [xp.arange(n).reshape((1,) * k + (n,) + (1,) * (len(shape) - k - 1)) for k, n in enumerate(shape)]


def _check_dim_index(idx, dim, n):
    """gather and scatter take no negative indices in PyTorch."""
    bad = first_out_of_range(idx, n)
    if bad is not None:
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {n}")


class Gather(Op):
    node_name = "GatherBackward0"

    @staticmethod
    def forward(ctx, x, dim, index):
        d = normalize_dim(dim, x.ndim)
        if index.dtype.name != "int64":
            raise RuntimeError("gather(): Expected dtype int64 for index")
        if index.ndim != x.ndim:
            raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
        idx = index._data
        for k in range(x.ndim):
            if k != d and idx.shape[k] > x._data.shape[k]:
                raise RuntimeError(
                    f"Size does not match at dimension {k} expected index [{', '.join(map(str, idx.shape))}] to be no "
                    f"larger than self [{', '.join(map(str, x._data.shape))}] apart from dimension {d}"
                )
        _check_dim_index(idx, d, x._data.shape[d])
        ctx.d, ctx.shape = d, x._data.shape
        ctx.save_for_backward(index)
        src = x._data[tuple(slice(0, s) for s in idx.shape[:d]) + (slice(None),) + tuple(slice(0, s) for s in idx.shape[d + 1:])]
        return x._xp.take_along_axis(src, idx, axis=d)

    @staticmethod
    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        return factories.zeros(ctx.shape, dtype=g.dtype, device=g.device).scatter_add(ctx.d, index, g), None


class Scatter(Op):
    """scatter / scatter_add (out of place): writes or adds `src` into a copy of `x` at `index` along `dim`."""

    node_name = "ScatterBackward0"

    @staticmethod
    def forward(ctx, x, dim, index, src, reduce=None):
        d = normalize_dim(dim, x.ndim)
        xp = x._xp
        out = x._data.copy()
        idx = index._data
        _check_dim_index(idx, d, out.shape[d])
        if getattr(src, "_data", None) is not None:
            sv = src._data[tuple(slice(0, s) for s in idx.shape)]
        else:
            sv = xp.full(idx.shape, src, dtype=out.dtype)
        grids = _open_grids(xp, idx.shape)
        grids[d] = idx
        where = tuple(grids)
        if reduce == "add":
            xp.add.at(out, where, sv)
        else:
            out[where] = sv
        ctx.d, ctx.reduce = d, reduce
        ctx.save_for_backward(index)
        ctx.src_shape = src._data.shape if getattr(src, "_data", None) is not None else None
        return out

    @staticmethod
    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        gx = gsrc = None
        if ctx.needs_input_grad[0]:
            gx = g if ctx.reduce == "add" else g.scatter(ctx.d, index, 0.0)
        if ctx.needs_input_grad[3]:
            gsrc = g.gather(ctx.d, index)
            if tuple(gsrc.shape) != ctx.src_shape:
                full = factories.zeros(ctx.src_shape, dtype=g.dtype, device=g.device)
                gsrc = IndexPutZeros.apply(gsrc, ctx.src_shape, tuple(slice(0, s) for s in gsrc.shape), True) + full
        return gx, None, None, gsrc


class ScatterAdd(Scatter):
    node_name = "ScatterAddBackward0"


_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _identity(reduce, dtype):
    """The value a reduction starts from when `include_self=False`."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    if dtype.kind == "b":
        return reduce == "amin"
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


def _multiply_at(xp, flat, targets, values):
    """`flat[targets] *= values` with repeated targets multiplying in turn (CuPy has no `multiply.at`):
    one round per occurrence rank, each round writing distinct targets."""
    if not targets.size:
        return
    order = xp.argsort(targets, kind="stable")
    sorted_t = targets[order]
    rank = xp.arange(sorted_t.size) - xp.searchsorted(sorted_t, sorted_t, side="left")
    for r in range(int(rank.max()) + 1):
        sel = order[rank == r]
        flat[targets[sel]] *= values[sel]


class ScatterReduce(Op):
    """`scatter_reduce(dim, index, src, reduce, include_self)`: reduce src's values into x at `index`."""

    node_name = "ScatterReduceBackward0"

    @staticmethod
    def forward(ctx, x, dim, index, src, reduce, include_self=True):
        if reduce not in _REDUCTIONS:
            raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
        if src.dtype is not x.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
        if index.dtype.category != 1:
            raise RuntimeError("scatter(): Expected dtype int64 for index")
        d = normalize_dim(dim, x.ndim)
        if max(index.ndim, 1) != max(x.ndim, 1) and index._data.size:
            raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
        xp = x._xp
        out = x._data.copy()
        o = out.reshape(1) if x.ndim == 0 else out
        idx = index._data.reshape(1) if index.ndim == 0 else index._data
        _check_dim_index(idx, d, o.shape[d])
        sv = src._data.reshape(1) if src.ndim == 0 else src._data
        sv = sv[tuple(slice(0, s) for s in idx.shape)].reshape(-1)
        grids = _open_grids(xp, idx.shape)
        grids[d] = idx
        cstrides = [int(np.prod(o.shape[k + 1:])) for k in range(o.ndim)]
        targets = sum(gk * sk for gk, sk in zip(grids, cstrides))
        targets = xp.broadcast_to(targets, idx.shape).reshape(-1)
        flat = o.reshape(-1)
        if not include_self:
            flat[targets] = _identity(reduce, out.dtype)
        if reduce in ("sum", "mean"):
            xp.add.at(flat, targets, sv)
        elif reduce == "amax":
            xp.maximum.at(flat, targets, sv)
        elif reduce == "amin":
            xp.minimum.at(flat, targets, sv)
        else:
            _multiply_at(xp, flat, targets, sv)
        count = None
        if reduce == "mean":
            count = xp.full(flat.shape, 1 if include_self else 0, dtype=flat.dtype)
            xp.add.at(count, targets, 1)
            count = xp.maximum(count, 1)
            if flat.dtype.kind == "f":
                flat /= count
            else:
                flat //= count
        ctx.d, ctx.reduce, ctx.include_self = d, reduce, include_self
        ctx.shape, ctx.src_shape = x._data.shape, src._data.shape
        ctx.count = count.reshape(x._data.shape) if count is not None else None
        ctx.scattered = None
        if not include_self:
            hit = xp.zeros(flat.shape, dtype=bool)
            hit[targets] = True
            ctx.scattered = _wrap(hit.reshape(x._data.shape))
        ctx.save_for_backward(x, _wrap(idx.astype(np.int64, copy=False)), src)
        ctx.save_output = reduce in ("amax", "amin", "prod")
        return out

    @staticmethod
    def backward(ctx, g):
        x, index, src = ctx.saved_tensors
        d, reduce, include_self = ctx.d, ctx.reduce, ctx.include_self
        g1 = g if g.ndim else g.reshape(1)
        x1 = x if x.ndim else x.reshape(1)
        src1 = src if src.ndim else src.reshape(1)
        src1 = src1[tuple(slice(0, s) for s in index.shape)]
        if reduce == "sum":
            gx, gs = g1, g1.gather(d, index)
        elif reduce == "mean":
            share = g1 / _wrap(ctx.count.reshape(g1.shape)).to(g.dtype)
            gx, gs = share, share.gather(d, index)
        elif reduce in ("amax", "amin"):
            result = ctx.saved_output
            result = result if result.ndim else result.reshape(1)
            self_is = (x1 == result).to(g.dtype)
            if ctx.scattered is not None:  # include_self=False: x's own value only counts where nothing landed
                self_is = self_is.masked_fill(ctx.scattered.reshape(self_is.shape), 0)
            src_is = (src1 == result.gather(d, index)).to(g.dtype)
            n = self_is.scatter_add(d, index, src_is)
            share = g1 / n.masked_fill(n == 0, 1)
            gx, gs = self_is * share, src_is * share.gather(d, index)
        else:
            result = ctx.saved_output
            result = result if result.ndim else result.reshape(1)
            masked_self = x1.masked_fill(x1 == 0, 1)
            masked_self_result = ScatterReduce.apply(masked_self, d, index, src1, "prod", include_self)
            gx = g1 * masked_self_result / masked_self
            src_zero = src1 == 0
            zeros = (x1 * 0).scatter_add(d, index, src_zero.to(g.dtype)).gather(d, index)
            single_zero = src_zero.logical_and(zeros == 1)
            masked_src_result = ScatterReduce.apply(x1, d, index, src1.masked_fill(single_zero, 1), "prod", include_self)

            gs = where(single_zero, (g1 * masked_src_result).gather(d, index),
                                 (g1 * result).gather(d, index) / src1.masked_fill(src_zero, 1))
        if ctx.scattered is not None:
            gx = gx.masked_fill(ctx.scattered.reshape(gx.shape), 0)
        gx = gx.reshape(ctx.shape) if ctx.needs_input_grad[0] else None
        gs = _pad_to(gs, src.shape if src.ndim else (1,)).reshape(ctx.src_shape) if ctx.needs_input_grad[3] else None
        return gx, None, None, gs
