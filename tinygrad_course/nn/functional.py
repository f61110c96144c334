"""`tc.nn.functional` (import as `F`): stateless layer operations and losses, like `torch.nn.functional`."""
from __future__ import annotations

import math
import warnings

from ..amp.autocast_mode import autocast_args
from ..autograd.grad_mode import _state, no_grad
from ..ops import conv as _conv
from ..ops import fused as _fused
from ..ops import pooling as _pool
from ..ops.embedding import Embedding as _Embedding
from ..ops._util import first_out_of_range
from ..ops.matmul import Addmm as _Addmm
from ..ops.padding import ConstantPad as _ConstantPad
from ..tensor import Tensor, _wrap

__all__ = [
    "linear", "relu", "relu_", "leaky_relu", "gelu", "silu", "sigmoid", "tanh", "softmax", "log_softmax", "dropout",
    "one_hot", "pad", "conv2d", "unfold", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "layer_norm",
    "batch_norm", "embedding", "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "flatten",
]


def _pair(v, name="kernel_size"):
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return (int(v[0]),) * 2
        return (int(v[0]), int(v[1]))
    return (int(v), int(v))


def _shape_str(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


# ---- layers -----------------------------------------------------------------------------------------

def linear(input, weight, bias=None):
    """input @ weight.T + bias (one fused addmm for 2-D input), like `F.linear`."""
    if input.ndim == 2 and bias is not None:
        return _Addmm.apply(bias, input, weight.t())
    if input.ndim > 2 and bias is not None:
        lead = input.shape[:-1]
        out = _Addmm.apply(bias, input.reshape(-1, input.shape[-1]), weight.t())
        return out.reshape(*lead, weight.shape[0])
    out = input @ weight.t()
    return out if bias is None else out + bias


def flatten(input, start_dim=0, end_dim=-1):
    return input.flatten(start_dim, end_dim)


def relu(input, inplace=False):
    """max(x, 0) element-wise."""
    return input.relu_() if inplace else input.relu()


def relu_(input):
    return input.relu_()


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x for x > 0, negative_slope * x otherwise."""
    out = _fused.LeakyRelu.apply(input, negative_slope)
    if inplace:
        return input.copy_(out) if not input.requires_grad else out
    return out


def gelu(input, approximate="none"):
    """Gaussian error linear unit: x * Phi(x), or its tanh approximation (approximate='tanh')."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _fused.Gelu.apply(input, approximate)


def silu(input, inplace=False):
    """x * sigmoid(x) (also called swish)."""
    return _fused.Silu.apply(input)


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


def _softmax_dim(name, ndim):
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
        stacklevel=3,
    )
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_family(op, name, input, dim, dtype):
    if dim is None:
        dim = _softmax_dim(name, input.ndim)
    if dtype is not None:
        input = input.to(dtype)
    return op.apply(input, dim)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x) / sum(exp(x)) along `dim` (computed stably, after subtracting the max)."""
    return _softmax_family(_fused.Softmax, "softmax", input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log(softmax(x)) along `dim`, computed as x - logsumexp(x) (no overflow for large logits)."""
    return _softmax_family(_fused.LogSoftmax, "log_softmax", input, dim, dtype)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p and scale the rest by 1/(1-p) (identity when not training)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    from ..factories import sampler

    xp = input._xp
    if p == 1.0:
        mask = xp.zeros(input.shape, dtype=input._data.dtype)
    else:  # drawn where the input lives: no host round trip on the GPU
        keep = sampler(None, input._device).random(tuple(input.shape)) >= p
        mask = keep.astype(input._data.dtype) * input._data.dtype.type(1.0 / (1.0 - p))
    out = _fused.Dropout.apply(input, mask)
    if inplace and not input.requires_grad:
        return input.copy_(out)
    return out


def one_hot(tensor, num_classes=-1):
    """Int64 tensor with a 1 at each index along a new last dim of size num_classes."""
    from .. import dtypes as _dt

    if tensor.dtype is not _dt.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    xp, idx = tensor._xp, tensor._data
    if num_classes == -1:
        if idx.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(idx.max()) + 1
    if idx.size and idx.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if idx.size and idx.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = (idx[..., None] == xp.arange(num_classes)).astype(xp.int64)
    return _wrap(out)


