"""2-D pooling over a window view of the input: max (with argmax indices) and average.

Both work on the (N, C, OH, OW, kh, kw) `sliding_window_view` of the padded input, so the whole
batch is pooled in a few array calls. Max pooling remembers where each maximum came from (a flat
index into the H*W plane, as PyTorch's `return_indices=True` gives) and routes gradients back there.
Each backward is itself a differentiable op (its own backward is the forward's adjoint), so
second derivatives work.
"""
from __future__ import annotations

from ..autograd.function import Op
from ..tensor import _wrap
from .conv import _pad_array, conv_output_size, window_view


class MaxPool2d(Op):
    """Maximum over each window; also returns the int64 flat indices of the maxima."""

    node_name = "MaxPool2DWithIndicesBackward0"
    non_differentiable_outputs = (1,)

    @staticmethod
    def forward(ctx, x, kernel, stride, padding, dilation, want_indices=False):
        xp, a = x._xp, x._data
        n, c, h, w = a.shape
        (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
        fill = xp.iinfo(a.dtype).min if a.dtype.kind in "iu" else -xp.inf  # bfloat16 has kind "V"
        win = window_view(xp, _pad_array(xp, a, ph, pw, fill), kernel, stride, dilation)
        _, _, oh, ow = win.shape[:4]
        # running maximum over the kh*kw window offsets (each a strided view): no copy of the windows
        out = win[..., 0, 0].copy()
        for offset in range(1, kh * kw):
            xp.maximum(out, win[..., offset // kw, offset % kw], out=out)
        if not (want_indices or ctx.needs_input_grad):
            return out, xp.zeros((0,), dtype=xp.int64)
        # the first window offset holding the maximum (PyTorch picks the first on ties)
        # (built in place: few full-size temporaries, so pooling does not set the step's peak memory)
        k = xp.zeros(out.shape, dtype=xp.int64)
        found = xp.zeros(out.shape, dtype=bool)
        for offset in range(kh * kw):
            hit = win[..., offset // kw, offset % kw] == out
            hit &= ~found
            if offset:
                xp.copyto(k, offset, where=hit)
            found |= hit
        del found, hit
        # flat index (oh*sh + (k // kw)*dh - ph) * w + ow*sw + (k % kw)*dw - pw
        indices = k // kw
        indices *= dh * w
        k %= kw
        k *= dw
        indices += k
        del k
        indices += (xp.arange(oh).reshape(oh, 1) * sh - ph) * w + (xp.arange(ow) * sw - pw)
        ctx.indices, ctx.in_shape = indices, a.shape
        ctx._materialize = False  # the indices output never gets a gradient
        ctx.overlap = sh < dh * (kh - 1) + 1 or sw < dw * (kw - 1) + 1
        return out, indices.astype(xp.int64, copy=False)

    @staticmethod
    def backward(ctx, g, _g_indices=None):
        if g is None:
            return None
        return MaxUnpoolGrad.apply(g, ctx.indices, ctx.in_shape, ctx.overlap)


def _plane_scatter(xp, g, indices, in_shape, overlap):
    """Add each value of g (N, C, OH, OW) into a zero (N, C, H, W) array at its flat plane index."""
    n, c, h, w = in_shape
    g2 = g.reshape(n * c, -1)
    idx = indices.reshape(n * c, -1)
    if not overlap:  # every input pixel is the max of at most one window: plain assignment
        out = xp.zeros((n * c, h * w), dtype=g.dtype)
        xp.put_along_axis(out, idx, g2, axis=1)
        return out.reshape(in_shape)
    offsets = (xp.arange(n * c) * (h * w))[:, None]
    out = xp.bincount((idx + offsets).ravel(), weights=g2.ravel(), minlength=n * c * h * w)
    return out.astype(g.dtype, copy=False).reshape(in_shape)


class MaxUnpoolGrad(Op):
    """Max pooling's backward: gradients routed to the argmax positions (linear in g)."""

    node_name = "MaxPool2DWithIndicesBackwardBackward0"

    @staticmethod
    def forward(ctx, g, indices, in_shape, overlap):
        ctx.indices = indices
        return _plane_scatter(g._xp, g._data, indices, in_shape, overlap)

    @staticmethod
    def backward(ctx, gg):
        return GatherPlane.apply(gg, ctx.indices), None, None, None


class GatherPlane(Op):
    """Pick values of (N, C, H, W) at flat plane indices (N, C, OH, OW); adjoint of MaxUnpoolGrad."""

    node_name = "GatherBackward0"

    @staticmethod
    def forward(ctx, x, indices):
        n, c = x._data.shape[:2]
        ctx.indices, ctx.in_shape = indices, x._data.shape
        flat = x._data.reshape(n * c, -1)
        return x._xp.take_along_axis(flat, indices.reshape(n * c, -1), axis=1).reshape(indices.shape)

    @staticmethod
    def backward(ctx, g):
        return MaxUnpoolGrad.apply(g, ctx.indices, ctx.in_shape, True), None


def _avg_divisor(xp, in_shape, kernel, stride, padding, count_include_pad, divisor_override, dtype):
    """Per-output-pixel divisor: kh*kw, the count of real (unpadded) pixels, or the override."""
    (kh, kw) = kernel
    if divisor_override:
        return divisor_override
    if count_include_pad or padding == (0, 0):
        return kh * kw
    ones = xp.ones((1, 1) + tuple(in_shape[2:]), dtype=dtype)
    counts = window_view(xp, _pad_array(xp, ones, *padding), kernel, stride, (1, 1)).sum(axis=(-1, -2))
    return counts[0, 0]


class AvgPool2d(Op):
    """Mean over each window (zero padding counted unless count_include_pad=False)."""

    node_name = "AvgPool2DBackward0"

    @staticmethod
    def forward(ctx, x, kernel, stride, padding, count_include_pad=True, divisor_override=None):
        xp, a = x._xp, x._data
        win = window_view(xp, _pad_array(xp, a, *padding), kernel, stride, (1, 1))
        div = _avg_divisor(xp, a.shape, kernel, stride, padding, count_include_pad, divisor_override, a.dtype)
        ctx.args = (a.shape, kernel, stride, padding, div)
        return (win.sum(axis=(-1, -2)) / div).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        return AvgPoolGrad.apply(g, *ctx.args)


class AdaptiveAvgPool2d(AvgPool2d):
    node_name = "AdaptiveAvgPool2DBackward0"


class AvgPoolGrad(Op):
    """Average pooling's backward: each output gradient spread evenly over its window."""

    node_name = "AvgPool2DBackwardBackward0"

    @staticmethod
    def forward(ctx, g, in_shape, kernel, stride, padding, div):
        xp, gd = g._xp, g._data
        n, c, h, w = in_shape
        (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
        oh, ow = gd.shape[2:]
        share = (gd / div).astype(gd.dtype, copy=False)
        out = xp.zeros((n, c, h + 2 * ph, w + 2 * pw), dtype=gd.dtype)
        for i in range(kh):
            for j in range(kw):
                out[:, :, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw] += share
        ctx.args = (kernel, stride, padding, div)
        return out[:, :, ph:ph + h, pw:pw + w] if ph or pw else out

    @staticmethod
    def backward(ctx, gg):
        kernel, stride, padding, div = ctx.args
        window_sums = AvgPool2d.apply(gg, kernel, stride, padding, True, 1)
        return window_sums / (_wrap(div.astype(gg._data.dtype)) if hasattr(div, "shape") else div)


__all__ = ["MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "conv_output_size"]
