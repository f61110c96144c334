"""The autograd ops behind the piecewise activations of `tc.nn.functional` (ELU family, hardtanh, hardsigmoid,
hardswish, softplus, mish, logsigmoid, shrinks, threshold, rrelu, prelu, glu).

Each is a small `Op`: a NumPy/CuPy forward and a backward written with framework ops, side by side, so values
are computed stably, gradients at the kinks are PyTorch's and `grad_fn` carries PyTorch's name.
"""
from __future__ import annotations

from ..autograd.engine import Op
from ..tensor_base import _wrap
from . import fused as _fused
from .concat import cat


def _mask(x, cond):
    """A constant 0/1 tensor in x's dtype from boolean array `cond`."""
    return _wrap(cond.astype(x._data.dtype))


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
        (x,) = ctx.saved_tensors
        a, b = x.narrow(ctx.dim, 0, ctx.half), x.narrow(ctx.dim, ctx.half, ctx.half)
        s = b.sigmoid()
        return cat([g * s, g * a * s * (1 - s)], ctx.dim)


def _float_only(input, kernel):
    """PyTorch's error for activations that have no integer kernel."""
    if not input.dtype.is_floating_point:
        kind = input.type().split(".")[-1].replace("Tensor", "")
        raise NotImplementedError(f"\"{kernel}_{input.device.type}\" not implemented for '{kind}'. "
                                  "Hint: convert the input to a floating dtype first, e.g. with .float().")


def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, else 0, like `F.hardshrink` and `Tensor.hardshrink`."""
    _float_only(input, "hardshrink")
    return _Hardshrink.apply(input, lambd)


def prelu(input, weight):
    """max(0, x) + weight * min(0, x) with one learnable slope per channel (dim 1), like `F.prelu` and `tc.prelu`."""
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}")
    n = weight.numel()
    channels = input.shape[1] if input.ndim >= 2 else 1
    if n != 1 and n != channels:
        raise RuntimeError("Mismatch of parameter numbers and input channel size. "
                           f"Found parameter numbers = {n} and channel size = {channels}.")
    shape = (1, n) + (1,) * (input.ndim - 2) if input.ndim >= 2 else (1,) * input.ndim
    return _Prelu.apply(input, weight, shape)