def pad(input, pad, mode="constant", value=None):
    """Pad the last dims: `pad=(left, right, top, bottom, ...)`, last dim first (constant, reflect, replicate, circular)."""
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension "
                           f"but got padding length {len(pad)} and input of dimension {input.ndim}")
    if mode != "constant":
        return _functional_layers.pad_by_mode(input, pad, mode, value)  # reflect / replicate / circular
    return _ConstantPad.apply(input, tuple(int(p) for p in pad), 0.0 if value is None else value)


# ---- convolution and pooling ----------------------------------------------------------------------------

def _batched(input, name, spatial=2):
    """(N, C, *spatial) input (an unbatched (C, *spatial) one gets a batch dim) and whether it was unbatched."""
    if input.ndim == spatial + 1:
        return input.unsqueeze(0), True
    if input.ndim != spatial + 2:
        raise RuntimeError(
            f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input to {name}, "
            f"but got input of size: {_shape_str(input.shape)}"
        )
    return input, False


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D cross-correlation of (N, C, H, W) input with (O, C/groups, kh, kw) weight (im2col + one matmul)."""
    x, unbatched = _batched(input, "conv2d")
    stride, dilation = _pair(stride), _pair(dilation)
    o, cg, kh, kw = weight.shape
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0, 0)
        elif padding == "same":
            if stride != (1, 1):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            total = (dilation[0] * (kh - 1), dilation[1] * (kw - 1))
            if total[0] % 2 or total[1] % 2:
                left = (total[0] // 2, total[1] // 2)
                x = pad(x, (left[1], total[1] - left[1], left[0], total[0] - left[0]))
                padding = (0, 0)
            else:
                padding = (total[0] // 2, total[1] // 2)
        else:
            raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
    else:
        padding = _pair(padding)
    if x.shape[1] != cg * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {_shape_str(weight.shape)}, expected input{_shape_str(x.shape)} "
            f"to have {cg * groups} channels, but got {x.shape[1]} channels instead"
        )
    if o % groups:
        raise RuntimeError("Given groups, weight's out channels must be divisible by groups")
    for i, (size, k) in enumerate(zip(x.shape[2:], (kh, kw))):
        if size + 2 * padding[i] < dilation[i] * (k - 1) + 1:
            raise RuntimeError(
                f"Calculated padded input size per channel: ({x.shape[2] + 2 * padding[0]} x {x.shape[3] + 2 * padding[1]}). "
                f"Kernel size: ({dilation[0] * (kh - 1) + 1} x {dilation[1] * (kw - 1) + 1}). "
                "Kernel size can't be greater than actual input size"
            )
    x, weight, bias = autocast_args("Conv2d", x, weight, bias)  # tc.autocast casts before the dtype check
    if weight.dtype is not x.dtype:
        raise RuntimeError(
            f"Input type ({x.type()}) and weight type ({weight.type()}) should be the same"
        )
    out = _conv.Conv2d.apply(x, weight, bias, stride, padding, dilation, groups)
    return out.squeeze(0) if unbatched else out


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding patches as columns: (N, C, H, W) -> (N, C*kh*kw, L), like `F.unfold`."""
    if input.ndim < 3:  # PyTorch's own error here comes from indexing the channel dimension
        raise IndexError(f"Dimension out of range (expected to be in range of [-{max(input.ndim, 1)}, "
                         f"{max(input.ndim, 1) - 1}], but got 2)")
    if input.ndim > 4:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {_shape_str(input.shape)}")
    x, unbatched = _batched(input, "unfold")
    kernel, dilation, padding, stride = _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    n = x.shape[0]
    cols = _conv.Im2Col.apply(x, kernel, stride, padding, dilation)  # (C*kh*kw, N*L)
    out = cols.reshape(cols.shape[0], n, -1).transpose(0, 1)
    return out.squeeze(0) if unbatched else out


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


