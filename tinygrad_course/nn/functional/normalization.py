"""Normalization layers in `tc.nn.functional`: layer_norm, batch_norm, group_norm, instance_norm, rms_norm and
local_response_norm."""
from __future__ import annotations

import numpy as np

from ...autograd.grad_mode import _state, no_grad
from ...ops import fused as _fused
from ...tensor_base import _wrap
from ._utils import _shape_str
from .padding import pad
from .pooling import avg_pool2d


def _normalized_dims(input, normalized_shape, star="*, "):
    """(normalized_shape as a tuple, the trailing dims it covers), or PyTorch's error when the input's trailing
    sizes differ (layer_norm writes `[*, 4]`, rms_norm `[*4]`)."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    k = len(normalized_shape)
    if k == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           "element, but got normalized_shape = []")
    shape = input._data.shape
    if shape[len(shape) - k:] != normalized_shape:
        raise RuntimeError(
            f"Given normalized_shape={_shape_str(normalized_shape)}, expected input with shape "
            f"[{star}{', '.join(map(str, normalized_shape))}], but got input of size{_shape_str(input.shape)}"
        )
    return normalized_shape, tuple(range(len(shape) - k, len(shape)))


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalize over the trailing `normalized_shape` dims, then scale by weight and shift by bias."""
    normalized_shape, dims = _normalized_dims(input, normalized_shape)
    if not _state.enabled or not (input._requires_grad or weight is not None and weight._requires_grad or
                                  bias is not None and bias._requires_grad):
        out = _fused.layer_norm_unrecorded(input, weight, bias, dims, normalized_shape, eps)
        if out is not None:  # no graph recorded: computed on the arrays, no op to run
            return _wrap(out)
    return _fused.Normalize.apply(input, weight, bias, dims, normalized_shape, eps)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalize each channel (dim 1) by batch statistics (training) or the running ones (eval).

    In training mode the running statistics are updated in place:
    running = (1 - momentum) * running + momentum * batch_stat (the variance unbiased).
    """
    if input.ndim < 2:
        raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")
    c = input.shape[1]
    dims = (0,) + tuple(range(2, input.ndim))
    param_shape = (1, c) + (1,) * (input.ndim - 2)
    if training:
        count = input.numel() // c
        if count <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
        out = _fused.BatchNormalize.apply(input, weight, bias, dims, param_shape, eps)
        if running_mean is not None or running_var is not None:
            node = out.grad_fn
            a = input._data
            mean = a.mean(axis=dims)
            var = a.var(axis=dims) * (count / (count - 1))
            with no_grad():
                if running_mean is not None:
                    running_mean.mul_(1 - momentum).add_(_wrap(mean.astype(running_mean._data.dtype)), alpha=momentum)
                if running_var is not None:
                    running_var.mul_(1 - momentum).add_(_wrap(var.astype(running_var._data.dtype)), alpha=momentum)
            del node
        return out
    if running_mean is None or running_var is None:
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    stats = (running_mean._data, running_var._data)
    return _fused.BatchNormalize.apply(input, weight, bias, dims, param_shape, eps, stats)


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
