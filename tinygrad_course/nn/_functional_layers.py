"""More layer functions for `tc.nn.functional`: 1-d convolutions and pools, transposed convolutions,
adaptive max pooling, padding modes, interpolate, pixel_shuffle, group/instance/RMS norm, fold, ...

1-d layers run the 2-d machinery over a height-1 image; most others are compositions of differentiable
framework ops (so gradients of every order come for free).
"""
from __future__ import annotations

import math
import warnings

from ..ops import adaptive_pool as _adaptive
from ..ops import conv as _conv
from ..ops import conv_transpose as _convt
from ..ops import fused as _fused
from ..ops import padding as _padding
from ..tensor import _wrap
from .functional import (_batched, _normalized_dims, _pair, _shape_str, adaptive_avg_pool2d, avg_pool2d, batch_norm,
                         conv2d, max_pool2d, pad)

__all__ = [
    "conv1d", "conv_transpose1d", "conv_transpose2d", "max_pool1d", "avg_pool1d", "adaptive_avg_pool1d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "lp_pool1d", "lp_pool2d", "max_unpool1d", "max_unpool2d",
    "group_norm", "instance_norm", "rms_norm", "local_response_norm", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
    "feature_alpha_dropout", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle",
    "pixel_unshuffle", "fold", "bilinear",
]


def _single(v):
    if isinstance(v, (tuple, list)):
        return int(v[0])
    return int(v)


# ---- convolutions ------------------------------------------------------------------------------------------

def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D cross-correlation of (N, C, L) input with (O, C/groups, k) weight (conv2d over a height-1 image)."""
    x, unbatched = _batched(input, "conv1d", 1)
    if weight.ndim != 3:
        raise RuntimeError(f"weight should have at least three dimensions for conv1d, got {weight.ndim}")
    if x.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {_shape_str(weight.shape)}, expected input{_shape_str(x.shape)} "
            f"to have {weight.shape[1] * groups} channels, but got {x.shape[1]} channels instead"
        )
    pad2 = padding if isinstance(padding, str) else (0, _single(padding))
    out = conv2d(x.unsqueeze(2), weight.unsqueeze(2), bias, (1, _single(stride)), pad2, (1, _single(dilation)), groups)
    out = out.squeeze(2)
    return out.squeeze(0) if unbatched else out


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 2-D convolution (the gradient of conv2d w.r.t. its input): (N, Cin, H, W) with weight
    (Cin, Cout/groups, kh, kw) -> (N, Cout, (H-1)*stride - 2*padding + dilation*(k-1) + output_padding + 1, ...)."""
    x, unbatched = _batched(input, "conv_transpose2d")
    stride, padding, output_padding, dilation = _pair(stride), _pair(padding), _pair(output_padding), _pair(dilation)
    if weight.ndim != 4:
        raise RuntimeError(f"weight should have at least four dimensions for conv_transpose2d, got {weight.ndim}")
    if x.shape[1] != weight.shape[0]:
        raise RuntimeError(
            f"Given transposed=1, weight of size {_shape_str(weight.shape)}, expected input{_shape_str(x.shape)} "
            f"to have {weight.shape[0]} channels, but got {x.shape[1]} channels instead"
        )
    if weight.shape[0] % groups:
        raise RuntimeError("Given groups, weight's in channels must be divisible by groups")
    if any(op >= max(s, d) for op, s, d in zip(output_padding, stride, dilation)):
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            f"output_padding_height: {output_padding[0]} output_padding_width: {output_padding[1]} "
            f"stride_height: {stride[0]} stride_width: {stride[1]} "
            f"dilation_height: {dilation[0]} dilation_width: {dilation[1]}"
        )
    out_hw = [_convt.conv_transpose_output_size(size, k, s, p, op, d) for size, k, s, p, op, d in
              zip(x.shape[2:], weight.shape[2:], stride, padding, output_padding, dilation)]
    if min(out_hw) <= 0:
        raise RuntimeError(f"Given input size per channel: ({x.shape[2]} x {x.shape[3]}). Calculated output size per "
                           f"channel: ({out_hw[0]} x {out_hw[1]}). Output size is too small")
    if weight.dtype is not x.dtype:
        raise RuntimeError(f"Input type ({x.type()}) and weight type ({weight.type()}) should be the same")
    out = _convt.ConvTranspose2d.apply(x, weight, bias, stride, padding, output_padding, dilation, groups)
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 1-D convolution: (N, Cin, L) with weight (Cin, Cout/groups, k) -> (N, Cout, L_out)."""
    x, unbatched = _batched(input, "conv_transpose1d", 1)
    if weight.ndim != 3:
        raise RuntimeError(f"weight should have at least three dimensions for conv_transpose1d, got {weight.ndim}")
    out = conv_transpose2d(x.unsqueeze(2), weight.unsqueeze(2), bias, (1, _single(stride)), (0, _single(padding)),
                           (0, _single(output_padding)), groups, (1, _single(dilation))).squeeze(2)
    return out.squeeze(0) if unbatched else out


# ---- pooling -----------------------------------------------------------------------------------------------

def _check_pool1d_padding(name, padding, kernel):
    if padding > kernel // 2:
        raise RuntimeError(
            f"{name}() padding should be at most half of kernel size, but got padding={padding} and kernel_size={kernel}"
        )


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Maximum over each kernel window of (N, C, L) input (optionally also the indices of the maxima)."""
    x, unbatched = _batched(input, "max_pool1d", 1)
    kernel = _single(kernel_size)
    stride = _single(stride) if stride is not None and stride != [] else kernel
    _check_pool1d_padding("max_pool1d", _single(padding), kernel)
    res = max_pool2d(x.unsqueeze(2), (1, kernel), (1, stride), (0, _single(padding)), (1, _single(dilation)),
                     ceil_mode, return_indices)
    out, indices = res if return_indices else (res, None)
    out = out.squeeze(2).squeeze(0) if unbatched else out.squeeze(2)
    if not return_indices:
        return out
    indices = indices.squeeze(2).squeeze(0) if unbatched else indices.squeeze(2)
    return out, indices


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """Mean over each kernel window of (N, C, L) input."""
    x, unbatched = _batched(input, "avg_pool1d", 1)
    kernel = _single(kernel_size)
    stride = _single(stride) if stride is not None and stride != [] else kernel
    _check_pool1d_padding("avg_pool1d", _single(padding), kernel)
    out = avg_pool2d(x.unsqueeze(2), (1, kernel), (1, stride), (0, _single(padding)), ceil_mode,
                     count_include_pad).squeeze(2)
    return out.squeeze(0) if unbatched else out


