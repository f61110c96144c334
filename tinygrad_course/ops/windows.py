"""Sliding windows over (N, C, H, W) images, shared by convolution and pooling: PyTorch's output-size formula,
padding, and the (N, C, OH, OW, kh, kw) view of every window."""
from __future__ import annotations


def conv_output_size(size, kernel, stride, padding, dilation):
    """Output length along one spatial dim (PyTorch's formula)."""
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def pad_array(xp, a, ph, pw, value=0.0):
    """Zero- (or `value`-) pad the last two dims of `a` by (ph, pw) on each side."""
    if ph == 0 and pw == 0:
        return a
    n, c, h, w = a.shape
    out = xp.full((n, c, h + 2 * ph, w + 2 * pw), value, dtype=a.dtype)
    out[:, :, ph:ph + h, pw:pw + w] = a
    return out


def window_view(xp, a, kernel, stride, dilation):
    """View (N, C, OH, OW, kh, kw) of all kernel windows of a padded (N, C, H, W) array (no copy)."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    span_h, span_w = dh * (kh - 1) + 1, dw * (kw - 1) + 1
    win = xp.lib.stride_tricks.sliding_window_view(a, (span_h, span_w), axis=(2, 3))
    return win[:, :, ::sh, ::sw, ::dh, ::dw]
