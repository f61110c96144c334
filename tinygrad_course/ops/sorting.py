"""Differentiable sorting and selection: sort, topk, kthvalue, median, mode, masked_select, take
(the cumulative ops cummax/cummin, cumprod and logcumsumexp are in cumulative.py).

Ops that pick elements return (values, indices); their backward sends the gradient back to the picked
positions (`_PickAlongDim`). Forwards compute on the tensor's array module, so they run on CuPy too.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from .. import factories
from ..autograd.engine import Op
from ..tensor_base import _wrap
from ..dtypes import type_name
from ..shapes import broadcast_shapes_checked, normalize_dim
from ._util import check_same_device, first_out_of_range
from .indexing import IndexPutZeros
from .reduce import _ValuesIndices

RETURN_TYPES = {name: type(name, (_ValuesIndices,), {"__slots__": (), "op_name": name})
                for name in ("sort", "topk", "kthvalue", "median", "nanmedian", "mode", "cummax", "cummin")}


def values_indices(name, values, indices):
    """The named (values, indices) pair PyTorch returns (`torch.return_types.<name>`)."""
    return RETURN_TYPES[name](values, indices)


def comparable(data):
    """`data`, or a float32 copy for bfloat16 (whose NumPy sort and comparisons mishandle NaN)."""
    return data.astype(np.float32) if data.dtype.kind == "V" else data


def sort_indices(xp, data, d, descending=False):
    """Indices that sort `data` along `d`, stably (equal elements keep their order) and with NaN largest,
    as PyTorch's `sort(stable=True)` orders them."""
    data = comparable(data)
    if not descending:
        return xp.argsort(data, axis=d, kind="stable")
    # Ascending sort of the reversed data, reversed back: descending, and ties still in their original order.
    n = data.shape[d]
    return (n - 1) - xp.flip(xp.argsort(xp.flip(data, d), axis=d, kind="stable"), d)


def _at_least_1d(data):
    return data if data.ndim else data.reshape(1)


def _pick(xp, data, idx, d):
    return xp.take_along_axis(data, idx, axis=d)


def _check_not_empty(name, data, d):
    if data.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def broadcast_shape(a, b):
    """The broadcast of shapes `a` and `b`, or PyTorch's error naming the right-most mismatch."""
    return broadcast_shapes_checked(a, b)


def _no_bool(x, name):
    if x.dtype is _dt.bool_:
        raise NotImplementedError(f'"{name}" not implemented for \'Bool\'')


class _PickAlongDim(Op):
    """Base of ops returning (values, indices) along a dim: the gradient goes to the picked positions
    (added up where an index repeats, as in cummax)."""

    non_differentiable_outputs = (1,)
    accumulate = False

    @staticmethod
    def finish(ctx, x, d, vals, idx, keepdim=True):
        """Save what backward needs and shape the outputs (`vals`/`idx` keep dim `d`)."""
        idx = idx.astype(np.int64, copy=False)
        ctx.d, ctx.keepdim, ctx.shape, ctx.indices = d, keepdim, x._data.shape, idx
        if not keepdim:
            vals, idx = vals.squeeze(d), idx.squeeze(d)
        if not x.ndim:
            vals, idx = vals.reshape(()), idx.reshape(())
        return vals, idx

    @classmethod
    def backward(cls, ctx, g, g_idx=None):
        if not ctx.shape:
            return g
        idx = _wrap(ctx.indices)
        if not ctx.keepdim:
            g = g.unsqueeze(ctx.d)
        zeros = factories.zeros(ctx.shape, dtype=g.dtype, device=g.device)
        return zeros.scatter_add(ctx.d, idx, g) if cls.accumulate else zeros.scatter(ctx.d, idx, g)


class Sort(_PickAlongDim):
    node_name = "SortBackward0"

    @staticmethod
    def forward(ctx, x, dim=-1, descending=False):
        d = normalize_dim(dim, x.ndim)
        data = _at_least_1d(x._data)
        idx = sort_indices(x._xp, data, d, descending)
        return _PickAlongDim.finish(ctx, x, d, _pick(x._xp, data, idx, d), idx)