def adaptive_avg_pool1d(input, output_size):
    """Average pooling of (N, C, L) input to a fixed output length."""
    x, unbatched = _batched(input, "adaptive_avg_pool1d", 1)
    out = adaptive_avg_pool2d(x.unsqueeze(2), (1, _single(output_size))).squeeze(2)
    return out.squeeze(0) if unbatched else out


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling of (N, C, H, W) input to a fixed output size (optionally also the flat indices)."""
    x, unbatched = _batched(input, "adaptive_max_pool2d")
    oh, ow = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size, output_size)
    oh = x.shape[2] if oh is None else oh
    ow = x.shape[3] if ow is None else ow
    for name, size in (("height", x.shape[2]), ("width", x.shape[3])):
        if size == 0:
            raise RuntimeError(f"adaptive_max_pool2d(): Expected input to have non-zero size for non-batch dimensions, "
                               f"but input has sizes {_shape_str(input.shape)} with dimension {name} being empty")
    out, indices = _adaptive.AdaptiveMaxPool2d.apply(x, (oh, ow))
    if unbatched:
        out, indices = out.squeeze(0), indices.squeeze(0)
    return (out, indices) if return_indices else out


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling of (N, C, L) input to a fixed output length (optionally also the indices)."""
    x, unbatched = _batched(input, "adaptive_max_pool1d", 1)
    out, indices = adaptive_max_pool2d(x.unsqueeze(2), (1, _single(output_size)), True)
    out, indices = out.squeeze(2), indices.squeeze(2)
    if unbatched:
        out, indices = out.squeeze(0), indices.squeeze(0)
    return (out, indices) if return_indices else out


