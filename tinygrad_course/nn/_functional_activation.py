"""More activation functions and distances for `tc.nn.functional`: softplus, elu, selu, celu, relu6,
hardtanh, hardsigmoid, hardswish, mish, logsigmoid, softsign, softmin, glu, shrinks, threshold, prelu,
rrelu, gumbel_softmax, normalize, cosine_similarity, pairwise_distance, pdist.

Each piecewise activation is a small `Op` (NumPy/CuPy forward, framework-op backward) so values are
computed stably, gradients at the kinks are PyTorch's and `grad_fn` carries PyTorch's name; the rest are
compositions of framework ops, as in PyTorch itself.
"""
from __future__ import annotations

import warnings

from ..autograd.function import Op
from ..ops import fused as _fused
from ..ops._util import broadcast_shapes_checked, normalize_dim
from ..tensor import _wrap
from .functional import _softmax_family

__all__ = [
    "softplus", "elu", "elu_", "selu", "selu_", "celu", "celu_", "relu6", "hardtanh", "hardtanh_", "hardsigmoid",
    "hardswish", "mish", "logsigmoid", "softsign", "softmin", "glu", "tanhshrink", "softshrink", "hardshrink",
    "threshold", "threshold_", "prelu", "rrelu", "rrelu_", "gumbel_softmax", "normalize", "cosine_similarity",
    "pairwise_distance", "pdist",
]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _float_only(input, kernel):
    """PyTorch's error for activations that have no integer kernel."""
    if not input.dtype.is_floating_point:
        kind = input.type().split(".")[-1].replace("Tensor", "")
        raise NotImplementedError(f"\"{kernel}_{input.device.type}\" not implemented for '{kind}'. "
                                  "Hint: convert the input to a floating dtype first, e.g. with .float().")


def _mask(x, cond):
    """A constant 0/1 tensor in x's dtype from boolean array `cond`."""
    return _wrap(cond.astype(x._data.dtype))


# ---- element-wise activation ops ----------------------------------------------------------------------

class _Elementwise(Op):
    """One-input activation: subclasses define `value(xp, a, *params)` on arrays and
    `slope(x, *params)` (the derivative, as framework tensors so double backward works)."""

    @staticmethod
    def forward(ctx, x, *params):
        ctx.params = params
        ctx.save_for_backward(x)
        a = x._data
        return ctx._fn.value(x._xp, a, *params).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * ctx._fn.slope(x, *ctx.params)


class _Elu(_Elementwise):
    """scale * x for x > 0, alpha * scale * (exp(x * input_scale) - 1) otherwise (ELU, SELU, CELU)."""

    node_name = "EluBackward0"

    @staticmethod
    def value(xp, a, alpha, scale, input_scale):
        neg = xp.expm1(xp.minimum(a, 0) * input_scale) * (alpha * scale)
        return xp.where(a > 0, a * scale, neg)

    @staticmethod
    def slope(x, alpha, scale, input_scale):
        pos = _mask(x, x._data > 0)
        return pos * scale + (1 - pos) * ((x.clamp(max=0) * input_scale).exp() * (alpha * scale * input_scale))


class _EluInplace(_Elu):
    node_name = "EluBackward1"


class _Celu(_Elu):
    node_name = "CeluBackward0"


class _CeluInplace(_Elu):
    node_name = "CeluBackward1"


class _Hardtanh(_Elementwise):
    """x clipped to [min_val, max_val]; the gradient is 0 at the bounds (as in PyTorch)."""

    node_name = "HardtanhBackward0"

    @staticmethod
    def value(xp, a, lo, hi):
        return xp.minimum(xp.maximum(a, lo), hi)

    @staticmethod
    def slope(x, lo, hi):
        a = x._data
        return _mask(x, (a > lo) & (a < hi))


class _Hardsigmoid(_Elementwise):
    node_name = "HardsigmoidBackward0"

    @staticmethod
    def value(xp, a):
        return xp.minimum(xp.maximum(a + 3, 0), 6) / 6

    @staticmethod
    def slope(x):
        a = x._data
        return _mask(x, (a > -3) & (a < 3)) / 6


class _Hardswish(_Elementwise):
    node_name = "HardswishBackward0"

    @staticmethod
    def value(xp, a):
        return a * xp.minimum(xp.maximum(a + 3, 0), 6) / 6

    @staticmethod
    def slope(x):
        a = x._data
        mid = _mask(x, (a > -3) & (a < 3))
        return x * (mid / 3) + mid * 0.5 + _mask(x, a >= 3)


