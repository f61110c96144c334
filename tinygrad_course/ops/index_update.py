"""Index updates behind `methods/shaping.py`: index_add / index_copy / index_fill, masked_scatter, put and
index_put, each writing into a copy of its input with PyTorch's checks and error messages. Forwards work on
backend arrays; backwards are framework ops (so double backward works)."""
from __future__ import annotations

import numpy as np

from .. import factories
from ..shapes import broadcast_shapes
from ..autograd.engine import Op
from ..dtypes import type_name
from ..shapes import normalize_dim
from ._util import first_out_of_range
from .indexing import AdvancedGetItem, _pad_to, _shape_str, _wrap, check_index_arrays


def _check_index_source(name, x, dim, index, source, index_dtypes):
    """PyTorch's checks shared by index_add_ and index_copy_; returns the normalised dim."""
    d = normalize_dim(dim, x.ndim)
    if index.dtype.name not in index_dtypes:
        if name == "index_add_":
            raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: {type_name(index.dtype)}")
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got {type_name(index.dtype)}")
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
                         f"{type_name(index.dtype)} and size: {_shape_str(index.shape)}")
    if source.dtype is not x.dtype:
        if name == "index_add_":
            raise RuntimeError(f"index_add_(): self ({type_name(x.dtype)}) and source ({type_name(source.dtype)}) "
                               "must have the same scalar type")
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{type_name(x.dtype)} and (source) {type_name(source.dtype)}")
    n_src = source._data.shape[d] if source.ndim else 1
    if index._data.size != n_src:
        if name == "index_add_":
            raise RuntimeError(f"index_add_(): Number of indices ({index._data.size}) should be equal to "
                               f"source.size(dim): ({n_src}), for dim: {d}")
        raise IndexError(f"index_copy_(): Number of indices ({index._data.size}) should be equal to "
                         f"source.size(dim) ({n_src})")
    xs, ss = x._data.shape, source._data.shape
    if source.ndim and x.ndim and (len(xs) != len(ss) or any(a != b for k, (a, b) in enumerate(zip(xs, ss)) if k != d)):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {_shape_str(xs)} source.shape = {_shape_str(ss)}")
    size = xs[d] if x.ndim else 1
    bad = first_out_of_range(index._data, size)
    if bad is not None:
        prefix = "index_copy_(): " if name == "index_copy_" else ""
        error = IndexError if name == "index_copy_" else RuntimeError
        raise error(f"{prefix}index {bad} is out of bounds for dimension {d} with size {size}")
    return d


class IndexAdd(Op):
    """`index_add(dim, index, source, alpha)`: a copy of x with alpha * source added at `index` along `dim`."""

    node_name = "IndexAddBackward0"

    @staticmethod
    def forward(ctx, x, dim, index, source, alpha=1):
        d = _check_index_source("index_add_", x, dim, index, source, ("int32", "int64"))
        xp = x._xp
        out = x._data.copy()
        src = source._data if alpha == 1 else (source._data * alpha).astype(out.dtype, copy=False)
        o = out.reshape(1) if x.ndim == 0 else xp.moveaxis(out, d, 0)
        s = src.reshape(1) if source.ndim == 0 else xp.moveaxis(src, d, 0)
        xp.add.at(o, index._data.reshape(-1), s)
        ctx.d, ctx.alpha, ctx.src_shape = d, alpha, source._data.shape
        ctx.save_for_backward(index)
        return out

    @staticmethod
    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        gsrc = None
        if ctx.needs_input_grad[3]:
            g1 = g if g.ndim else g.reshape(1)
            gsrc = g1.index_select(ctx.d, index.reshape(-1)).reshape(ctx.src_shape)
            if ctx.alpha != 1:
                gsrc = gsrc * ctx.alpha
        return g, None, None, gsrc


