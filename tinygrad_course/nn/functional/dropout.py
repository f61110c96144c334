"""Dropout in `tc.nn.functional`: dropout, channel-wise dropout1d/2d/3d, alpha_dropout and
feature_alpha_dropout. The random masks are drawn where the input lives (no host round trip on the GPU)."""
from __future__ import annotations

import math
import warnings

from ...generator import sampler
from ...ops import fused as _fused
from ...tensor_base import _wrap


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p and scale the rest by 1/(1-p) (identity when not training)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    xp = input._xp
    if p == 1.0:
        mask = xp.zeros(input.shape, dtype=input._data.dtype)
    else:  # drawn where the input lives: no host round trip on the GPU
        mask = _keep_mask(input, p, tuple(input.shape))
        mask = mask / mask.dtype.type(1.0 - p)
    out = _fused.Dropout.apply(input, mask)
    if inplace and not input.requires_grad:
        return input.copy_(out)
    return out


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _keep_mask(input, p, shape):
    """A 0/1 array of `shape` (1 with probability 1-p), drawn where the input lives (as PyTorch's
    `bernoulli_(1 - p)` on the CPU)."""
    dtype = input._data.dtype
    if p == 1.0:
        return input._xp.zeros(shape, dtype=dtype)
    return sampler(None, input._device).bernoulli(1.0 - p, tuple(shape)).astype(dtype)


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
        mask = mask / mask.dtype.type(1.0 - p)
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