class _Softplus(_Elementwise):
    """log(1 + exp(beta x)) / beta, computed without overflow; x itself where beta x > threshold."""

    node_name = "SoftplusBackward0"

    @staticmethod
    def value(xp, a, beta, threshold):
        b = a * beta
        smooth = (xp.log1p(xp.exp(-xp.abs(b))) + xp.maximum(b, 0)) / beta
        return xp.where(b > threshold, a, smooth)

    @staticmethod
    def slope(x, beta, threshold):
        linear = _mask(x, x._data * beta > threshold)
        return linear + (1 - linear) * (x * beta).sigmoid()


class _Mish(_Elementwise):
    node_name = "MishBackward0"

    @staticmethod
    def value(xp, a):
        return a * xp.tanh(_Softplus.value(xp, a, 1.0, 20.0))

    @staticmethod
    def slope(x):
        t = _Softplus.apply(x, 1.0, 20.0).tanh()
        return t + x * x.sigmoid() * (1 - t * t)


class _LogSigmoid(_Elementwise):
    node_name = "LogSigmoidBackward0"

    @staticmethod
    def value(xp, a):
        return -(xp.log1p(xp.exp(-xp.abs(a))) + xp.maximum(-a, 0))

    @staticmethod
    def slope(x):
        return (-x).sigmoid()


class _Softshrink(_Elementwise):
    node_name = "SoftshrinkBackward0"

    @staticmethod
    def value(xp, a, lambd):
        return xp.where(a > lambd, a - lambd, xp.where(a < -lambd, a + lambd, 0))

    @staticmethod
    def slope(x, lambd):
        a = x._data
        return _mask(x, (a > lambd) | (a < -lambd))


class _Hardshrink(_Elementwise):
    node_name = "HardshrinkBackward0"

    @staticmethod
    def value(xp, a, lambd):
        return xp.where((a >= -lambd) & (a <= lambd), 0, a)

    @staticmethod
    def slope(x, lambd):
        a = x._data
        return _mask(x, (a < -lambd) | (a > lambd))


class _Threshold(_Elementwise):
    node_name = "ThresholdBackward0"

    @staticmethod
    def value(xp, a, threshold, value):
        return xp.where(a > threshold, a, value)

    @staticmethod
    def slope(x, threshold, value):
        return _mask(x, x._data > threshold)


class _ThresholdInplace(_Threshold):
    node_name = "ThresholdBackward1"


class _RreluWithNoise(_fused.ConstantMultiply):
    """x * noise, where `noise` is 1 for x > 0 and the (random or mean) negative slope elsewhere."""

    node_name = "RreluWithNoiseBackward0"


class _RreluWithNoiseInplace(_RreluWithNoise):
    node_name = "RreluWithNoiseBackward1"


class _Prelu(Op):
    """max(0, x) + weight * min(0, x), weight broadcast along the channel dim (dim 1)."""

    node_name = "PreluKernelBackward0"

    @staticmethod
    def forward(ctx, x, weight, shape):
        ctx.shape = shape
        ctx.save_for_backward(x, weight)
        a = x._data
        return x._xp.where(a > 0, a, a * weight._data.reshape(shape)).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        x, weight = ctx.saved_tensors
        pos = _mask(x, x._data > 0)
        gx = gw = None
        if ctx.needs_input_grad[0]:
            gx = g * (pos + (1 - pos) * weight.reshape(ctx.shape))
        if ctx.needs_input_grad[1]:
            per_element = g * x * (1 - pos)
            dims = tuple(i for i in range(x.ndim) if i >= len(ctx.shape) or ctx.shape[i] == 1)
            gw = (per_element.sum(dims) if dims else per_element).reshape(weight.shape)
        return gx, gw


class _Glu(Op):
    """a * sigmoid(b), where a and b are the two halves of x along `dim`."""

    node_name = "GluBackward0"

    @staticmethod
    def forward(ctx, x, dim):
        xp, arr = x._xp, x._data
        half = arr.shape[dim] // 2
        a, b = xp.split(arr, [half], axis=dim)
        ctx.dim, ctx.half = dim, half
        ctx.save_for_backward(x)
        e = xp.exp(-xp.abs(b))  # sigmoid without overflow
        return a * xp.where(b >= 0, 1 / (1 + e), e / (1 + e))

    @staticmethod
    def backward(ctx, g):
        from .. import cat

        (x,) = ctx.saved_tensors
        a, b = x.narrow(ctx.dim, 0, ctx.half), x.narrow(ctx.dim, ctx.half, ctx.half)
        s = b.sigmoid()
        return cat([g * s, g * a * s * (1 - s)], ctx.dim)


