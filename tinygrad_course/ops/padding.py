"""Constant padding (`F.pad` in "constant" mode), differentiable."""
from __future__ import annotations

from ..autograd.engine import Op
from .indexing import IndexPutZeros


class ConstantPad(Op):
    """Pad (or, for negative amounts, crop) the trailing dims; `pad` is PyTorch's (last-dim-first) list."""

    node_name = "ConstantPadNdBackward0"

    @staticmethod
    def forward(ctx, x, pad, value=0.0):
        xp, a = x._xp, x._data
        pairs = [(0, 0)] * a.ndim
        for k in range(len(pad) // 2):
            pairs[a.ndim - 1 - k] = (pad[2 * k], pad[2 * k + 1])
        grow = [(max(lo, 0), max(hi, 0)) for lo, hi in pairs]
        out = xp.pad(a, grow, mode="constant", constant_values=value) if any(lo or hi for lo, hi in grow) else a
        crop = tuple(slice(max(-lo, 0), out.shape[i] - max(-hi, 0)) for i, (lo, hi) in enumerate(pairs))
        ctx.pad = tuple(pad)
        result = out[crop]
        return result.copy() if out is a else result

    @staticmethod
    def backward(ctx, g):
        return ConstantPad.apply(g, tuple(-p for p in ctx.pad), 0.0)


def pad_positions(xp, size, lo, hi, mode):
    """Source position of every output position along one dim padded by (lo, hi) in `mode`."""
    if mode == "reflect":
        j = xp.arange(-lo, size + hi)
        return xp.where(j < 0, -j, xp.where(j >= size, 2 * (size - 1) - j, j))
    if mode == "replicate":
        return xp.clip(xp.arange(-lo, size + hi), 0, size - 1)
    # circular: PyTorch crops first (negative amounts), then wraps around the cropped stretch
    start, stop = max(-lo, 0), size - max(-hi, 0)
    return start + (xp.arange(-max(lo, 0), stop - start + max(hi, 0)) % (stop - start))


_PAD_NAMES = {"reflect": "ReflectionPad{}DBackward0", "replicate": "ReplicationPad{}DBackward0"}


class IndexPad(Op):
    """Reflect, replicate or circular padding of the trailing dims: a gather of the input positions
    (backward: the gradients added back where each position came from)."""

    node_name = "ReflectionPad1DBackward0"

    @staticmethod
    def forward(ctx, x, pad, mode):
        xp, a = x._xp, x._data
        k = len(pad) // 2
        idx = [slice(None)] * (a.ndim - k)
        for d in range(k):  # d-th padded dim, counted from the first of the trailing ones
            dim = a.ndim - k + d
            lo, hi = pad[2 * (k - 1 - d)], pad[2 * (k - 1 - d) + 1]
            pos = pad_positions(xp, a.shape[dim], lo, hi, mode)
            idx.append(pos.reshape((-1,) + (1,) * (k - 1 - d)))
        ctx.idx, ctx.shape = tuple(idx), a.shape
        return a[ctx.idx]

    @staticmethod
    def backward(ctx, g):
        return IndexPutZeros.apply(g, ctx.shape, ctx.idx, False)


def index_pad_op(mode, ndims):
    """IndexPad with PyTorch's grad_fn name for `mode` over `ndims` padded dims."""
    name = _PAD_NAMES.get(mode, "CopySlices").format(ndims)
    op = _INDEX_PAD_OPS.get(name)
    if op is None:
        op = _INDEX_PAD_OPS[name] = type("IndexPad", (IndexPad,), {"node_name": name})
    return op


_INDEX_PAD_OPS: dict = {}
