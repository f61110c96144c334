"""2-D pooling over a window view of the input: max (with argmax indices) and average.

Both work on the (N, C, OH, OW, kh, kw) `sliding_window_view` of the padded input, so the whole
batch is pooled in a few array calls. Max pooling remembers where each maximum came from (a flat
index into the H*W plane, as PyTorch's `return_indices=True` gives) and routes gradients back there.
Each backward is itself a differentiable op (its own backward is the forward's adjoint), so
second derivatives work.
"""
from __future__ import annotations

from ..autograd.engine import Op
from ..tensor_base import _wrap
from .windows import conv_output_size, window_view
from .windows import pad_array as _pad_array


def _window_max(xp, win, kh, kw, with_offsets=True):
    """Maximum over the (kh, kw) window axes of `win` and, per window, the first offset i*kw+j holding it.

    PyTorch's rule: a later value replaces the maximum only if it is greater (the first of equal maxima wins),
    or if it is NaN (a window with NaNs gives NaN and the offset of its last NaN). The offsets are kept small
    (uint8 for windows of up to 255 values): one running pass per offset, no int64 temporaries.
    """
    out = win[..., 0, 0].copy()
    if not with_offsets:
        for offset in range(1, kh * kw):
            xp.maximum(out, win[..., offset // kw, offset % kw], out=out)
        return out, None
    k = xp.zeros(out.shape, dtype=xp.uint8 if kh * kw < 256 else xp.int32)
    for offset in range(1, kh * kw):
        v = win[..., offset // kw, offset % kw]
        # offsets rise, so "k = offset where v is greater" is a maximum: no data-dependent branch (a masked
        # copy with a random mask runs several times slower)
        xp.maximum(k, (v > out) * k.dtype.type(offset), out=k)
        xp.maximum(out, v, out=out)
    if out.dtype.kind not in "iub":  # floating (bfloat16 has kind "V"): NaN can occur
        nan = xp.isnan(out)
        if nan.any():
            for offset in range(kh * kw):
                xp.copyto(k, offset, where=nan & xp.isnan(win[..., offset // kw, offset % kw]))
    return out, k


def _point_padded_maxima_inside(xp, out, k, fill, geometry, in_hw):
    """Where a padded window's maximum equals the padding value (its real values are all -inf, or the dtype's
    minimum), point k at the window's first real position, as PyTorch (which never reads padding) does."""
    at_fill = out == fill
    if not at_fill.any():
        return
    (kh, kw), (sh, sw), (ph, pw), (dh, dw), _ = geometry
    oh, ow = out.shape[-2:]
    rows, cols = xp.arange(oh).reshape(oh, 1) * sh - ph, xp.arange(ow) * sw - pw
    for offset in reversed(range(kh * kw)):  # the last assignment, the first real offset, wins
        r, q = rows + (offset // kw) * dh, cols + (offset % kw) * dw
        inside = (r >= 0) & (r < in_hw[0]) & (q >= 0) & (q < in_hw[1])
        xp.copyto(k, offset, where=at_fill & inside)


def _flat_indices(xp, k, geometry):
    """int64 flat indices into the H*W plane from window offsets k (PyTorch's `return_indices` values)."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw), w = geometry
    oh, ow = k.shape[-2:]
    rows = (k // kw).astype(xp.int64)
    rows *= dh * w
    rows += (k % kw).astype(xp.int64) * dw
    rows += (xp.arange(oh).reshape(oh, 1) * sh - ph) * w + (xp.arange(ow) * sw - pw)
    return rows


def _route_to_offsets(xp, g, k, in_shape, geometry):
    """Max pooling's input gradient for non-overlapping windows: each window's gradient put at its argmax
    offset (one pass per offset over the strided positions that offset read; nothing else written)."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw), _ = geometry
    n, c, h, w = in_shape
    oh, ow = g.shape[-2:]
    out = xp.zeros((n, c, h + 2 * ph, w + 2 * pw), dtype=g.dtype)
    finite = bool(xp.isfinite(g).all())
    for offset in range(kh * kw):
        r, q = (offset // kw) * dh, (offset % kw) * dw
        at = out[:, :, r:r + sh * (oh - 1) + 1:sh, q:q + sw * (ow - 1) + 1:sw]
        if finite:  # g * (k == offset) writes g or 0 to every position this offset read, without branching
            xp.multiply(g, k == offset, out=at)
        else:  # inf or NaN times 0 would not be 0
            xp.copyto(at, g, where=k == offset)
    return xp.ascontiguousarray(out[:, :, ph:ph + h, pw:pw + w]) if ph or pw else out


class MaxPool2d(Op):
    """Maximum over each window; also returns the int64 flat indices of the maxima when asked for them."""

    node_name = "MaxPool2DWithIndicesBackward0"
    non_differentiable_outputs = (1,)

    @staticmethod
    def forward(ctx, x, kernel, stride, padding, dilation, want_indices=False):
        xp, a = x._xp, x._data
        (kh, kw), (ph, pw) = kernel, padding
        fill = xp.iinfo(a.dtype).min if a.dtype.kind in "iu" else -xp.inf  # bfloat16 has kind "V"
        win = window_view(xp, _pad_array(xp, a, ph, pw, fill), kernel, stride, dilation)
        out, k = _window_max(xp, win, kh, kw, with_offsets=want_indices or any(ctx.needs_input_grad))
        geometry = (kernel, stride, padding, dilation, a.shape[3])
        if k is not None and (ph or pw):
            _point_padded_maxima_inside(xp, out, k, fill, geometry, a.shape[2:])
        ctx._materialize = False  # the indices output never gets a gradient
        ctx.k, ctx.geometry, ctx.in_shape = k, geometry, a.shape
        ctx.overlap = stride[0] < dilation[0] * (kh - 1) + 1 or stride[1] < dilation[1] * (kw - 1) + 1
        indices = _flat_indices(xp, k, geometry) if want_indices else xp.zeros((0,), dtype=xp.int64)
        return out, indices

    @staticmethod
    def backward(ctx, g, _g_indices=None):
        if g is None:
            return None
        return MaxUnpoolGrad.apply(g, _flat_indices(g._xp, ctx.k, ctx.geometry), ctx.in_shape, ctx.overlap)

    @staticmethod
    def fused_backward(ctx, g, _g_indices=None):
        if g is None or ctx.overlap:  # windows that overlap may share a maximum: the scatter adds them up
            return NotImplemented
        return _route_to_offsets(g._xp, g._data, ctx.k, ctx.in_shape, ctx.geometry)


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
