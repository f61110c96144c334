"""Shape and indexing ops. Views (`view`, `permute`, `expand`, basic slicing, ...) return backend
views, so they share storage and strides with their input, as in PyTorch; advanced indexing,
`cat`, `stack`, `repeat` and `flip` copy.
"""
from __future__ import annotations

import math

import numpy as np

from ..autograd.function import Op
from ._util import check_same_device, first_out_of_range, normalize_dim


def infer_shape(shape, numel):
    """Resolve one -1 in `shape` for a tensor of `numel` elements; PyTorch's errors otherwise."""
    shape = tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in shape:
        known = math.prod([s for s in shape if s != -1])
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    if math.prod(shape) != numel:
        raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size {numel}")
    return shape


class View(Op):
    node_name = "ViewBackward0"
    view = True

    @staticmethod
    def forward(ctx, x, shape):
        shape = infer_shape(shape, x._data.size)
        ctx.shape = x._data.shape
        try:
            return x._data.reshape(shape, copy=False)
        except (ValueError, AttributeError, TypeError):
            out = x._data.view()
            try:
                out.shape = shape
            except AttributeError:
                raise RuntimeError(
                    "view size is not compatible with input tensor's size and stride (at least one dimension spans "
                    "across two contiguous subspaces). Use .reshape(...) instead."
                ) from None
            return out

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.shape)


class ReshapeAlias(View):
    """`reshape` of a non-contiguous tensor whose strides allow a view (PyTorch's ReshapeAliasBackward0)."""

    node_name = "ReshapeAliasBackward0"


class UnsafeView(Op):
    """The reshape of a copy (`reshape` of a tensor whose strides allow no view): PyTorch records it as
    CloneBackward0 -> UnsafeViewBackward0. Not a view: it shares memory only with the fresh copy."""

    node_name = "UnsafeViewBackward0"

    @staticmethod
    def forward(ctx, x, shape):
        shape = infer_shape(shape, x._data.size)
        ctx.shape = x._data.shape
        return x._data.reshape(shape)

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.shape)


class Permute(Op):
    node_name = "PermuteBackward0"
    view = True

    @staticmethod
    def forward(ctx, x, dims):
        nd = x.ndim
        dims = tuple(normalize_dim(d, nd) for d in dims)
        if len(dims) != nd:
            raise RuntimeError(
                f"permute(sparse_coo): number of dimensions in the tensor input does not match the length of the "
                f"desired ordering of dimensions i.e. input.dim() = {nd} is not equal to len(dims) = {len(dims)}"
            )
        if len(set(dims)) != nd:
            raise RuntimeError("permute(): duplicate dims are not allowed.")
        ctx.inverse = tuple(np.argsort(dims))
        return x._data.transpose(dims)

    @staticmethod
    def backward(ctx, g):
        return g.permute(*ctx.inverse)


class Transpose(Op):
    node_name = "TransposeBackward0"
    view = True

    @staticmethod
    def forward(ctx, x, d0, d1):
        nd = x.ndim
        if nd == 0:
            return x._data
        d0, d1 = normalize_dim(d0, nd), normalize_dim(d1, nd)
        ctx.d0, ctx.d1 = d0, d1
        return x._xp.swapaxes(x._data, d0, d1)

    @staticmethod
    def backward(ctx, g):
        if g.ndim == 0:
            return g
        return g.transpose(ctx.d0, ctx.d1)


class T(Transpose):
    node_name = "TBackward0"


class Expand(Op):
    node_name = "ExpandBackward0"
    view = True

    @staticmethod
    def forward(ctx, x, shape):
        in_shape = x._data.shape
        shape = tuple(int(s) for s in shape)
        if len(shape) < len(in_shape):
            raise RuntimeError(
                f"expand(tc.{x.dtype.name.capitalize()}Tensor{{[{', '.join(map(str, in_shape))}]}}, size=[{', '.join(map(str, shape))}]): "
                f"the number of sizes provided ({len(shape)}) must be greater or equal to the number of dimensions in the tensor ({len(in_shape)})"
            )
        lead = len(shape) - len(in_shape)
        full = tuple(in_shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(shape))
        for i, s in reversed(list(enumerate(in_shape))):  # PyTorch reports the right-most mismatch
            if s != 1 and s != full[lead + i]:
                raise RuntimeError(
                    f"The expanded size of the tensor ({full[lead + i]}) must match the existing size ({s}) at "
                    f"non-singleton dimension {lead + i}.  Target sizes: [{', '.join(map(str, shape))}].  "
                    f"Tensor sizes: [{', '.join(map(str, in_shape))}]"
                )
        ctx.shape = in_shape
        return x._xp.broadcast_to(x._data, full)

    @staticmethod
    def backward(ctx, g):
        from .elementwise import sum_to_shape

        return sum_to_shape(g, ctx.shape)