class IndexCopy(Op):
    """`index_copy(dim, index, source)`: a copy of x with the slices at `index` along `dim` replaced by source."""

    node_name = "IndexCopyBackward0"

    @staticmethod
    def forward(ctx, x, dim, index, source):
        d = _check_index_source("index_copy_", x, dim, index, source, ("int64",))
        xp = x._xp
        out = x._data.copy()
        o = out.reshape(1) if x.ndim == 0 else xp.moveaxis(out, d, 0)
        o[index._data.reshape(-1)] = source._data.reshape(1) if source.ndim == 0 else xp.moveaxis(source._data, d, 0)
        ctx.d, ctx.src_shape = d, source._data.shape
        ctx.save_for_backward(index)
        return out

    @staticmethod
    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        g1 = g if g.ndim else g.reshape(1)
        idx = index.reshape(-1)
        gx = g1.index_fill(ctx.d, idx, 0).reshape(g.shape) if ctx.needs_input_grad[0] else None
        gsrc = g1.index_select(ctx.d, idx).reshape(ctx.src_shape) if ctx.needs_input_grad[3] else None
        return gx, None, None, gsrc


class IndexFill(Op):
    """`index_fill(dim, index, value)`: a copy of x with the slices at `index` along `dim` set to `value`."""

    node_name = "IndexFillBackward0"

    @staticmethod
    def forward(ctx, x, dim, index, value):
        d = normalize_dim(dim, x.ndim)
        if index.dtype.name != "int64":
            raise IndexError("index_fill_(): Expected dtype int64 for index.")
        if index.ndim > 1:
            raise IndexError(f"index_fill_(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
                             f"{type_name(index.dtype)} and size: {_shape_str(index.shape)}")
        tensor_value = getattr(value, "_data", None) is not None
        if tensor_value and value.ndim:
            raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.ndim} dimension(s).")
        xp = x._xp
        size = x._data.shape[d] if x.ndim else 1
        idx = index._data.reshape(-1)
        bad = first_out_of_range(idx, size, negative_ok=True)
        if bad is not None:
            raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {size}")
        idx = xp.where(idx < 0, idx + size, idx)
        out = x._data.copy()
        o = out.reshape(1) if x.ndim == 0 else xp.moveaxis(out, d, 0)
        o[idx] = value._data.astype(out.dtype) if tensor_value else value
        ctx.d = d
        if tensor_value and ctx.needs_input_grad:
            ctx.__class__ = _INDEX_FILL_TENSOR_NODE
        ctx.save_for_backward(_wrap(idx))
        return out

    @staticmethod
    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        g1 = g if g.ndim else g.reshape(1)
        gx = g1.index_fill(ctx.d, index, 0).reshape(g.shape) if ctx.needs_input_grad[0] else None
        gv = g1.index_select(ctx.d, index).sum() if ctx.needs_input_grad[3] else None
        return gx, None, None, gv


_INDEX_FILL_TENSOR_NODE = type("IndexFillBackward1", (IndexFill._Node,), {})  # value given as a 0-d tensor


# ---- masked_scatter / put / index_put --------------------------------------------------------------

class MaskedScatter(Op):
    """`masked_scatter(mask, source)`: x with the True positions of `mask` filled from source, in order."""

    node_name = "MaskedScatterBackward0"

    @staticmethod
    def forward(ctx, x, mask, source):
        if mask.dtype.name != "bool":
            raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {type_name(mask.dtype)}")
        if source.dtype is not x.dtype:
            raise RuntimeError("masked_scatter: expected self and source to have same dtypes but got"
                               f"{type_name(x.dtype)} and {type_name(source.dtype)}")
        xp = x._xp

        shape = tuple(broadcast_shapes(x._data.shape, mask._data.shape))
        out = xp.broadcast_to(x._data, shape).copy()
        m = xp.broadcast_to(mask._data, shape)
        n = int(m.sum())  # data-dependent: how many source elements are used
        if n > source._data.size:
            raise RuntimeError("Number of elements of source < number of ones in mask")
        out[m] = source._data.reshape(-1)[:n]
        ctx.src_shape, ctx.n = source._data.shape, n
        ctx.save_for_backward(_wrap(m))
        return out

    @staticmethod
    def backward(ctx, g):
        (m,) = ctx.saved_tensors
        gx = gsrc = None
        if ctx.needs_input_grad[0]:
            gx = g.masked_fill(m, 0)
        if ctx.needs_input_grad[2]:
            picked = AdvancedGetItem.apply(g, (m._data,), False)
            numel = int(np.prod(ctx.src_shape))
            gsrc = _pad_to(picked, (numel,)).reshape(ctx.src_shape)
        return gx, None, gsrc


