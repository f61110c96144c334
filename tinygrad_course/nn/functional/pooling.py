"""Pooling in `tc.nn.functional`: max, average, adaptive, power-average (lp) pooling in 1-d and 2-d, and
max_unpool (the partial inverse of max pooling). The 1-d versions run the 2-d ones over a height-1 image."""
from __future__ import annotations

from ...ops import adaptive_pool as _adaptive
from ...ops import pooling as _pool
from ...ops.pooling import MaxUnpoolGrad
from ...tensor_base import _wrap
from ._utils import _batched, _pair, _shape_str, _single


def _check_pool_padding(padding, kernel, dilation=(1, 1)):
    for p, k, d in zip(padding, kernel, dilation):
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={p}, kernel_size={k} and dilation={d}"
            )


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Maximum over each kernel window (optionally also the flat indices of the maxima)."""
    if ceil_mode:
        raise NotImplementedError("max_pool2d(ceil_mode=True) is not supported here; use ceil_mode=False.")
    x, unbatched = _batched(input, "max_pool2d")
    kernel = _pair(kernel_size)
    stride = _pair(stride) if stride is not None and stride != [] else kernel
    padding, dilation = _pair(padding), _pair(dilation)
    _check_pool_padding(padding, kernel, dilation)
    out, indices = _pool.MaxPool2d.apply(x, kernel, stride, padding, dilation, return_indices)
    if unbatched:
        out, indices = out.squeeze(0), indices.squeeze(0)
    return (out, indices) if return_indices else out


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Mean over each kernel window."""
    if ceil_mode:
        raise NotImplementedError("avg_pool2d(ceil_mode=True) is not supported here; use ceil_mode=False.")
    x, unbatched = _batched(input, "avg_pool2d")
    kernel = _pair(kernel_size)
    stride = _pair(stride) if stride is not None and stride != [] else kernel
    padding = _pair(padding)
    _check_pool_padding(padding, kernel)
    out = _pool.AvgPool2d.apply(x, kernel, stride, padding, count_include_pad, divisor_override)
    return out.squeeze(0) if unbatched else out


def _adaptive_matrix(xp, size, out_size, dtype):
    """(out_size, size) matrix whose row i averages input positions floor(i*size/out)..ceil((i+1)*size/out)."""
    m = xp.zeros((out_size, size), dtype=dtype)
    for i in range(out_size):
        start = (i * size) // out_size
        end = -((-(i + 1) * size) // out_size)
        m[i, start:end] = 1.0 / (end - start)
    return m


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed output size (windows chosen like PyTorch's)."""
    x, unbatched = _batched(input, "adaptive_avg_pool2d")
    h, w = x.shape[2:]
    oh, ow = output_size if isinstance(output_size, (tuple, list)) and len(output_size) == 2 else _pair(output_size)
    oh = h if oh is None else int(oh)
    ow = w if ow is None else int(ow)
    if h % oh == 0 and w % ow == 0:
        kernel = (h // oh, w // ow)
        out = _pool.AdaptiveAvgPool2d.apply(x, kernel, kernel, (0, 0), True, None)
    else:
        mh = _wrap(_adaptive_matrix(x._xp, h, oh, x._data.dtype))
        mw = _wrap(_adaptive_matrix(x._xp, w, ow, x._data.dtype))
        out = mh @ x @ mw.t()
    return out.squeeze(0) if unbatched else out


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