class Squeeze(Op):
    node_name = "SqueezeBackward1"
    view = True

    @staticmethod
    def forward(ctx, x, dim=None):
        ctx.shape = x._data.shape
        if dim is None:
            return x._data.squeeze()
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        dims = tuple(normalize_dim(d, x.ndim) for d in dims)
        drop = tuple(d for d in dims if x.ndim and x._data.shape[d] == 1)
        return x._data.squeeze(drop) if drop else x._data.view()

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.shape)


class Unsqueeze(Op):
    node_name = "UnsqueezeBackward0"
    view = True

    @staticmethod
    def forward(ctx, x, dim):
        d = normalize_dim(dim, x.ndim + 1)
        ctx.d = d
        return x._xp.expand_dims(x._data, d)

    @staticmethod
    def backward(ctx, g):
        return g.squeeze(ctx.d)


class AliasView(Op):
    """view_as / detach-free alias used for `x.view_as(x)`, `x.data`-like aliases and `x[...]`."""

    node_name = "AliasBackward0"
    view = True

    @staticmethod
    def forward(ctx, x):
        return x._data.view()

    @staticmethod
    def backward(ctx, g):
        return g


# ---- indexing --------------------------------------------------------------------------------------

def _is_basic(idx):
    return isinstance(idx, (int, slice, type(None), type(Ellipsis))) and not isinstance(idx, bool)


def normalize_index(idx, Tensor):
    """Translate a PyTorch index into a NumPy one; returns (index, is_basic)."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    out = []
    basic = True
    for i in idx:
        if isinstance(i, Tensor):
            if i.dtype.name == "bool" or i.dtype.category == 1:
                if i.ndim == 0 and i.dtype.name != "bool":
                    out.append(int(i._data))
                    continue
                out.append(i._data)
                basic = False
            else:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        elif isinstance(i, slice):
            if i.step is not None and i.step <= 0:
                raise ValueError("step must be greater than zero")
            out.append(i)
        elif isinstance(i, (list, np.ndarray)) or isinstance(i, bool):
            arr = np.asarray(i)
            if arr.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            out.append(arr)
            basic = False
        elif isinstance(i, (int, np.integer)):
            out.append(int(i))
        elif i is None or i is Ellipsis:
            out.append(i)
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
                f"(got {type(i).__name__})"
            )
    return tuple(out), basic


def _indexed_dims(shape, idx):
    """(entry, the dim it starts at) for each entry of index tuple `idx`, skipping None and expanding `...`."""
    dim = 0
    n_real = sum(1 for i in idx if i is not None and i is not Ellipsis)
    for i in idx:
        if i is Ellipsis:
            dim += len(shape) - n_real
        elif i is not None:
            yield i, dim
            dim += i.ndim if getattr(getattr(i, "dtype", None), "kind", None) == "b" else 1


def _check_bounds(shape, idx):
    """Raise PyTorch's IndexError for an out-of-range integer index."""
    for i, dim in _indexed_dims(shape, idx):
        if dim >= len(shape):
            raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
        if isinstance(i, int) and not -shape[dim] <= i < shape[dim]:
            raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {shape[dim]}")


def check_index_arrays(data, idx):
    """Raise PyTorch's IndexError for out-of-range integer index arrays. PyTorch numbers the dimension
    among the index tensors (x[:, [7]] on a (2, 3) tensor: "dimension 0 with size 3"). Needed on the GPU
    above all, where CuPy would wrap an out-of-range index around silently."""
    shape, position = data.shape, 0
    for i, dim in _indexed_dims(shape, idx):
        kind = getattr(getattr(i, "dtype", None), "kind", None)
        if kind in ("i", "u") and dim < len(shape):
            bad = first_out_of_range(i, shape[dim], negative_ok=True)
            if bad is not None:
                raise IndexError(f"index {bad} is out of bounds for dimension {position} with size {shape[dim]}")
        if kind is not None:
            position += i.ndim if kind == "b" else 1


