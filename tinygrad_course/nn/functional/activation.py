"""Activation functions of `tc.nn.functional`: relu, leaky_relu, gelu, silu, sigmoid, tanh, softplus, the ELU
family (elu, selu, celu), hardtanh/relu6, hardsigmoid, hardswish, mish, logsigmoid, softsign, the shrinks,
threshold, glu, prelu and rrelu, like `torch.nn.functional`'s.

The piecewise ones run the ops in `ops/activation.py`; the smooth ones are fused ops or compositions of
framework ops, as in PyTorch itself.
"""
from __future__ import annotations

import numpy as np

from ...generator import sampler
from ...ops import fused as _fused
from ...shapes import normalize_dim
from ...ops.activation import (
    _float_only,
    hardshrink,  # noqa: F401  (F.hardshrink: the function lives beside its op)
    prelu,  # noqa: F401
    _Celu,
    _CeluInplace,
    _Elu,
    _EluInplace,
    _Glu,
    _Hardsigmoid,
    _Hardswish,
    _Hardtanh,
    _LogSigmoid,
    _Mish,
    _RreluWithNoise,
    _RreluWithNoiseInplace,
    _Softplus,
    _Softshrink,
    _Threshold,
    _ThresholdInplace,
)


def relu(input, inplace=False):
    """max(x, 0) element-wise."""
    return input.relu_() if inplace else input.relu()


def relu_(input):
    """In-place `relu`, like `F.relu_`."""
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
    """1 / (1 + exp(-x)) element-wise, like `F.sigmoid`."""
    return input.sigmoid()


def tanh(input):
    """Hyperbolic tangent element-wise, like `F.tanh`."""
    return input.tanh()


_SELU_ALPHA = 1.6732632423543772848170429916717  # selu's constants (self-normalizing networks)
_SELU_SCALE = 1.0507009873554804934193349852946


def _inplace(input, op, *params):
    """Write op(input) into `input`; `op` is the in-place variant's class (its grad_fn name, as in PyTorch)."""
    return input._inplace(op.apply, *params)


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


def glu(input, dim=-1):
    """Gated linear unit: a * sigmoid(b) for the halves a, b of the input along `dim`, like `F.glu`."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    dim = normalize_dim(dim, input.ndim)
    if input.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size {input.shape[dim]}")
    return _Glu.apply(input, dim)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: negative inputs scaled by a slope drawn from U(lower, upper) per element in
    training, by (lower + upper) / 2 in evaluation, like `F.rrelu`."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    _float_only(input, "rrelu_with_noise")
    xp, a = input._xp, input._data
    if training:
        # as PyTorch's CPU kernel: a float64 U(lower, upper) draw for each element <= 0, in order
        neg = a <= 0
        lo, hi = (float(a.dtype.type(v)) for v in (lower, upper))
        slopes = xp.ones(a.shape, a.dtype)
        slopes[neg] = sampler(None, input._device).uniform(lo, hi, (int(neg.sum()),), np.float64)
    else:
        slopes = (lower + upper) / 2
    noise = xp.where(a > 0, 1, slopes).astype(a.dtype, copy=False)
    if inplace:
        return input._inplace(lambda t: _RreluWithNoiseInplace.apply(t, noise))
    return _RreluWithNoise.apply(input, noise)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place `rrelu`."""
    return rrelu(input, lower, upper, training, inplace=True)
