"""View ops: view/reshape, permute, transpose, expand, squeeze/unsqueeze and aliases. Each returns a backend
view that shares storage and strides with its input, as in PyTorch; `clone` and `to` (ToCopy) copy.

Their backwards move no numbers, so when no graph is being built (create_graph=False) they reshape or
transpose the gradient's array directly instead of recording a view op per gradient.
"""
from __future__ import annotations

import math

import numpy as np

from .. import seams
from .._backend import check_dtype_on_device, to_device_array
from ..autograd.engine import Op
from ..shapes import normalize_dim
from ..autograd.sum_to_shape import sum_to_shape
from . import storage_views


def infer_shape(shape, numel):
    """Resolve one -1 in `shape` for a tensor of `numel` elements; PyTorch's errors otherwise."""
    shape = tuple(map(int, shape))
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
        if "view_strides" in seams.ACTIVE:  # build mode: the view made from the learner's strides
            out = storage_views.viewed(x, shape)
            if out is not None:
                return out
        data = x._data
        if type(data) is np.ndarray and data.flags.c_contiguous:
            return data.reshape(shape)  # always a view here (and faster than asking for one with copy=False)
        try:
            return data.reshape(shape, copy=False)
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
    component = "View"  # build mode: a learner's View computes it (a view of strided x to a shape)


class UnsafeView(Op):
    """The reshape of a copy (`reshape` of a tensor whose strides allow no view): PyTorch records it as
    CloneBackward0 -> UnsafeViewBackward0. Not a view: it shares memory only with the fresh copy."""

    node_name = "UnsafeViewBackward0"
    component = "View"  # build mode: a learner's View computes it (a view of the fresh copy to a shape)

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
        if "permute_strides" in seams.ACTIVE:  # build mode: the view made from the learner's strides
            out = storage_views.permuted(x, dims)
            if out is not None:
                return out
        return x._data.transpose(dims)

    @staticmethod
    def backward(ctx, g):
        return g.permute(*ctx.inverse)


class Transpose(Op):
    node_name = "TransposeBackward0"
    view = True

    @staticmethod
    def forward(ctx, x, d0, d1):
        nd = x._data.ndim
        if nd == 0:
            return x._data
        if not (type(d0) is int and type(d1) is int and 0 <= d0 < nd and 0 <= d1 < nd):  # else as given
            d0, d1 = normalize_dim(d0, nd), normalize_dim(d1, nd)
        ctx.d0, ctx.d1 = d0, d1
        if "permute_strides" in seams.ACTIVE:  # build mode: transpose is the permutation swapping d0 and d1
            dims = list(range(nd))
            dims[d0], dims[d1] = d1, d0
            out = storage_views.permuted(x, dims)
            if out is not None:
                return out
        return x._data.swapaxes(d0, d1)

    @staticmethod
    def backward(ctx, g):
        if g.ndim == 0:
            return g
        return g.transpose(ctx.d0, ctx.d1)

    @staticmethod
    def fused_backward(ctx, g):
        return g._data.swapaxes(ctx.d0, ctx.d1) if g._data.ndim else g._data


class T(Transpose):
    node_name = "TBackward0"
    component = "Transpose"  # build mode: a learner's Transpose computes t() and .T too


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
        if "expand_strides" in seams.ACTIVE:  # build mode: the view made from the learner's strides
            out = storage_views.expanded(x, full)
            if out is not None:
                return out
        return x._xp.broadcast_to(x._data, full)

    @staticmethod
    def backward(ctx, g):
        return sum_to_shape(g, ctx.shape)


class Squeeze(Op):
    """PyTorch names the node by overload: SqueezeBackward0 (every size-1 dim), 1 (one dim), 2 (a list of dims)."""

    node_name = "SqueezeBackward1"
    view = True
    component = "View"  # build mode: a learner's View computes squeeze(dim) as a view to a shape

    @staticmethod
    def forward(ctx, x, dim=None):
        ctx.shape = x._data.shape
        if ctx.needs_input_grad and not isinstance(dim, int):
            ctx.__class__ = _SQUEEZE_NODES[dim is None]
        if dim is None:
            return x._data.squeeze()
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        dims = tuple(normalize_dim(d, x.ndim) for d in dims)
        drop = tuple(d for d in dims if x.ndim and x._data.shape[d] == 1)
        return x._data.squeeze(drop) if drop else x._data.view()

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.shape)


_SQUEEZE_NODES = {True: type("SqueezeBackward0", (Squeeze._Node,), {}),
                  False: type("SqueezeBackward2", (Squeeze._Node,), {})}


class Unsqueeze(Op):
    node_name = "UnsqueezeBackward0"
    view = True
    component = "View"  # build mode: a learner's View computes unsqueeze(dim) as a view to a shape

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


class Clone(Op):
    node_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, x):
        if "storage_positions" in seams.ACTIVE and not x._data.flags.c_contiguous:  # build mode: `contiguous()`
            out = storage_views.gathered(x)
            if out is not None:
                return out
        return x._data.copy()

    @staticmethod
    def backward(ctx, g):
        return g


class ToCopy(Op):
    """Conversion to another dtype (and/or device): `to`, `float()`, `long()`, ..."""

    node_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, x, dtype=None, device=None, copy=False):
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
