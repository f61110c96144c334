"""Embedding lookup (`F.embedding`): rows of a weight matrix picked by integer indices."""
from __future__ import annotations

import numpy as np

from ..autograd.engine import Op
from ..factories import zeros
from ..tensor_base import _wrap
from ._util import first_out_of_range


class Embedding(Op):
    """weight[indices]; the backward adds each output gradient into its row (padding row gets none)."""

    node_name = "EmbeddingBackward0"

    @staticmethod
    def forward(ctx, weight, indices, padding_idx=None):
        xp = weight._xp
        idx = indices._data
        num = weight._data.shape[0]
        if not ctx.needs_input_grad and xp is np and type(idx) is np.ndarray and idx.dtype.kind in "iu":
            try:  # not recorded: one take, which refuses the same indices (outside [-num, num)) and wraps the rest
                return np.take(weight._data, idx, axis=0)
            except IndexError:
                raise IndexError("index out of range in self. Hint: every index must be < num_embeddings.") from None
        if first_out_of_range(idx, num, negative_ok=True) is not None:
            raise IndexError("index out of range in self. Hint: every index must be < num_embeddings.")
        idx = xp.where(idx < 0, idx + num, idx)
        ctx.idx, ctx.padding_idx, ctx.weight_shape = idx, padding_idx, weight._data.shape
        ctx.dtype = weight.dtype
        return weight._data[idx]

    @staticmethod
    def backward(ctx, g):
        num, dim = ctx.weight_shape
        flat_idx = ctx.idx.reshape(-1)
        g2 = g.reshape(-1, dim)
        if ctx.padding_idx is not None:
            g2 = g2 * _wrap((flat_idx != ctx.padding_idx).astype(g2._data.dtype)[:, None])
        index = _wrap(g._xp.broadcast_to(flat_idx[:, None], (flat_idx.size, dim)).astype("int64"))
        return zeros(num, dim, dtype=ctx.dtype, device=g.device).scatter_add(0, index, g2), None

    @staticmethod
    def fused_backward(ctx, g):
        """The weight's gradient on NumPy arrays: the output gradients sorted by index (a stable sort keeps
        each row's order) and summed per index with one `add.reduceat`, about 7 times faster than the
        element-by-element `add.at` of scatter_add for a language model's (B*T, dim) gradient."""
        xp = g._xp
        if xp.__name__ != "numpy":
            return NotImplemented
        num, dim = ctx.weight_shape
        idx = ctx.idx.reshape(-1)
        g2 = g._data.reshape(-1, dim)
        if ctx.padding_idx is not None:
            keep = idx != ctx.padding_idx
            idx, g2 = idx[keep], g2[keep]
        out = xp.zeros((num, dim), dtype=g._data.dtype)
        if idx.size:
            order = xp.argsort(idx, kind="stable")
            rows = idx[order]
            starts = xp.flatnonzero(xp.concatenate(([True], rows[1:] != rows[:-1])))
            out[rows[starts]] = xp.add.reduceat(g2[order], starts, axis=0)
        return out, None