class StableSort(Sort):
    node_name = "SortBackward1"


class Topk(_PickAlongDim):
    node_name = "TopkBackward0"

    @staticmethod
    def forward(ctx, x, k, dim=-1, largest=True, sorted=True):
        if x.dtype is _dt.bool_:
            raise RuntimeError("topk does not support bool dtypes on CPU")
        d = normalize_dim(dim, x.ndim)
        data = _at_least_1d(x._data)
        n = data.shape[d]
        if not 0 <= k <= n:
            raise RuntimeError(
                "selected index k out of range. Hint: k must be at most the size of the dimension "
                f"({n} here).")
        if not x.ndim:
            k = 1  # PyTorch returns the element of a 0-d tensor for k = 0 as well
        xp = x._xp
        keys = comparable(data)
        if k == 1 and largest:  # the first position of the maximum (NaN counting as largest), as the stable sort
            idx = xp.argmax(keys, axis=d, keepdims=True)
        elif 0 < k < n // 2:  # partition first, then sort only the k candidates
            part = xp.argpartition(keys, n - k if largest else k - 1, axis=d)
            cand = part[(slice(None),) * d + ((slice(n - k, None) if largest else slice(0, k)),)]
            idx = _pick(xp, cand, sort_indices(xp, _pick(xp, keys, cand, d), d, descending=largest), d)
        else:
            idx = sort_indices(xp, keys, d, descending=largest)[(slice(None),) * d + (slice(0, k),)]
        return _PickAlongDim.finish(ctx, x, d, _pick(xp, data, idx, d), idx)


class Kthvalue(_PickAlongDim):
    node_name = "KthvalueBackward0"

    @staticmethod
    def forward(ctx, x, k, dim=-1, keepdim=False):
        _no_bool(x, "kthvalue_cpu")
        d = normalize_dim(dim, x.ndim)
        data = _at_least_1d(x._data)
        _check_not_empty("kthvalue", data, d)
        if not 1 <= k <= data.shape[d]:
            raise RuntimeError(
                f"kthvalue(): selected number k out of range for dimension {d}. "
                f"Hint: k counts from 1 and must be at most the size of the dimension ({data.shape[d]} here).")
        idx = sort_indices(x._xp, data, d)[(slice(None),) * d + (slice(k - 1, k),)]
        return _PickAlongDim.finish(ctx, x, d, _pick(x._xp, data, idx, d), idx, keepdim)


