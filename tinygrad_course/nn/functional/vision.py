"""Resizing images in `tc.nn.functional`: interpolate (and the deprecated upsample aliases), pixel_shuffle and
pixel_unshuffle."""
from __future__ import annotations

import math

from ...tensor_base import _wrap
from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d

_INTERP_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}


def _interp_scale(in_size, out_size, scale_factor, align_corners):
    """PyTorch's source-per-destination scale along one dim."""
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    return 1.0 / scale_factor if scale_factor is not None else in_size / out_size


def _nearest_positions(xp, in_size, out_size, scale, exact):
    """Source index of each output position (float32 arithmetic, as PyTorch's CPU kernel)."""
    dst = xp.arange(out_size, dtype=xp.float32)
    src = xp.floor((dst + xp.float32(0.5)) * xp.float32(scale) if exact else dst * xp.float32(scale))
    return xp.minimum(src.astype(xp.int64), in_size - 1)


def _linear_matrix(xp, in_size, out_size, scale, align_corners, dtype):
    """(out, in) matrix of linear interpolation weights along one dim."""
    dst = xp.arange(out_size, dtype=xp.float64)
    src = dst * scale if align_corners else xp.maximum((dst + 0.5) * scale - 0.5, 0.0)
    i0 = xp.floor(src).astype(xp.int64)
    i0 = xp.minimum(i0, in_size - 1)
    i1 = xp.minimum(i0 + 1, in_size - 1)
    frac = src - i0
    cols = xp.arange(in_size)[None, :]
    m = (cols == i0[:, None]) * (1.0 - frac)[:, None] + (cols == i1[:, None]) * frac[:, None]
    return m.astype(dtype)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    """Resize the spatial dims (all but N, C) to `size` or by `scale_factor`: modes 'nearest', 'nearest-exact',
    'linear' (3-D input), 'bilinear' (4-D input) and 'area'."""
    spatial = input.ndim - 2
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if mode in _INTERP_DIMS and _INTERP_DIMS[mode] != spatial and spatial in (1, 2, 3):
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {_INTERP_DIMS[mode] + 2}D input")
    if mode not in ("nearest", "nearest-exact", "area", "linear", "bilinear") or spatial not in (1, 2):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for the modes: nearest | "
            f"linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact (got {mode})"
            if spatial not in (1, 2, 3) or mode not in ("bicubic", "trilinear", "nearest", "nearest-exact", "area")
            else f"interpolate(mode='{mode}') on {input.ndim}D input is not supported here; use 'nearest' or "
                 "'bilinear' on 3D/4D input."
        )
    if antialias:
        raise NotImplementedError("interpolate(antialias=True) is not supported here.")
    in_sizes = tuple(input.shape[2:])
    if size is not None:
        out_sizes = tuple(size) if isinstance(size, (tuple, list)) else (size,) * spatial
        if len(out_sizes) != spatial:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input with "
                             f"spatial dimensions of {list(in_sizes)} and output size of {list(out_sizes)}. Please "
                             "provide input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) "
                             "format.")
        scales = (None,) * spatial
    else:
        scales = tuple(scale_factor) if isinstance(scale_factor, (tuple, list)) else (scale_factor,) * spatial
        if len(scales) != spatial:
            raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {list(in_sizes)} and scale_factor of shape {list(scales)}. "
                             "Please provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in "
                             "(s1, s2, ...,sK) format.")
        out_sizes = tuple(math.floor(float(s) * float(f)) for s, f in zip(in_sizes, scales))
        if recompute_scale_factor:
            scales = (None,) * spatial
    if mode == "area":
        return (adaptive_avg_pool2d(input, out_sizes) if spatial == 2 else adaptive_avg_pool1d(input, out_sizes[0]))
    xp, out = input._xp, input
    for d in range(spatial):  # one spatial dim at a time, the last first
        axis = input.ndim - 1 - d
        in_size, out_size, sf = in_sizes[-1 - d], out_sizes[-1 - d], scales[-1 - d]
        if mode in ("nearest", "nearest-exact"):
            scale = 1.0 / sf if sf is not None else in_size / out_size
            pos = _nearest_positions(xp, in_size, out_size, scale, mode == "nearest-exact")
            out = out.index_select(axis, _wrap(pos))
        else:
            scale = _interp_scale(in_size, out_size, sf, align_corners)
            m = _wrap(_linear_matrix(xp, in_size, out_size, scale, align_corners, input._data.dtype))
            out = out @ m.t() if d == 0 else m @ out
    return out


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of `interpolate`."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Nearest-neighbour upsampling (deprecated alias of `interpolate(mode='nearest')`)."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Bilinear upsampling with align_corners=True (deprecated alias of `interpolate`)."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def pixel_shuffle(input, upscale_factor):
    """Rearrange (*, C*r*r, H, W) into (*, C, H*r, W*r) (sub-pixel convolution's upsampling)."""
    r = int(upscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    k = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    """Rearrange (*, C, H*r, W*r) into (*, C*r*r, H, W) (the inverse of pixel_shuffle)."""
    r = int(downscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    *lead, c, h, w = input.shape
    for name, size, dim in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                               f"input.size({dim})={size} is not divisible by {r}")
    k = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)