def _lp_finish(pooled, norm_type, window):
    return (pooled.sign() * pooled.abs().relu()).mul(window).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling: (sum over each window of x**p) ** (1/p), like `F.lp_pool1d`."""
    pooled = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_finish(pooled, norm_type, _single(kernel_size))


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over 2-D windows: (sum of x**p) ** (1/p), like `F.lp_pool2d`."""
    kh, kw = _pair(kernel_size)
    pooled = avg_pool2d(input.pow(norm_type), (kh, kw), stride, 0, ceil_mode)
    return _lp_finish(pooled, norm_type, kh * kw)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of max_pool2d: each value put back at its flat index in a zero (N, C, H, W) plane."""
    from ..ops.pooling import MaxUnpoolGrad

    kernel = _pair(kernel_size)
    stride = _pair(stride) if stride is not None else kernel
    padding = _pair(padding)
    default = tuple((s - 1) * st - 2 * p + k for s, st, p, k in zip(input.shape[-2:], stride, padding, kernel))
    size = default if output_size is None else tuple(output_size)[-2:]
    if indices.shape != input.shape:
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({_shape_str(input.shape)}) but got indices tensor with shape: {_shape_str(indices.shape)}")
    x, unbatched = _batched(input, "max_unpool2d")
    idx = indices._data if not unbatched else indices._data[None]
    plane = size[0] * size[1]
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= plane):
        bad = int(idx.max()) if int(idx.max()) >= plane else int(idx.min())
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size {size[0]}x{size[1]}")
    out = MaxUnpoolGrad.apply(x, idx, (x.shape[0], x.shape[1]) + size, False)
    return out.squeeze(0) if unbatched else out


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of max_pool1d: each value put back at its index in a zero (N, C, L) signal."""
    kernel = _single(kernel_size)
    stride = _single(stride) if stride is not None else kernel
    length = (input.shape[-1] - 1) * stride - 2 * _single(padding) + kernel
    if output_size is not None:
        length = tuple(output_size)[-1]
    out = max_unpool2d(input.unsqueeze(-2), indices.unsqueeze(-2), (1, kernel), (1, stride), (0, _single(padding)),
                       (1, length))
    return out.squeeze(-2)


# ---- normalisation -----------------------------------------------------------------------------------------

def _channel_view(t, ndim):
    """A per-channel (C,) tensor shaped to broadcast along dim 1 of an ndim-d input."""
    return t.reshape((1, -1) + (1,) * (ndim - 2))


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalize each group of channels of each sample, then scale and shift per channel."""
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    n, c = input.shape[:2]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {_shape_str(input.shape)} and num_groups={num_groups}")
    grouped = input.reshape(n, num_groups, -1)
    out = _fused.Normalize.apply(grouped, None, None, (2,), (grouped.shape[2],), eps).reshape(input.shape)
    if weight is not None:
        out = out * _channel_view(weight, input.ndim)
    if bias is not None:
        out = out + _channel_view(bias, input.ndim)
    return out


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalize each channel of each sample over its spatial dims (optionally tracking running statistics)."""
    if not use_input_stats:
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    dims = tuple(range(2, input.ndim))
    spatial = input.numel() // max(input.shape[0] * input.shape[1], 1)
    if spatial <= 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {list(input.shape)}")
    c = input.shape[1]
    out = _fused.Normalize.apply(input, weight, bias, dims, (c,) + (1,) * len(dims), eps)
    if running_mean is not None or running_var is not None:
        from ..autograd.grad_mode import no_grad

        a = input._data
        with no_grad():
            if running_mean is not None:
                mean = a.mean(axis=dims).mean(axis=0).astype(running_mean._data.dtype)
                running_mean.mul_(1 - momentum).add_(_wrap(mean), alpha=momentum)
            if running_var is not None:
                var = (a.var(axis=dims) * (spatial / (spatial - 1))).mean(axis=0).astype(running_var._data.dtype)
                running_var.mul_(1 - momentum).add_(_wrap(var), alpha=momentum)
    return out