class GetItem(Op):
    node_name = "SliceBackward0"

    @staticmethod
    def forward(ctx, x, idx, basic):
        data = x._data
        if basic:
            _check_bounds(data.shape, idx)
        else:
            check_index_arrays(data, idx)
        try:
            # `...` at the end keeps an all-integer index a 0-d view (as in PyTorch), not a copied scalar
            out = data[idx + (Ellipsis,)] if basic and Ellipsis not in idx else data[idx]
        except IndexError as e:
            raise IndexError(str(e).replace("axis", "dimension").replace("array", "tensor")) from None
        ctx.shape, ctx.idx, ctx.basic, ctx.dtype = data.shape, idx, basic, x.dtype
        ctx.view = basic
        if type(out) is not type(data):
            out = x._xp.asarray(out)
        return out

    @staticmethod
    def backward(ctx, g):
        return IndexPutZeros.apply(g, ctx.shape, ctx.idx, ctx.basic)


class SelectItem(GetItem):
    node_name = "SelectBackward0"


class AdvancedGetItem(GetItem):
    node_name = "IndexBackward0"


class AsStridedView(AdvancedGetItem):
    """A view's values re-read from its base after an in-place op on the view (PyTorch's name)."""

    node_name = "AsStridedBackward0"


class IndexPutZeros(Op):
    """Scatter a gradient `g` into zeros of `shape` at index `idx` (backward of indexing)."""

    node_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx, g, shape, idx, basic):
        xp = g._xp
        out = xp.zeros(shape, dtype=g._data.dtype)
        if basic:
            out[idx] = g._data
        else:
            xp.add.at(out, idx, g._data)  # repeated indices accumulate (cupy.add.at on the GPU; setitem would not)
        ctx.idx, ctx.basic = idx, basic
        return out

    @staticmethod
    def backward(ctx, gg):
        return (SelectItem if ctx.basic else AdvancedGetItem).apply(gg, ctx.idx, ctx.basic)


class CopySlices(Op):
    """x[idx] = value, recorded for autograd: the old x gets the gradient outside idx, value inside."""

    node_name = "CopySlices"

    @staticmethod
    def forward(ctx, old, value, idx, basic):
        data = old._data.copy()
        v = value._data if getattr(value, "_data", None) is not None else value
        data[idx] = v
        ctx.idx, ctx.basic = idx, basic
        ctx.vmeta = (value._data.shape, value.dtype) if getattr(value, "_data", None) is not None else None
        return data

    @staticmethod
    def backward(ctx, g):
        from .elementwise import _grad_like

        g_old = g_val = None
        if ctx.needs_input_grad[0]:
            mask = g._xp.ones(g._data.shape, dtype=bool)
            mask[ctx.idx] = False
            from ..tensor import _wrap

            g_old = g * _wrap(mask)
        if ctx.needs_input_grad[1]:
            sel = (SelectItem if ctx.basic else AdvancedGetItem).apply(g, ctx.idx, ctx.basic)
            g_val = _grad_like(sel, *ctx.vmeta)
        return g_old, g_val


# ---- joining and splitting -------------------------------------------------------------------------

class Cat(Op):
    node_name = "CatBackward0"

    @staticmethod
    def forward(ctx, *tensors, dim=0):
        if not tensors:
            raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
        from .. import dtypes as _dt

        rd = _dt.result_type(*tensors)
        # PyTorch still skips legacy empty 1-D tensors of shape (0,) in cat.
        skip = [t.ndim == 1 and t._data.shape[0] == 0 for t in tensors]
        kept = [t for t, s in zip(tensors, skip) if not s] or [tensors[0]]
        ref = kept[0]
        if ref.ndim == 0:
            raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
        d = normalize_dim(dim, ref.ndim)
        for i, t in enumerate(tensors):
            if skip[i] and t is not ref:
                continue
            check_same_device(ref, t)
            if t.ndim != ref.ndim:
                raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {t.ndim}")
            for k in range(ref.ndim):
                if k != d and t._data.shape[k] != ref._data.shape[k]:
                    raise RuntimeError(
                        f"Sizes of tensors must match except in dimension {d}. Expected size {ref._data.shape[k]} but "
                        f"got size {t._data.shape[k]} for tensor number {i} in the list."
                    )
        ctx.d = d
        ctx.parts = [(None if s else t._data.shape[d], t.dtype) for t, s in zip(tensors, skip)]
        arrays = [t._data if t.dtype is rd else t._data.astype(rd.np_dtype) for t in kept]
        return ref._xp.concatenate(arrays, axis=d)

    @staticmethod
    def backward(ctx, g):
        from .. import factories

        grads = []
        start = 0
        for size, dt in ctx.parts:
            if size is None:
                grads.append(factories.zeros(0, dtype=dt, device=g.device))
                continue
            part = g.narrow(ctx.d, start, size)
            grads.append(part if part.dtype is dt else part.to(dt))
            start += size
        return tuple(grads)


