"""Views with explicit strides: unfold (sliding windows along one dimension) and as_strided (any geometry on
the input's storage). Their backwards add the gradient of every element back to the storage position it
was read from."""
from __future__ import annotations

import numpy as np

from ..autograd.engine import Op
from ..shapes import storage_index
from ..shapes import normalize_dim
from .indexing import IndexPutZeros, _shape_str, _wrap


def _along(d, idx):
    """An index tuple that applies `idx` to dimension `d`."""
    return (slice(None),) * d + (idx,)


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
        # one past the storage position of the view's last element
        needed = 0 if 0 in size else storage_index(tuple(n - 1 for n in size), stride, storage_offset) + 1
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
