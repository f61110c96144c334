"""Adaptive max pooling: the maximum over PyTorch's variable-size windows (start = floor(i*in/out),
end = ceil((i+1)*in/out)), with the flat plane indices of the maxima. Windows shorter than the longest
repeat their last position, which changes neither the maximum nor the first index reaching it."""
from __future__ import annotations

from ..autograd.engine import Op
from .pooling import MaxUnpoolGrad


def adaptive_windows(xp, size, out_size):
    """(out_size, k) positions of each adaptive window along one dim (k = the longest window)."""
    longest = max(-((-(i + 1) * size) // out_size) - (i * size) // out_size for i in range(out_size)) if out_size else 1
    i = xp.arange(out_size)
    start = (i * size) // out_size
    end = -((-(i + 1) * size) // out_size)
    return xp.minimum(start[:, None] + xp.arange(longest)[None, :], end[:, None] - 1)


class AdaptiveMaxPool2d(Op):
    """(N, C, H, W) -> (N, C, OH, OW) maxima over adaptive windows, and their int64 flat indices."""

    node_name = "AdaptiveMaxPool2DBackward0"
    non_differentiable_outputs = (1,)

    @staticmethod
    def forward(ctx, x, output_size):
        xp, a = x._xp, x._data
        n, c, h, w = a.shape
        oh, ow = output_size
        rows, cols = adaptive_windows(xp, h, oh), adaptive_windows(xp, w, ow)  # (OH, kh), (OW, kw)
        kh, kw = rows.shape[1], cols.shape[1]
        win = a[:, :, rows[:, :, None, None], cols[None, None, :, :]]  # (N, C, OH, kh, OW, kw)
        win = win.transpose(0, 1, 2, 4, 3, 5).reshape(n, c, oh, ow, kh * kw)
        k = win.argmax(axis=-1)
        out = xp.take_along_axis(win, k[..., None], axis=-1)[..., 0]
        indices = rows[xp.arange(oh)[:, None], k // kw] * w + cols[xp.arange(ow), k % kw]
        ctx.indices, ctx.in_shape = indices, a.shape
        ctx._materialize = False
        return out, indices.astype(xp.int64, copy=False)

    @staticmethod
    def backward(ctx, g, _g_indices=None):
        if g is None:
            return None
        return MaxUnpoolGrad.apply(g, ctx.indices, ctx.in_shape, True)