def _float_eps(dtype):
    """Machine epsilon of a floating dtype (what torch.finfo(dtype).eps gives)."""
    import numpy as np

    return {"bfloat16": 0.0078125}.get(dtype.name) or float(np.finfo(dtype.np_dtype).eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x**2 over the trailing normalized_shape dims) + eps) * weight (eps defaults to the dtype's)."""
    normalized_shape, dims = _normalized_dims(input, normalized_shape, star="*")
    if eps is None:
        eps = _float_eps(input.dtype)
    out = input * (input.square().mean(dims, keepdim=True) + eps).rsqrt()
    return out * weight if weight is not None else out


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Divide each value by (k + alpha * mean of squares over `size` neighbouring channels) ** beta."""
    dim = input.ndim
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    n, c = input.shape[:2]
    div = (input * input).reshape(n, 1, c, -1)
    div = pad(div, (0, 0, size // 2, (size - 1) // 2))
    div = avg_pool2d(div, (size, 1), stride=1).reshape(input.shape)
    return input / div.mul(alpha).add(k).pow(beta)


# ---- dropout -----------------------------------------------------------------------------------------------

def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _keep_mask(input, p, shape):
    """A 0/1 array of `shape` (1 with probability 1-p), drawn where the input lives."""
    from ..factories import sampler

    dtype = input._data.dtype
    if p == 1.0:
        return input._xp.zeros(shape, dtype=dtype)
    return (sampler(None, input._device).random(tuple(shape)) >= p).astype(dtype)


def _finish(input, out, inplace):
    if inplace and not input.requires_grad:
        return input.copy_(out)
    return out


def _feature_dropout(input, p, inplace, batched):
    """Zero whole channels (every feature map of a sample along dim 1) with probability p."""
    x = input if batched else input.unsqueeze(0)
    shape = tuple(x.shape[:2]) + (1,) * (x.ndim - 2)
    mask = _keep_mask(input, p, shape)
    if p < 1.0:
        mask = mask * mask.dtype.type(1.0 / (1.0 - p))
    if not batched:
        mask = mask[0]
    return _finish(input, input * _wrap(mask), inplace)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """During training, zero whole channels of (N, C, L) or (C, L) input with probability p; scale the rest."""
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that dropout1d exists to "
            "provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an optional "
            "batch dimension (i.e. 2D or 3D inputs)."
        )
    if not training or p == 0.0:
        return input
    return _feature_dropout(input, p, inplace, input.ndim == 3)


def _warn_unusual_rank(input, spatial):
    """PyTorch's deprecation warning for dropout2d/3d input that is not (N,) C + `spatial` dims."""
    if input.ndim in (spatial + 1, spatial + 2):
        return
    name = f"dropout{spatial}d"
    warnings.warn(
        f"{name}: Received a {input.ndim}-D input to {name}, which is deprecated and will result in an error "
        "in a future release. To retain the behavior and silence this warning, please use dropout instead. Note "
        f"that {name} exists to provide channel-wise dropout on inputs with {spatial} spatial dimensions, a channel "
        f"dimension, and an optional batch dimension (i.e. {spatial + 1}D or {spatial + 2}D inputs).", stacklevel=3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """During training, zero whole channels of (N, C, H, W) input with probability p; scale the rest."""
    _check_p(p)
    _warn_unusual_rank(input, spatial=2)
    if input.ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
            "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will "
            "change in a future release to interpret the input as one without a batch dimension, i.e. shape "
            "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    if not training or p == 0.0:
        return input
    return _feature_dropout(input, p, inplace, True)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """During training, zero whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability p."""
    _check_p(p)
    _warn_unusual_rank(input, spatial=3)
    if not training or p == 0.0:
        return input
    return _feature_dropout(input, p, inplace, input.ndim == 5)


_SELU_ALPHA = 1.7580993408473766  # -SELU's negative saturation value: what dropped units are set to


def _alpha_dropout(input, p, training, inplace, feature):
    _check_p(p)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:
        return _finish(input, input * 0.0, inplace)
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2) if feature else tuple(input.shape)
    keep = _keep_mask(input, p, shape)
    a = 1.0 / math.sqrt((_SELU_ALPHA ** 2 * p + 1) * (1 - p))
    t = keep.dtype.type
    shift = (keep - t(1)) * t(_SELU_ALPHA * a) + t(_SELU_ALPHA * a * p)
    return _finish(input, input * _wrap(keep * t(a)) + _wrap(shift), inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout for SELU networks: dropped units take SELU's saturation value and the result keeps mean 0 and
    variance 1 (identity unless training)."""
    return _alpha_dropout(input, p, training, inplace, False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels (dim 1) instead of single elements."""
    return _alpha_dropout(input, p, training, inplace, True)


# ---- padding by mode ---------------------------------------------------------------------------------------

def pad_by_mode(input, pad, mode, value=None):
    """`F.pad` in 'reflect', 'replicate' or 'circular' mode (called by `F.pad` itself)."""
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    pad = tuple(int(p) for p in pad)
    k = len(pad) // 2
    if k not in (1, 2, 3) or input.ndim not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
        )
    for d in range(k):
        dim = input.ndim - 1 - d
        size, lo, hi = input.shape[dim], pad[2 * d], pad[2 * d + 1]
        if mode == "reflect" and (lo >= size or hi >= size):
            raise RuntimeError(
                f"Argument #4: Padding size should be less than the corresponding input dimension, but got: "
                f"padding ({lo}, {hi}) at dimension {dim} of input {_shape_str(input.shape)}"
            )
        if mode == "circular" and (lo > size or hi > size):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if size + lo + hi <= 0 or (size == 0 and mode != "constant"):
            raise RuntimeError(f"input tensor with shape {_shape_str(input.shape)} and padding {list(pad)} "
                               f"gives an empty output (dimension {dim}).")
    return _padding.index_pad_op(mode, k).apply(input, pad, mode)


# ---- upsampling --------------------------------------------------------------------------------------------

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


# ---- fold and bilinear -------------------------------------------------------------------------------------

def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sum sliding-block columns (N, C*kh*kw, L) back into an (N, C, H, W) image (col2im; inverse layout of unfold)."""
    out_hw, kernel = _pair(output_size), _pair(kernel_size)
    dilation, padding, stride = _pair(dilation), _pair(padding), _pair(stride)
    unbatched = input.ndim == 2
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {_shape_str(input.shape)}")
    x = input.unsqueeze(0) if unbatched else input
    n, ckk, length = x.shape
    kk = kernel[0] * kernel[1]
    if ckk % kk:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={ckk} and kernel_size={kernel}")
    blocks = [_conv.conv_output_size(s, k, st, p, d) for s, k, st, p, d in zip(out_hw, kernel, stride, padding, dilation)]
    if blocks[0] * blocks[1] != length:
        raise RuntimeError(
            f"Given output_size={out_hw}, kernel_size={kernel}, dilation={dilation}, padding={padding}, "
            f"stride={stride}, expected size of input's dimension 2 to match the calculated number of sliding blocks "
            f"{blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got input.size(2)={length}."
        )
    cols = x.transpose(0, 1).reshape(ckk, n * length)
    out = _conv.Col2Im.apply(cols, (n, ckk // kk) + out_hw, kernel, stride, padding, dilation)
    return out.squeeze(0) if unbatched else out


def bilinear(input1, input2, weight, bias=None):
    """y = x1^T A x2 + b for each pair of rows: weight (out, in1, in2), inputs (*, in1) and (*, in2)."""
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got {_shape_str(input1.shape[:-1])} and "
                           f"{_shape_str(input2.shape[:-1])}")
    out_f, in1, in2 = weight.shape
    lead = tuple(input1.shape[:-1])
    x1, x2 = input1.reshape(-1, in1), input2.reshape(-1, in2)
    t = (x1 @ weight.permute(1, 0, 2).reshape(in1, out_f * in2)).reshape(-1, out_f, in2)
    out = (t * x2.unsqueeze(1)).sum(-1)
    if bias is not None:
        out = out + bias
    return out.reshape(*lead, out_f)