class Stack(Op):
    node_name = "StackBackward0"

    @staticmethod
    def forward(ctx, *tensors, dim=0):
        if not tensors:
            raise RuntimeError("stack expects a non-empty TensorList")
        shape = tensors[0]._data.shape
        for i, t in enumerate(tensors):
            check_same_device(tensors[0], t)
            if t._data.shape != shape:
                raise RuntimeError(
                    f"stack expects each tensor to be equal size, but got [{', '.join(map(str, shape))}] at entry 0 "
                    f"and [{', '.join(map(str, t._data.shape))}] at entry {i}"
                )
        from .. import dtypes as _dt

        rd = _dt.result_type(*tensors)
        d = normalize_dim(dim, len(shape) + 1)
        ctx.d, ctx.n, ctx.dtypes = d, len(tensors), [t.dtype for t in tensors]
        return tensors[0]._xp.stack([t._data if t.dtype is rd else t._data.astype(rd.np_dtype) for t in tensors], axis=d)

    @staticmethod
    def backward(ctx, g):
        return tuple(p if p.dtype is dt else p.to(dt) for p, dt in zip(g.unbind(ctx.d), ctx.dtypes))


class Narrow(Op):
    node_name = "SliceBackward0"  # PyTorch's narrow is a slice
    view = True

    @staticmethod
    def forward(ctx, x, dim, start, length):
        d = normalize_dim(dim, x.ndim)
        size = x._data.shape[d]
        if start < 0:
            start += size
        if not (0 <= start and start + length <= size):
            raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
        idx = (slice(None),) * d + (slice(start, start + length),)
        ctx.shape, ctx.idx = x._data.shape, idx
        return x._data[idx]

    @staticmethod
    def backward(ctx, g):
        return IndexPutZeros.apply(g, ctx.shape, ctx.idx, True)


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
        from .. import factories

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
                from .. import factories

                full = factories.zeros(ctx.src_shape, dtype=g.dtype, device=g.device)
                gsrc = IndexPutZeros.apply(gsrc, ctx.src_shape, tuple(slice(0, s) for s in gsrc.shape), True) + full
        return gx, None, None, gsrc


class ScatterAdd(Scatter):
    node_name = "ScatterAddBackward0"


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


class Unbind(Op):
    node_name = "UnbindBackward0"
    view = True

    @staticmethod
    def forward(ctx, x, dim=0):
        d = normalize_dim(dim, x.ndim)
        ctx.d, ctx.shape, ctx.dtype, ctx.device = d, x._data.shape, x.dtype, x._device
        return tuple(x._data[(slice(None),) * d + (i,)] for i in range(x._data.shape[d]))

    @staticmethod
    def backward(ctx, *grads):
        from .. import factories

        shape = ctx.shape[:ctx.d] + ctx.shape[ctx.d + 1:]
        parts = [g if g is not None else factories.zeros(shape, dtype=ctx.dtype, device=ctx.device) for g in grads]
        return stack(parts, ctx.d)


class Split(Op):
    node_name = "SplitWithSizesBackward0"
    view = True

    @staticmethod
    def forward(ctx, x, sizes, dim=0, by_size=False):
        d = normalize_dim(dim, x.ndim)
        total = x._data.shape[d]
        if sum(sizes) != total:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {total} (input tensor's size at dimension "
                f"{d}), but got split_sizes={list(sizes)}"
            )
        ctx.d, ctx.shape, ctx.sizes, ctx.dtype, ctx.device = d, x._data.shape, sizes, x.dtype, x._device
        if by_size and ctx.needs_input_grad:
            ctx.__class__ = _SPLIT_BY_SIZE_NODE
        out, start = [], 0
        for s in sizes:
            out.append(x._data[(slice(None),) * d + (slice(start, start + s),)])
            start += s
        return tuple(out)

    @staticmethod
    def backward(ctx, *grads):
        from .. import factories

        parts = []
        for g, s in zip(grads, ctx.sizes):
            if g is None:
                shape = list(ctx.shape)
                shape[ctx.d] = s
                g = factories.zeros(shape, dtype=ctx.dtype, device=ctx.device)
            parts.append(g)
        return cat(parts, ctx.d)


