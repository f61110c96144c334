"""Indexing: `x[idx]` (basic indexing gives a view, advanced indexing a copy), `x[idx] = v` (CopySlices),
narrow, index_select, masked_fill, tril/triu, and fill_/zero_/copy_ recorded for autograd. The backward of
a read scatters the gradient into zeros (IndexPutZeros).
"""
from __future__ import annotations

import numpy as np

from .. import seams
from ..autograd.engine import Op
from ..tensor_base import _wrap
from ..shapes import normalize_dim
from ._util import first_out_of_range
from . import storage_views


def _is_basic(idx):
    return isinstance(idx, (int, slice, type(None), type(Ellipsis))) and not isinstance(idx, bool)


def _plain_sequence(seq):
    """A Python sequence index (list, tuple, range; possibly of tensors) as nested Python values."""
    if isinstance(seq, (list, tuple, range)):
        return [_plain_sequence(x) for x in seq]
    if hasattr(seq, "_data"):
        return seq.tolist()
    return seq


def normalize_index(idx, TensorBase):
    """Translate a PyTorch index into a NumPy one; returns (index, is_basic)."""
    if isinstance(idx, list) and len(idx) < 32 and any(
            isinstance(i, (TensorBase, list, tuple, range, slice, np.ndarray)) or i is None or i is Ellipsis for i in idx):
        idx = tuple(idx)  # PyTorch (like old NumPy) reads a short list holding sequences as a tuple of indices
    if not isinstance(idx, tuple):
        idx = (idx,)
    out = []
    basic = True
    for i in idx:
        if type(i) is slice and i.step is None or type(i) is int:  # the common entries, checked first
            out.append(i)
        elif isinstance(i, TensorBase):
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
        elif isinstance(i, (list, tuple, range, np.ndarray)) or isinstance(i, bool):
            nested_tensors = isinstance(i, (list, tuple)) and any(isinstance(v, (TensorBase, list, tuple)) for v in i)
            arr = np.asarray(_plain_sequence(i) if nested_tensors else i)
            if arr.size == 0 and arr.dtype.kind == "f":
                arr = arr.astype(np.int64)  # an empty list indexes nothing, as in PyTorch
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
    if len(idx) <= len(shape) and None not in idx and Ellipsis not in idx:  # ints and slices, one per dim
        for dim, i in enumerate(idx):
            if type(i) is int and not -shape[dim] <= i < shape[dim]:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {shape[dim]}")
        return
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
    component = "GetItem"  # build mode: a learner's GetItem computes x[key] (SelectItem's and AdvancedGetItem's too)

    @staticmethod
    def forward(ctx, x, idx, basic):
        data = x._data
        if basic:
            _check_bounds(data.shape, idx)
        else:
            check_index_arrays(data, idx)
        out = None
        if basic and "index_view" in seams.ACTIVE:  # build mode: the view made from the learner's stride arithmetic
            out = storage_views.indexed(x, idx)
        try:
            # `...` at the end keeps an all-integer index a 0-d view (as in PyTorch), not a copied scalar
            if out is None:
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


class UnsqueezeItem(GetItem):
    node_name = "UnsqueezeBackward0"


class AliasItem(GetItem):
    node_name = "AliasBackward0"


def basic_item_op(idx, shape):
    """The op of `x[idx]` for a basic key, named as PyTorch names its last step (its `grad_fn`): an int selects
    (`x[:, 1]`: SelectBackward0), None unsqueezes (`x[None]`), a slice that is not the whole dim slices
    (`x[1:3]`), and a key that changes nothing (`x[...]`, `x[:]`) is an alias. PyTorch records one node per step
    (`x[1, 2:4]` is a SliceBackward0 after a SelectBackward0); here the whole key is one node."""
    op, dim, rank = AliasItem, 0, len(shape)
    for k in idx:
        if k is None:
            op = UnsqueezeItem
        elif k is Ellipsis:
            dim += rank - sum(1 for j in idx if j is not None and j is not Ellipsis)
        elif type(k) is int:
            op, dim = SelectItem, dim + 1
        else:
            if dim >= rank or k.indices(shape[dim]) != (0, shape[dim], 1):
                op = GetItem
            dim += 1
    return op


class AdvancedGetItem(GetItem):
    node_name = "IndexBackward0"


class AsStridedView(AdvancedGetItem):
    """A view's values re-read from its base after an in-place op on the view (PyTorch's name)."""

    node_name = "AsStridedBackward0"
    component = "AsStridedView"  # a view's refresh stays the framework's, whoever computes x[key]


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
        return data

    @staticmethod
    def backward(ctx, g):
        g_old = g_val = None
        if ctx.needs_input_grad[0]:
            mask = g._xp.ones(g._data.shape, dtype=bool)
            mask[ctx.idx] = False

            g_old = g * _wrap(mask)
        if ctx.needs_input_grad[1]:
            sel = (SelectItem if ctx.basic else AdvancedGetItem).apply(g, ctx.idx, ctx.basic)
            g_val = sel
        return g_old, g_val


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
        return g.masked_fill(mask, 0.0), None, None


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
        if node != "FillBackward0":
            ctx.__class__ = Overwrite._node_class(node)
        shape = t._data.shape
        if getattr(data, "shape", shape) != shape:  # a source that would grow t: the write raises PyTorch's error
            shape = np.broadcast_shapes(shape, data.shape)  # naming the broadcast shape, as for add_
        return xp.broadcast_to(xp.asarray(data, dtype=t.dtype.np_dtype), shape)

    @staticmethod
    def backward(ctx, g):
        return g * 0, g

    @staticmethod
    def _node_class(name):
        cls = Overwrite._named.get(name)
        if cls is None:
            cls = Overwrite._named[name] = type(name, (Overwrite._Node,), {})
        return cls


# ---- helpers shared by the index-update, scatter and strided-view ops ------------------------------

def _shape_str(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _pad_to(g, shape):
    """`g` (the leading block of a tensor of `shape`) padded with zeros up to `shape`."""
    if tuple(g.shape) == tuple(shape):
        return g
    return IndexPutZeros.apply(g, tuple(shape), tuple(slice(0, s) for s in g.shape), True)