class Put(Op):
    """`put(index, source, accumulate)`: x seen as 1-D with source written (or added) at `index`."""

    node_name = "PutBackward0"

    @staticmethod
    def forward(ctx, x, index, source, accumulate=False):
        if index.dtype.name != "int64":
            raise RuntimeError(f"put_(): Expected a long tensor for index, but got {type_name(index.dtype)}")
        if source.dtype is not x.dtype:
            raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                               f"{type_name(x.dtype)} and source.dtype = {type_name(source.dtype)}")
        if index._data.size != source._data.size:
            raise IndexError("put_(): Expected source and index to have the same number of elements, but got "
                             f"source.numel() = {source._data.size}, index.numel() = {index._data.size}")
        xp = x._xp
        numel = x._data.size
        idx = index._data.reshape(-1)
        bad = first_out_of_range(idx, numel, negative_ok=True)
        if bad is not None:
            raise IndexError(f"out of range: tried to access index {bad} on a tensor of {numel} elements.")
        idx = xp.where(idx < 0, idx + numel, idx)
        out = x._data.copy()
        flat = out.reshape(-1)
        if accumulate:
            xp.add.at(flat, idx, source._data.reshape(-1))
        else:
            flat[idx] = source._data.reshape(-1)
        ctx.accumulate, ctx.src_shape = accumulate, source._data.shape
        ctx.save_for_backward(_wrap(idx))
        return out

    @staticmethod
    def backward(ctx, g):
        (idx,) = ctx.saved_tensors
        gx = gsrc = None
        if ctx.needs_input_grad[0]:
            if ctx.accumulate:
                gx = g
            else:
                gx = g.put(idx, factories.zeros(idx.shape, dtype=g.dtype, device=g.device))
        if ctx.needs_input_grad[2]:
            gsrc = g.reshape(-1).index_select(0, idx).reshape(ctx.src_shape)
        return gx, None, gsrc


def integer_index(nidx, xp):
    """A NumPy-style index tuple with every bool array replaced by its integer positions (for `add.at`)."""
    out = []
    for i in nidx:
        if getattr(getattr(i, "dtype", None), "kind", None) == "b":
            out.extend(xp.nonzero(i) if isinstance(i, xp.ndarray) else np.nonzero(i))
        else:
            out.append(i)
    return tuple(out)


class IndexPut(Op):
    """`index_put(indices, values, accumulate)`: `x[indices] = values` (or `+=` with accumulate) on a copy."""

    node_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx, x, values, nidx, accumulate=False):
        if values.dtype is not x.dtype:
            raise RuntimeError("Index put requires the source and destination dtypes match, got "
                               f"{type_name(x.dtype)} for the destination and {type_name(values.dtype)} for the source.")
        xp = x._xp
        check_index_arrays(x._data, nidx)
        nidx = tuple(xp.asarray(i) if isinstance(i, np.ndarray) and xp is not np else i for i in nidx)
        out = x._data.copy()
        target_shape = out[nidx].shape
        try:
            v = xp.broadcast_to(values._data, target_shape)
        except ValueError:
            raise RuntimeError(f"shape mismatch: value tensor of shape {_shape_str(values._data.shape)} cannot be "
                               f"broadcast to indexing result of shape {_shape_str(target_shape)}") from None
        if accumulate:
            xp.add.at(out, integer_index(nidx, xp), v)
        else:
            out[nidx] = v
        ctx.nidx, ctx.accumulate = nidx, accumulate
        return out

    @staticmethod
    def backward(ctx, g):
        gx = gv = None
        if ctx.needs_input_grad[0]:
            if ctx.accumulate:
                gx = g
            else:
                gx = IndexPut.apply(g, factories.zeros((), dtype=g.dtype, device=g.device), ctx.nidx, False)
        if ctx.needs_input_grad[1]:
            gv = AdvancedGetItem.apply(g, ctx.nidx, False)
        return gx, gv
