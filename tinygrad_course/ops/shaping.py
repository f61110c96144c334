"""Index updates and shape ops behind `methods/shaping.py`: index_add / index_copy / index_fill,
masked_scatter, put, index_put, scatter_reduce, roll, rot90, unfold and as_strided. Forwards work on
backend arrays; backwards are framework ops (so double backward works)."""
from __future__ import annotations

import numpy as np

from ..autograd.function import Op
from ._util import first_out_of_range, normalize_dim, type_name
from .elementwise import where
from .movement import AdvancedGetItem, IndexPutZeros, _check_dim_index, _open_grids


def _wrap(arr):
    from ..tensor import _wrap as wrap

    return wrap(arr)


def _along(d, idx):
    """An index tuple that applies `idx` to dimension `d`."""
    return (slice(None),) * d + (idx,)


def _shape_str(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _pad_to(g, shape):
    """`g` (the leading block of a tensor of `shape`) padded with zeros up to `shape`."""
    if tuple(g.shape) == tuple(shape):
        return g
    return IndexPutZeros.apply(g, tuple(shape), tuple(slice(0, s) for s in g.shape), True)


# ---- index_add / index_copy / index_fill ---------------------------------------------------------

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
        from .._functions import broadcast_shapes

        shape = tuple(broadcast_shapes(x._data.shape, mask._data.shape))
        out = xp.broadcast_to(x._data, shape).copy()
        m = xp.broadcast_to(mask._data, shape)
        n = int(m.sum())  # data-dependent: how many source elements are used
        if n > source._data.size:
            raise RuntimeError("Number of elements of source < number of ones in mask")
        out[m] = source._data.reshape(-1)[:n]
        ctx.x_shape, ctx.src_shape, ctx.n = x._data.shape, source._data.shape, n
        ctx.save_for_backward(_wrap(m))
        return out

    @staticmethod
    def backward(ctx, g):
        from .elementwise import sum_to_shape

        (m,) = ctx.saved_tensors
        gx = gsrc = None
        if ctx.needs_input_grad[0]:
            gx = sum_to_shape(g.masked_fill(m, 0), ctx.x_shape)
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
                from .. import factories

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
        from .movement import check_index_arrays

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
        ctx.nidx, ctx.accumulate, ctx.v_shape = nidx, accumulate, values._data.shape
        return out

    @staticmethod
    def backward(ctx, g):
        from .elementwise import sum_to_shape

        gx = gv = None
        if ctx.needs_input_grad[0]:
            if ctx.accumulate:
                gx = g
            else:
                from .. import factories

                gx = IndexPut.apply(g, factories.zeros((), dtype=g.dtype, device=g.device), ctx.nidx, False)
        if ctx.needs_input_grad[1]:
            gv = sum_to_shape(AdvancedGetItem.apply(g, ctx.nidx, False), ctx.v_shape)
        return gx, gv


# ---- scatter_reduce ----------------------------------------------------------------------------------

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


# ---- roll / rot90 ------------------------------------------------------------------------------------

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


# ---- unfold / as_strided (views) ---------------------------------------------------------------------

class Unfold(Op):
    """`unfold(dimension, size, step)`: a view of every `size`-long window along `dimension`, `step` apart."""

    node_name = "UnfoldBackward0"
    view = True

    @staticmethod
    def forward(ctx, x, dimension, size, step):
        a = x._data
        d = normalize_dim(dimension, x.ndim)
        length = a.shape[d] if x.ndim else 1
        if size < 0:
            raise RuntimeError(f"size is {size} but must be >= 0")
        if size > length:
            raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is {size}")
        if step <= 0:
            raise RuntimeError(f"step is {step} but must be > 0")
        ctx.in_shape, ctx.d, ctx.size, ctx.step = a.shape, d, size, step
        xp = x._xp
        if x.ndim == 0:
            return xp.lib.stride_tricks.as_strided(a, shape=(size,), strides=(a.itemsize,))
        shape = list(a.shape)
        strides = list(a.strides)
        shape[d] = (length - size) // step + 1
        strides[d] = a.strides[d] * step
        return xp.lib.stride_tricks.as_strided(a, shape=tuple(shape) + (size,), strides=tuple(strides) + (a.strides[d],))

    @staticmethod
    def backward(ctx, g):
        return UnfoldBackward.apply(g, ctx.in_shape, ctx.d, ctx.size, ctx.step)


class UnfoldBackward(Op):
    """Sum the windows of `unfold`'s gradient back into the input's shape."""

    node_name = "UnfoldBackwardBackward0"

    @staticmethod
    def forward(ctx, g, in_shape, d, size, step):
        ctx.d, ctx.size, ctx.step = d, size, step
        xp = g._xp
        a = g._data
        if not in_shape:
            return a.sum().astype(a.dtype).reshape(())
        out = xp.zeros(in_shape, dtype=a.dtype)
        n = a.shape[d]
        win = xp.moveaxis(a, -1, d + 1)  # (..., n, size, ...)
        if size <= n:
            for j in range(size):  # offset j of every window lands at j, j + step, ...
                out[_along(d, slice(j, j + step * (n - 1) + 1, step))] += win[_along(d + 1, j)]
        else:
            for i in range(n):  # window i covers i*step .. i*step+size-1
                out[_along(d, slice(i * step, i * step + size))] += win[_along(d, i)]
        return out

    @staticmethod
    def backward(ctx, gg):
        return Unfold.apply(gg, ctx.d, ctx.size, ctx.step)


def _storage_root(x):
    """The tensor owning x's storage (x itself, or the base of a view)."""
    return x if x._base is None else x._base


class AsStrided(Op):
    """`as_strided(size, stride, storage_offset)`: a view on x's storage with the given geometry."""

    node_name = "AsStridedBackward0"
    view = True

    @staticmethod
    def forward(ctx, x, size, stride, storage_offset):
        root = _storage_root(x)._data
        if not root.flags.c_contiguous:
            raise RuntimeError("as_strided needs a tensor whose storage is laid out row-major. "
                               "Hint: call .contiguous() on the base tensor first.")
        if len(size) != len(stride):
            raise RuntimeError("mismatch in length of strides and shape")
        if any(s < 0 for s in stride):
            raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                               f"{_shape_str(stride)}")
        if any(s < 0 for s in size):
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {_shape_str(size)}")
        item = root.itemsize
        needed = 0 if 0 in size else storage_offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
        if needed > root.size:
            raise RuntimeError(f"setStorage: sizes {_shape_str(size)}, strides {_shape_str(stride)}, storage offset "
                               f"{storage_offset}, and itemsize {item} requiring a storage size of {needed * item} are "
                               f"out of bounds for storage of size {root.size * item}")
        flat = root.reshape(-1)
        xp = x._xp
        out = xp.lib.stride_tricks.as_strided(flat[storage_offset:] if flat.size else flat, shape=tuple(size),
                                              strides=tuple(s * item for s in stride))
        if ctx.needs_input_grad and ctx.needs_input_grad[0]:
            positions = xp.arange(root.size, dtype=np.int64)
            ctx.out_pos = _wrap(_strided_positions(xp, positions, storage_offset, size, stride))
            ctx.in_pos = _wrap(_strided_positions(xp, positions, x.storage_offset(), x._data.shape,
                                                  [s // item for s in x._data.strides]))
            ctx.storage = root.size
        return out

    @staticmethod
    def backward(ctx, g):
        storage = IndexPutZeros.apply(g.reshape(-1), (ctx.storage,), (ctx.out_pos._data.reshape(-1),), False)
        return storage.index_select(0, ctx.in_pos.reshape(-1)).reshape(ctx.in_pos.shape)


def _strided_positions(xp, positions, offset, size, stride):
    """Storage positions of the elements of a view with geometry (offset, size, stride)."""
    if 0 in tuple(size):
        return xp.zeros(tuple(size), dtype=np.int64)
    item = positions.itemsize
    return xp.lib.stride_tricks.as_strided(positions[offset:], shape=tuple(size),
                                           strides=tuple(s * item for s in stride)).copy()
