"""Stride-1 convolution over contiguous row runs: the patch matrix of a padded image built from long copies.

For a stride-1 convolution, kernel offset (i, j) reads the flattened (Hp*Wp) image plane from position
i*dh*Wp + j*dw on: if the output is computed on an OH x Wp grid (the full padded width, of which the last
dw*(kw-1) columns of every row are thrown away), the values one offset multiplies are a single contiguous
run of OH*Wp floats per channel and sample. The patch matrix then comes from kh*kw copies of long runs
instead of a gather of OW-long pieces, which NumPy copies several times faster; the wasted columns cost
(kw-1)/OW more arithmetic in the matrix products. Its backward adds the patch gradients back the same way.
The batch is processed in chunks, so that one chunk's patch matrix stays about a megabyte (cache-sized, and
no large temporary per step).
"""
from __future__ import annotations

from .lowp import matmul_arrays
from .windows import pad_array

_CHUNK_BYTES = 1 << 20


def _geometry(xpad_shape, kernel, dilation):
    (kh, kw), (dh, dw) = kernel, dilation
    _, _, hp, wp = xpad_shape
    return hp - dh * (kh - 1), wp - dw * (kw - 1), [(i * dh * wp + j * dw) for i in range(kh) for j in range(kw)]


def _chunks(n, c, k, oh, wp, itemsize):
    per_sample = max(1, c * k * oh * wp * itemsize)
    step = max(1, min(n, _CHUNK_BYTES // per_sample))
    return [(n0, min(n, n0 + step)) for n0 in range(0, n, step)]


def _patches(xp, xpad, n0, n1, offsets, oh):
    """(C*kh*kw, nb*OH*Wp) patch matrix of samples n0:n1 over the width-padded output grid."""
    _, c, hp, wp = xpad.shape
    nb, length = n1 - n0, oh * wp
    plane = xpad[n0:n1].reshape(nb, c, hp * wp)
    cols = xp.empty((c, len(offsets), nb, length), dtype=xpad.dtype)
    for k, off in enumerate(offsets):
        m = min(length, hp * wp - off)  # the last rows' runs end at the plane's end (only discarded columns)
        cols[:, k, :, :m] = plane[:, :, off:off + m].transpose(1, 0, 2)
        if m < length:
            cols[:, k, :, m:] = 0
    return cols.reshape(c * len(offsets), nb * length)


def _padded_grad(xp, g, n0, n1, wp):
    """The output gradient of samples n0:n1 as (O, nb*OH*Wp), zero in the discarded columns."""
    _, o, oh, ow = g.shape
    ge = xp.zeros((o, n1 - n0, oh, wp), dtype=g.dtype)
    ge[..., :ow] = g[n0:n1].transpose(1, 0, 2, 3)
    return ge.reshape(o, -1)


def conv_forward(xp, x, weight, bias, padding, dilation):
    """conv2d (stride 1, groups 1) of (N, C, H, W) `x` with (O, C, kh, kw) `weight`, plus `bias` or None."""
    xpad = pad_array(xp, x, *padding)
    n, c = x.shape[:2]
    o, _, kh, kw = weight.shape
    oh, ow, offsets = _geometry(xpad.shape, (kh, kw), dilation)
    wp = xpad.shape[3]
    w2 = weight.reshape(o, -1)
    out = xp.empty((n, o, oh, ow), dtype=x.dtype)
    for n0, n1 in _chunks(n, c, kh * kw, oh, wp, x.dtype.itemsize):
        part = matmul_arrays(xp, w2, _patches(xp, xpad, n0, n1, offsets, oh)).reshape(o, n1 - n0, oh, wp)
        part = part[..., :ow].transpose(1, 0, 2, 3)
        if bias is None:
            out[n0:n1] = part
        else:
            xp.add(part, bias.reshape(o, 1, 1), out=out[n0:n1])
    return out


def conv_backward(xp, x, weight, g, need_input, need_weight, padding, dilation):
    """(input gradient or None, weight gradient or None) of `conv_forward` for the output gradient g."""
    if not (need_input or need_weight):
        return None, None
    (ph, pw) = padding
    xpad = pad_array(xp, x, ph, pw)
    n, c, h, w = x.shape
    o, _, kh, kw = weight.shape
    oh, _, offsets = _geometry(xpad.shape, (kh, kw), dilation)
    hp, wp = xpad.shape[2:]
    length = oh * wp
    gw_t = xp.zeros((c * kh * kw, o), dtype=g.dtype) if need_weight else None
    gx = xp.empty(x.shape, dtype=g.dtype) if need_input else None
    w_t = xp.ascontiguousarray(weight.reshape(o, -1).T) if need_input else None
    for n0, n1 in _chunks(n, c, kh * kw, oh, wp, x.dtype.itemsize):
        nb = n1 - n0
        ge = _padded_grad(xp, g, n0, n1, wp)
        if need_weight:
            gw_t += matmul_arrays(xp, _patches(xp, xpad, n0, n1, offsets, oh), ge.T)
        if need_input:
            patch_grads = matmul_arrays(xp, w_t, ge).reshape(c, kh * kw, nb, length)
            plane = xp.zeros((c, nb, hp * wp), dtype=g.dtype)
            for k, off in enumerate(offsets):
                m = min(length, hp * wp - off)
                plane[:, :, off:off + m] += patch_grads[:, k, :, :m]
            gx[n0:n1] = plane.reshape(c, nb, hp, wp)[:, :, ph:ph + h, pw:pw + w].transpose(1, 0, 2, 3)
    gw = xp.ascontiguousarray(gw_t.T).reshape(weight.shape) if need_weight else None
    return gx, gw