# ---- normalisation and embedding ------------------------------------------------------------------------

def _normalized_dims(input, normalized_shape, star="*, "):
    """(normalized_shape as a tuple, the trailing dims it covers), or PyTorch's error when the input's trailing
    sizes differ (layer_norm writes `[*, 4]`, rms_norm `[*4]`)."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    k = len(normalized_shape)
    if tuple(input.shape[input.ndim - k:]) != normalized_shape:
        raise RuntimeError(
            f"Given normalized_shape={_shape_str(normalized_shape)}, expected input with shape "
            f"[{star}{', '.join(map(str, normalized_shape))}], but got input of size{_shape_str(input.shape)}"
        )
    return normalized_shape, tuple(range(input.ndim - k, input.ndim))


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalize over the trailing `normalized_shape` dims, then scale by weight and shift by bias."""
    normalized_shape, dims = _normalized_dims(input, normalized_shape)
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


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    """Rows of `weight` picked by the integer tensor `input` (output shape input.shape + (dim,))."""
    if input.dtype.is_floating_point:
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; "
            f"but got {input.type()} instead (while checking arguments for embedding)"
        )
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    if max_norm is not None:
        with no_grad():
            rows = weight._data[input._data.reshape(-1)]
            norms = (abs(rows) ** norm_type).sum(-1) ** (1.0 / norm_type)
            scale = weight._xp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
            weight._data[input._data.reshape(-1)] = rows * scale[:, None]
    return _Embedding.apply(weight, input, padding_idx)


# ---- losses ----------------------------------------------------------------------------------------------

def _reduction(size_average, reduce, reduction):
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def _check_reduction(reduction):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _reduce(loss, reduction):
    _check_reduction(reduction)
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _class_scores_2d(input, target, name):
    """Input as (M, C) rows of class scores and target flattened to match; plus the 'none' output shape."""
    if input.ndim == 1:
        if target.ndim == 0:
            return input.unsqueeze(0), target.reshape(1), ()
        if target.shape == input.shape and target.dtype.is_floating_point:
            return input.unsqueeze(0), target.unsqueeze(0), ()
    if input.ndim == 0:
        raise RuntimeError(f"{name}: input tensor should be 1D or 2D or more, got 0D")
    n = input.shape[0]
    if target.ndim >= 1 and target.shape[0] != n and not (target.dtype.is_floating_point and target.shape == input.shape):
        raise ValueError(f"Expected input batch_size ({n}) to match target batch_size ({target.shape[0]}).")
    c = input.shape[1]
    if input.ndim > 2:
        perm = (0,) + tuple(range(2, input.ndim)) + (1,)
        rows = input.permute(*perm).reshape(-1, c)
        out_shape = (n,) + tuple(input.shape[2:])
        if target.dtype.is_floating_point and target.shape == input.shape:
            target = target.permute(*perm).reshape(-1, c)
        else:
            target = target.reshape(-1)
        return rows, target, out_shape
    return input, target, (n,)


