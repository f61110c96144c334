"""Constant padding (`F.pad` in "constant" mode), differentiable."""
from __future__ import annotations

from ..autograd.function import Op


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