_SPLIT_BY_SIZE_NODE = type("SplitBackward0", (Split._Node,), {})  # x.split(int) rather than x.split(list)


class MaskedFill(Op):
    node_name = "MaskedFillBackward0"

    @staticmethod
    def forward(ctx, x, mask, value):
        if mask.dtype.name != "bool":
            raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {mask.dtype.name}")
        v = value._data if getattr(value, "_data", None) is not None else value
        ctx.save_for_backward(mask)
        out = x._xp.where(mask._data, x._xp.asarray(v, dtype=x._data.dtype), x._data)
        return out.astype(x._data.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        (mask,) = ctx.saved_tensors
        from .elementwise import sum_to_shape

        return sum_to_shape(g.masked_fill(mask, 0.0), g.shape), None, None


class IndexSelect(Op):
    node_name = "IndexSelectBackward0"

    @staticmethod
    def forward(ctx, x, dim, index):
        d = normalize_dim(dim, x.ndim)
        ctx.d, ctx.shape = d, x._data.shape
        bad = first_out_of_range(index._data, x._data.shape[d])
        if bad is not None:
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={x._data.shape[d]}")
        ctx.save_for_backward(index)
        return x._xp.take(x._data, index._data, axis=d)

    @staticmethod
    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        idx = (slice(None),) * ctx.d + (index._data,)
        return IndexPutZeros.apply(g, ctx.shape, idx, False), None, None


class Triangle(Op):
    """tril / triu: keep the lower / upper triangle (with diagonal offset), zero the rest."""

    node_name = "TrilBackward0"

    @staticmethod
    def forward(ctx, x, diagonal=0, upper=False):
        ctx.diagonal, ctx.upper = diagonal, upper
        return (x._xp.triu if upper else x._xp.tril)(x._data, diagonal)

    @staticmethod
    def backward(ctx, g):
        return g.triu(ctx.diagonal) if ctx.upper else g.tril(ctx.diagonal)


class Triu(Triangle):
    node_name = "TriuBackward0"


class Overwrite(Op):
    """`fill_`, `zero_` and `copy_` recorded for autograd: the old values get no gradient, a tensor
    `value` gets the (broadcast-reduced) gradient. `node` picks PyTorch's node name."""

    node_name = "FillBackward0"
    _named = {}

    @staticmethod
    def forward(ctx, t, value, node="FillBackward0"):
        xp = t._xp
        data = value._data if getattr(value, "_data", None) is not None else value
        ctx.vmeta = (value._data.shape, value.dtype) if getattr(value, "_data", None) is not None else None
        if node != "FillBackward0":
            ctx.__class__ = Overwrite._node_class(node)
        return xp.broadcast_to(xp.asarray(data, dtype=t.dtype.np_dtype), t._data.shape)

    @staticmethod
    def backward(ctx, g):
        from .elementwise import _grad_like

        g_value = _grad_like(g, *ctx.vmeta) if ctx.vmeta is not None and ctx.needs_input_grad[1] else None
        return (g * 0 if ctx.needs_input_grad[0] else None), g_value

    @staticmethod
    def _node_class(name):
        cls = Overwrite._named.get(name)
        if cls is None:
            cls = Overwrite._named[name] = type(name, (Overwrite._Node,), {})
        return cls


class Clone(Op):
    node_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, x):
        return x._data.copy()

    @staticmethod
    def backward(ctx, g):
        return g


class ToCopy(Op):
    """Conversion to another dtype (and/or device): `to`, `float()`, `long()`, ..."""

    node_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, x, dtype=None, device=None, copy=False):
        from .._backend import check_dtype_on_device, to_device_array

        ctx.in_dtype, ctx.in_device = x.dtype, x._device
        data = x._data
        if device is not None and device != x._device:
            data = to_device_array(data, device)
            copy = False
        if dtype is not None and dtype is not x.dtype:
            check_dtype_on_device(dtype.np_dtype, device or x._device)
            data = data.astype(dtype.np_dtype)
        elif copy:
            data = data.copy()
        return data

    @staticmethod
    def backward(ctx, g):
        return g.to(dtype=ctx.in_dtype, device=ctx.in_device)


def cat(tensors, dim=0, *, out=None):
    """Concatenate tensors along an existing dimension."""
    return Cat.apply(*tensors, dim=dim)


concat = concatenate = cat


def stack(tensors, dim=0, *, out=None):
    """Stack equally shaped tensors along a new dimension."""
    return Stack.apply(*tensors, dim=dim)
