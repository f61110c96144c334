"""Diagonals: trace, diagonal (a view), diag_embed and block_diag. The backward of taking a diagonal writes
the gradient onto the diagonal of zeros, and the other way round.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..autograd.engine import Op
from ..factories import eye
from ..shapes import normalize_dim
from ._util import check_same_device


class Trace(Op):
    """Sum of the main diagonal of a matrix."""

    node_name = "TraceBackward0"

    @staticmethod
    def forward(ctx, x):
        if x.ndim != 2:
            raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.ndim}")
        ctx.shape, ctx.in_dtype = x._data.shape, x.dtype
        od = _dt.int64 if x.dtype.category < 2 else x.dtype
        return x._xp.trace(x._data, dtype=od.np_dtype)

    @staticmethod
    def backward(ctx, g):
        return eye(*ctx.shape, dtype=g.dtype, device=g.device) * g


def _diag_dims(ndim, dim1, dim2):
    d1, d2 = normalize_dim(dim1, ndim), normalize_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


def diagonal_view(xp, a, offset, d1, d2):
    """A writable strided view of the diagonal of `a` over dims d1, d2 (other dims first, diagonal last)."""
    start = [slice(None)] * a.ndim
    n1, n2 = a.shape[d1], a.shape[d2]
    if offset >= 0:
        start[d2] = slice(min(offset, n2), None)
    else:
        start[d1] = slice(min(-offset, n1), None)
    base = a[tuple(start)]
    length = max(0, min(n1 - max(0, -offset), n2 - max(0, offset)))
    keep = [d for d in range(a.ndim) if d not in (d1, d2)]
    shape = tuple(a.shape[d] for d in keep) + (length,)
    strides = tuple(base.strides[d] for d in keep) + (base.strides[d1] + base.strides[d2],)
    return xp.lib.stride_tricks.as_strided(base, shape, strides)


class Diagonal(Op):
    """The diagonal over dims (dim1, dim2) with `offset`, as a view (like `Tensor.diagonal`)."""

    node_name = "DiagonalBackward0"
    view = True

    @staticmethod
    def forward(ctx, x, offset=0, dim1=0, dim2=1):
        if x.ndim < 2:
            raise RuntimeError(f"diagonal dimensions requires ndim larger than 1, but got ndim {x.ndim}")
        d1, d2 = _diag_dims(x.ndim, dim1, dim2)
        ctx.args = (x._data.shape, offset, d1, d2)
        out = diagonal_view(x._xp, x._data, offset, d1, d2)
        return out if ctx._fn.view else out.copy()

    @staticmethod
    def backward(ctx, g):
        return DiagonalBackward.apply(g, *ctx.args)


class DiagonalCopy(Diagonal):
    """`diag` of a matrix: the diagonal as a new tensor."""

    node_name = "DiagonalBackward0_copy"
    view = False


class DiagonalBackward(Op):
    """Zeros of `shape` with `x` written on the diagonal (dim1, dim2, offset): the backward of `diagonal`."""

    node_name = "DiagonalBackwardBackward0"

    @staticmethod
    def forward(ctx, x, shape, offset, d1, d2):
        ctx.args = (offset, d1, d2)
        out = x._xp.zeros(shape, dtype=x._data.dtype)
        diagonal_view(x._xp, out, offset, d1, d2)[...] = x._data
        return out

    @staticmethod
    def backward(ctx, g):
        return Diagonal.apply(g, *ctx.args)


class DiagEmbed(DiagonalBackward):
    """A tensor whose diagonals over (dim1, dim2) hold the last dimension of `x` (like `torch.diag_embed`)."""

    node_name = "DiagEmbedBackward0"

    @staticmethod
    def forward(ctx, x, offset=0, dim1=-2, dim2=-1):
        nd = x.ndim + 1
        d1, d2 = _diag_dims(nd, dim1, dim2)
        n = (x._data.shape[-1] if x.ndim else 1) + abs(offset)
        rest = iter(x._data.shape[:-1])
        shape = tuple(n if d in (d1, d2) else next(rest) for d in range(nd))
        return DiagonalBackward.forward(ctx, x, shape, offset, d1, d2)


class BlockDiag(Op):
    """The tensors (0-, 1- or 2-D) placed along the diagonal of a zero matrix (like `torch.block_diag`)."""

    node_name = "BlockDiagBackward0"

    @staticmethod
    def forward(ctx, *tensors):
        for i, t in enumerate(tensors):
            if t.ndim > 2:
                raise RuntimeError(f"tc.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                                   f"{t.ndim} dimensions")
            check_same_device(tensors[0], t)
        rd = _dt.result_type(*tensors) if tensors else _dt.get_default_dtype()
        blocks = [t._data.reshape((1, -1) if t.ndim < 2 else t._data.shape) if t.ndim < 2 else t._data
                  for t in tensors]
        blocks = [b.reshape(1, 1) if t.ndim == 0 else b for b, t in zip(blocks, tensors)]
        rows, cols = sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)
        xp = tensors[0]._xp if tensors else np
        out = xp.zeros((rows, cols), dtype=rd.np_dtype)
        r = c = 0
        ctx.places = []
        for b, t in zip(blocks, tensors):
            out[r:r + b.shape[0], c:c + b.shape[1]] = b
            ctx.places.append((r, c, b.shape, t._data.shape, t.dtype))
            r, c = r + b.shape[0], c + b.shape[1]
        return out

    @staticmethod
    def backward(ctx, g):
        grads = []
        for need, (r, c, shape, in_shape, dtype) in zip(ctx.needs_input_grad, ctx.places):
            if not need:
                grads.append(None)
                continue
            piece = g[r:r + shape[0], c:c + shape[1]].reshape(in_shape)
            grads.append(piece if piece.dtype is dtype else piece.to(dtype))
        return tuple(grads)