def median_positions(xp, data, d, ignore_nan):
    """(sorting indices, sorted position of the median) along `d`: the lower of the two middle values; a NaN
    in the slice gives the first NaN (median) or is left out (nanmedian), as in PyTorch."""
    data = comparable(data)
    order = sort_indices(xp, data, d)
    n = data.shape[d]
    shape = data.shape[:d] + (1,) + data.shape[d + 1:]
    if data.dtype.kind != "f":
        return order, xp.full(shape, (n - 1) // 2, dtype=np.int64)
    nans = xp.isnan(data).sum(axis=d, keepdims=True)
    if ignore_nan:
        return order, xp.maximum((n - nans - 1) // 2, 0)
    return order, xp.where(nans > 0, n - nans, (n - 1) // 2)


class MedianDim(_PickAlongDim):
    node_name = "MedianBackward1"

    @classmethod
    def forward(cls, ctx, x, dim, keepdim=False):
        _no_bool(x, "median_out")
        d = normalize_dim(dim, x.ndim)
        data = _at_least_1d(x._data)
        _check_not_empty("median", data, d)
        order, pos = median_positions(x._xp, data, d, cls is NanmedianDim)
        idx = _pick(x._xp, order, pos, d)
        return _PickAlongDim.finish(ctx, x, d, _pick(x._xp, data, idx, d), idx, keepdim)


class NanmedianDim(MedianDim):
    node_name = "NanmedianBackward1"


class MedianAll(Op):
    """median() of all elements; the gradient is shared evenly by the elements equal to it, as in PyTorch."""

    node_name = "MedianBackward0"

    @classmethod
    def forward(cls, ctx, x):
        _no_bool(x, "median_cpu")
        xp, flat = x._xp, x._data.reshape(-1)
        ctx.save_for_backward(x)
        ctx.save_output = True
        if flat.size == 0:
            return xp.full((), np.nan, dtype=flat.dtype)
        order, pos = median_positions(xp, flat, 0, cls is NanmedianAll)
        return flat[order[pos]].reshape(())

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        out = ctx.saved_output
        same = (x == out) | (x.isnan() & out.isnan())
        return g * same.to(g.dtype) / same.sum().to(g.dtype)


class NanmedianAll(MedianAll):
    node_name = "NanmedianBackward0"


class Mode(_PickAlongDim):
    node_name = "ModeBackward0"

    @staticmethod
    def forward(ctx, x, dim=-1, keepdim=False):
        d = normalize_dim(dim, x.ndim)
        xp, data = x._xp, _at_least_1d(x._data)
        n = data.shape[d]
        _check_not_empty("mode", data, d)
        moved = xp.moveaxis(comparable(data), d, -1)
        rows = moved.reshape(-1, n)
        m = rows.shape[0]
        order = xp.argsort(rows, axis=1, kind="stable")
        s = xp.take_along_axis(rows, order, axis=1)
        starts = xp.concatenate([xp.ones((m, 1), dtype=bool), s[:, 1:] != s[:, :-1]], axis=1)
        run = xp.cumsum(starts, axis=1) - 1  # which run of equal values each sorted position is in
        counts = xp.bincount((run + n * xp.arange(m)[:, None]).reshape(-1), minlength=m * n).reshape(m, n)
        best = counts.argmax(axis=1)[:, None]  # the first longest run: the smallest most frequent value
        last = xp.take_along_axis(xp.cumsum(counts, axis=1), best, axis=1) - 1  # PyTorch gives its last index
        idx = xp.take_along_axis(order, last, axis=1).reshape(moved.shape[:-1] + (1,))
        idx = xp.moveaxis(idx, -1, d)
        return _PickAlongDim.finish(ctx, x, d, _pick(xp, data, idx, d), idx, keepdim)


class MaskedSelect(Op):
    node_name = "MaskedSelectBackward0"

    @staticmethod
    def forward(ctx, x, mask):
        if mask.dtype is not _dt.bool_:
            raise RuntimeError(
                "masked_select: expected BoolTensor for mask. Hint: build the mask with a comparison "
                "(x > 0) or convert it with .bool().")
        check_same_device(x, mask)
        xp = x._xp
        shape = broadcast_shape(mask.shape, x.shape)  # PyTorch names the mask "tensor a"
        data, keep = xp.broadcast_to(x._data, shape), xp.broadcast_to(mask._data, shape)
        ctx.shape, ctx.full_shape = x._data.shape, data.shape
        data, keep = _at_least_1d(data), _at_least_1d(keep)
        ctx.picked = xp.nonzero(keep)  # the output's length depends on the data: one sync, as in PyTorch
        ctx.picked_from = data.shape
        return data[ctx.picked]

    @staticmethod
    def backward(ctx, g):
        return IndexPutZeros.apply(g, ctx.picked_from, ctx.picked, False).reshape(ctx.full_shape), None


class Take(Op):
    node_name = "TakeBackward0"

    @staticmethod
    def forward(ctx, x, index):
        if index.dtype is not _dt.int64:
            raise RuntimeError(f"take(): Expected a long tensor for index, but got {type_name(index.dtype)}")
        check_same_device(x, index)
        n, idx = x._data.size, index._data
        bad = first_out_of_range(idx, n, negative_ok=True)
        if bad is not None:
            raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
        idx = idx + (idx < 0) * n
        ctx.n, ctx.shape, ctx.idx = n, x._data.shape, idx
        return x._xp.take(x._data.reshape(-1), idx)

    @staticmethod
    def backward(ctx, g):
        return IndexPutZeros.apply(g, (ctx.n,), (ctx.idx,), False).reshape(ctx.shape), None