def _inplace(input, op, *params):
    """Write op(input) into `input`; `op` is the in-place variant's class (its grad_fn name, as in PyTorch)."""
    return input._inplace(lambda t: op.apply(t, *params))


# ---- public activations ---------------------------------------------------------------------------------

def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta * x)) / beta (x itself where beta * x > threshold), like `F.softplus`."""
    _float_only(input, "softplus")
    return _Softplus.apply(input, beta, threshold)


def elu(input, alpha=1.0, inplace=False):
    """x for x > 0, alpha * (exp(x) - 1) otherwise, like `F.elu`."""
    _float_only(input, "elu")
    if inplace:
        return _inplace(input, _EluInplace, alpha, 1.0, 1.0)
    return _Elu.apply(input, alpha, 1.0, 1.0)


def elu_(input, alpha=1.0):
    """In-place `elu`."""
    return elu(input, alpha, inplace=True)


def selu(input, inplace=False):
    """scale * elu(x, alpha) with the self-normalizing constants, like `F.selu`."""
    _float_only(input, "elu")
    if inplace:
        return _inplace(input, _EluInplace, _SELU_ALPHA, _SELU_SCALE, 1.0)
    return _Elu.apply(input, _SELU_ALPHA, _SELU_SCALE, 1.0)


def selu_(input):
    """In-place `selu`."""
    return selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)), like `F.celu`."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    _float_only(input, "elu")
    if inplace:
        return _inplace(input, _CeluInplace, alpha, 1.0, 1.0 / alpha)
    return _Celu.apply(input, alpha, 1.0, 1.0 / alpha)


def celu_(input, alpha=1.0):
    """In-place `celu`."""
    return celu(input, alpha, inplace=True)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """x clipped to [min_val, max_val] (gradient 0 at and beyond the bounds), like `F.hardtanh`."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        return _inplace(input, _Hardtanh, min_val, max_val)
    return _Hardtanh.apply(input, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """In-place `hardtanh`."""
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    """min(max(0, x), 6), like `F.relu6` (a hardtanh with bounds 0 and 6)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6, like `F.hardsigmoid`."""
    _float_only(input, "hardsigmoid")
    return _inplace(input, _Hardsigmoid) if inplace else _Hardsigmoid.apply(input)


def hardswish(input, inplace=False):
    """x * relu6(x + 3) / 6, like `F.hardswish`."""
    _float_only(input, "hardswish")
    return _inplace(input, _Hardswish) if inplace else _Hardswish.apply(input)


def mish(input, inplace=False):
    """x * tanh(softplus(x)), like `F.mish`."""
    _float_only(input, "mish")
    return _inplace(input, _Mish) if inplace else _Mish.apply(input)


def logsigmoid(input):
    """log(sigmoid(x)) = -softplus(-x), computed without overflow, like `F.logsigmoid`."""
    _float_only(input, "log_sigmoid")
    return _LogSigmoid.apply(input)


def softsign(input):
    """x / (1 + |x|), like `F.softsign`."""
    return input / (input.abs() + 1)


def tanhshrink(input):
    """x - tanh(x), like `F.tanhshrink`."""
    return input - input.tanh()


def _check_lambd(input, lambd):
    if lambd < 0:
        dtype = input._data.dtype
        biggest = float(input._xp.finfo(dtype).max)
        kind = input.type().split(".")[-1].replace("Tensor", "")
        raise RuntimeError(f"lambda must be in range [0, {biggest:g}] for input dtype {kind}, but found {lambd:g}")


def softshrink(input, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, 0 in between, like `F.softshrink`."""
    _float_only(input, "softshrink_check")
    _check_lambd(input, lambd)
    return _Softshrink.apply(input, lambd)


def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, else 0, like `F.hardshrink`."""
    _float_only(input, "hardshrink")
    return _Hardshrink.apply(input, lambd)


def _threshold(input, threshold, value, inplace):
    if inplace:
        return _inplace(input, _ThresholdInplace, threshold, value)
    return _Threshold.apply(input, threshold, value)


def threshold(input, threshold, value, inplace=False):
    """x where x > threshold, else `value`, like `F.threshold`."""
    return _threshold(input, threshold, value, inplace)


def threshold_(input, threshold, value):
    """In-place `threshold`."""
    return _threshold(input, threshold, value, True)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x) along `dim`, like `F.softmin`."""
    return _softmax_family(_fused.Softmax, "softmin", -input, dim, dtype)


def glu(input, dim=-1):
    """Gated linear unit: a * sigmoid(b) for the halves a, b of the input along `dim`, like `F.glu`."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    dim = normalize_dim(dim, input.ndim)
    if input.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size {input.shape[dim]}")
    return _Glu.apply(input, dim)


def prelu(input, weight):
    """max(0, x) + weight * min(0, x) with one learnable slope per channel (dim 1), like `F.prelu`."""
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}")
    n = weight.numel()
    channels = input.shape[1] if input.ndim >= 2 else 1
    if n != 1 and n != channels:
        raise RuntimeError("Mismatch of parameter numbers and input channel size. "
                           f"Found parameter numbers = {n} and channel size = {channels}.")
    shape = (1, n) + (1,) * (input.ndim - 2) if input.ndim >= 2 else (1,) * input.ndim
    return _Prelu.apply(input, weight, shape)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: negative inputs scaled by a slope drawn from U(lower, upper) per element in
    training, by (lower + upper) / 2 in evaluation, like `F.rrelu`."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    _float_only(input, "rrelu_with_noise")
    xp, a = input._xp, input._data
    if training:
        from ..factories import sampler

        slopes = sampler(None, input._device).random(tuple(input.shape)) * (upper - lower) + lower
    else:
        slopes = (lower + upper) / 2
    noise = xp.where(a > 0, 1, slopes).astype(a.dtype, copy=False)
    if inplace:
        return input._inplace(lambda t: _RreluWithNoiseInplace.apply(t, noise))
    return _RreluWithNoise.apply(input, noise)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place `rrelu`."""
    return rrelu(input, lower, upper, training, inplace=True)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """Sample from the Gumbel-softmax distribution (one-hot in the forward pass with `hard=True`, gradients
    of the soft sample either way), like `F.gumbel_softmax`."""
    from .. import empty_like, zeros_like

    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -empty_like(logits).exponential_().log()  # ~Gumbel(0, 1)
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft  # straight-through: forward one-hot, backward soft


# ---- distances ------------------------------------------------------------------------------------------

def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """x / max(||x||_p, eps) along `dim`, like `F.normalize`."""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    result = input / denom
    return result if out is None else out.copy_(result)


def _check_broadcastable(a, b):
    """PyTorch's error for two shapes that do not broadcast."""
    broadcast_shapes_checked(a, b, hint=False)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 * x2) / (max(||x1||, eps) * max(||x2||, eps)) along `dim`, like `F.cosine_similarity`."""
    from .. import broadcast_tensors

    if not x1.dtype.is_floating_point and not x2.dtype.is_floating_point:
        kind = x1.type().split(".")[-1].replace("Tensor", "")
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {kind}")
    if not x1.dtype.is_floating_point:
        x1 = x1.to(x2.dtype)
    elif not x2.dtype.is_floating_point:
        x2 = x2.to(x1.dtype)
    _check_broadcastable(x1.shape, x2.shape)
    x1, x2 = broadcast_tensors(x1, x2)
    # Each vector is divided by its own norm first (as PyTorch does), so large inputs do not overflow;
    # the norms are clamped at eps without changing their gradient.
    n1, n2 = x1.norm(2, dim, keepdim=True), x2.norm(2, dim, keepdim=True)
    n1 = n1 + (n1.clamp_min(eps) - n1).detach()
    n2 = n2 + (n2.clamp_min(eps) - n2).detach()
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dim, like `F.pairwise_distance`."""
    last = max(x1.ndim, x2.ndim) - 1
    return (x1 - x2 + eps).norm(p, last, keepdim)


def pdist(input, p=2):
    """p-norm distances between all pairs of rows of a 2-D input (the upper triangle, row by row),
    like `F.pdist`."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    xp = input._xp
    rows, cols = xp.triu_indices(input.shape[0], 1)
    diff = input.index_select(0, _wrap(rows.astype(xp.int64))) - input.index_select(0, _wrap(cols.astype(xp.int64)))
    return diff.norm(p, 1)