def _coefficients(xp, target, num_classes, weight, ignore_index, label_smoothing, dtype):
    """The constant (M, C) loss coefficients for class-index targets, and the 'mean' denominator."""
    t = target._data
    valid = t != ignore_index
    safe = xp.where(valid, t, 0)
    bad = first_out_of_range(safe, num_classes)  # ignored targets were replaced by 0 in `safe`
    if bad is not None:
        raise IndexError(f"Target {bad} is out of bounds.")
    w = weight._data.astype(dtype) if weight is not None else xp.ones(num_classes, dtype=dtype)
    wt = w[safe] * valid
    coeff = xp.zeros((t.shape[0], num_classes), dtype=dtype)
    coeff[xp.arange(t.shape[0]), safe] = wt * (1.0 - label_smoothing)
    if label_smoothing > 0:
        coeff += (label_smoothing / num_classes) * w[None, :] * valid[:, None]
    return coeff, wt.sum()


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Cross-entropy between logits `input` (N, C, ...) and class indices or class probabilities.

    Fused log-softmax + NLL: stable for huge logits, backward = softmax - target distribution.
    """
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    rows, tgt, out_shape = _class_scores_2d(input, target, "cross_entropy")
    xp, dtype = rows._xp, rows._data.dtype
    c = rows.shape[1]
    if tgt.dtype.is_floating_point:
        if tuple(tgt.shape) != tuple(rows.shape):
            raise RuntimeError("expected scalar type Long but found " + tgt.type().split(".")[-1].replace("Tensor", ""))
        if tgt.requires_grad:  # soft labels that are trained: use the composite (differentiable in target)
            probs = tgt * (1 - label_smoothing) + label_smoothing / c if label_smoothing else tgt
            if weight is not None:
                probs = probs * weight
            loss = -(probs * log_softmax(rows, 1)).sum(1)
            loss = loss.reshape(out_shape) if reduction == "none" else loss
            return _reduce(loss, reduction)
        probs = tgt._data.astype(dtype, copy=False)
        if label_smoothing:
            probs = probs * (1 - label_smoothing) + label_smoothing / c
        coeff = probs * weight._data.astype(dtype)[None, :] if weight is not None else probs
        denom = rows.shape[0]
    else:
        coeff, denom = _coefficients(xp, tgt, c, weight, ignore_index, label_smoothing, dtype)
    out = _fused.CrossEntropy.apply(rows, coeff, reduction, denom)
    return out.reshape(out_shape) if reduction == "none" and tuple(out.shape) != out_shape else out


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log-likelihood of class indices under log-probabilities `input` (N, C, ...)."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    rows, tgt, out_shape = _class_scores_2d(input, target, "nll_loss")
    if tgt.dtype.is_floating_point:
        raise RuntimeError("expected scalar type Long but found " + tgt.type().split(".")[-1].replace("Tensor", ""))
    coeff, denom = _coefficients(rows._xp, tgt, rows.shape[1], weight, ignore_index, 0.0, rows._data.dtype)
    out = _fused.NllLoss.apply(rows, coeff, reduction, denom)
    return out.reshape(out_shape) if reduction == "none" and tuple(out.shape) != out_shape else out


def _warn_size(input, target):
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size.",
            stacklevel=3,
        )


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error: mean((input - target)^2)."""
    _warn_size(input, target)
    diff = input - target
    loss = diff * diff
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, _reduction(size_average, reduce, reduction))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error: mean(|input - target|)."""
    _warn_size(input, target)
    loss = (input - target).abs()
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, _reduction(size_average, reduce, reduction))


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(y log p + (1 - y) log(1 - p)) for probabilities p (logs clamped at -100, as in PyTorch)."""
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) is deprecated. "
            "Please ensure they have the same size."
        )
    d = input._data
    if d.size and (d.min() < 0 or d.max() > 1):
        raise RuntimeError("all elements of input should be between 0 and 1")
    log_p = input.log().clamp(min=-100)
    log_q = (1 - input).log().clamp(min=-100)
    loss = -(target * log_p + (1 - target) * log_q)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, _reduction(size_average, reduce, reduction))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """Binary cross-entropy on logits, computed stably as (1 - y) x + (1 + (pw - 1) y) softplus(-x)."""
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    softplus_neg = (-input.abs()).exp().log1p() + (-input).relu()  # log(1 + exp(-x)) without overflow
    if pos_weight is not None:
        loss = (1 - target) * input + (1 + (pos_weight - 1) * target) * softplus_neg
    else:
        loss = (1 - target) * input + softplus_neg
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, _reduction(size_average, reduce, reduction))


# Further families live in their own files; they may import this module's private helpers (defined above).
from ._functional_activation import *  # noqa: E402,F401,F403
from ._functional_attention import *  # noqa: E402,F401,F403
from ._functional_layers import *  # noqa: E402,F401,F403
from ._functional_loss import *  # noqa: E402,F401,F403
from . import _functional_activation, _functional_attention, _functional_layers, _functional_loss  # noqa: E402

__all__ += (_functional_activation.__all__ + _functional_attention.__all__ + _functional_layers.__all__
            + _functional_loss.__all__)
