"""Fused ops where PyTorch fuses: softmax, log-softmax, cross-entropy / NLL, GELU, SiLU, leaky ReLU,
dropout, and the normalisations (layer norm, batch norm).

Each forward works on whole arrays at once (through the tensor's array module `x._xp`), and each
backward is written with framework ops, so `create_graph=True` gives second derivatives. When no
graph is being built during backward (the usual case) the backward reuses arrays kept from the
forward instead of recomputing them.
"""
from __future__ import annotations

import math

import numpy as np

from .. import seams
from ..autograd.autocast_state import autocast_state as _autocast
from ..autograd.engine import Op, profilers
from ..tensor_base import _wrap
from . import gpu_kernels
from .erf import erf as _erf
from .erf import normal_cdf_float32
from .normalize_grads import _MANY, normalize_grads_array, trailing_rows
from ..shapes import normalize_dim


def _float(x):
    """x's array, as float32 when x is an integer or bool tensor."""
    d = x._data
    return d if x.dtype.is_floating_point else d.astype("float32")


# ---- softmax family --------------------------------------------------------------------------------

def _log_softmax_array(xp, a, dim):
    shifted = a - a.max(axis=dim, keepdims=True)
    e = xp.exp(shifted)
    s = e.sum(axis=dim, keepdims=True)
    return shifted - xp.log(s), e / s


class LogSoftmax(Op):
    """log(softmax(x)) along `dim`, computed as x - max - log(sum(exp(x - max))) (no overflow)."""

    node_name = "LogSoftmaxBackward0"

    @staticmethod
    def forward(ctx, x, dim):
        dim = normalize_dim(dim, x.ndim)
        out, p = _log_softmax_array(x._xp, _float(x), dim)
        ctx.dim, ctx.p = dim, p
        ctx.save_for_backward(x)
        return out

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g - Softmax.apply(x, ctx.dim) * g.sum(ctx.dim, keepdim=True)

    @staticmethod
    def fused_backward(ctx, g):
        gd = g._data
        return gd - ctx.p * gd.sum(axis=ctx.dim, keepdims=True)



class Softmax(Op):
    """exp(x - max) / sum(exp(x - max)) along `dim`."""

    node_name = "SoftmaxBackward0"

    @staticmethod
    def forward(ctx, x, dim):
        dim = normalize_dim(dim, x.ndim)
        a = _float(x)
        xp = x._xp
        if xp is np:  # the ufuncs' reductions, without the Python wrappers of ndarray.max and .sum
            e = np.exp(a - np.maximum.reduce(a, axis=dim, keepdims=True))
            e /= np.add.reduce(e, axis=dim, keepdims=True)
            out = e
        else:
            e = xp.exp(a - a.max(axis=dim, keepdims=True))
            out = e / e.sum(axis=dim, keepdims=True)
        ctx.dim, ctx.p = dim, out
        ctx.save_for_backward(x)
        return out

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        p = Softmax.apply(x, ctx.dim)
        gp = g * p
        return gp - p * gp.sum(ctx.dim, keepdim=True)

    @staticmethod
    def fused_backward(ctx, g):
        gp = g._data * ctx.p
        return gp - ctx.p * gp.sum(axis=ctx.dim, keepdims=True)


# ---- losses over class scores ------------------------------------------------------------------------

def _reduce_rows(xp, per_row, reduction, denom, dtype):
    """Per-row losses reduced as `reduction` says ("none", "sum", or "mean" = sum / denom)."""
    if reduction == "none":
        return per_row.astype(dtype, copy=False)
    total = per_row.sum()
    if reduction == "mean" and type(denom) is float and denom:
        total = total / denom
    elif reduction == "mean":
        with _errstate(xp):
            total = total / denom
    return xp.asarray(total, dtype=dtype)


class CrossEntropy(Op):
    """Fused log-softmax + negative log-likelihood over logits `x` of shape (M, C).

    `coeff` is a constant (M, C) array: the weight each log-probability gets in the loss
    (one-hot class weights, label smoothing or target probabilities all reduce to it), so
    loss_i = -sum_c coeff_ic * log_softmax(x)_ic and d loss_i / d x = softmax(x) * sum_c coeff_ic - coeff_i.
    """

    node_name = "NllLossBackward0"

    @staticmethod
    def forward(ctx, x, coeff, reduction, denom, picked=False):
        xp = x._xp
        if x._device.type == "cuda":  # fused kernels; backward rebuilds the softmax from row statistics
            per_row, ctx.row_stats = gpu_kernels.cross_entropy_forward(x._data, coeff, picked)
            p = None
        else:
            logp, p = _log_softmax_array(xp, x._data, 1)
            per_row = -gpu_kernels.weighted_row_sums(xp, coeff, logp, picked)
        ctx.p, ctx.coeff, ctx.reduction, ctx.denom = p, coeff, reduction, denom
        ctx.save_for_backward(x)
        return _reduce_rows(xp, per_row, reduction, denom, x._data.dtype)

    @staticmethod
    def fused_backward(ctx, g):
        (x,) = ctx.saved_tensors
        coeff = ctx.coeff
        scale = 1.0 / ctx.denom if ctx.reduction == "mean" else 1.0
        gd = g._data[:, None] if ctx.reduction == "none" else g._data
        if ctx.p is None:
            return gpu_kernels.cross_entropy_backward(x._data, ctx.row_stats, coeff, gd * scale)
        row_total = coeff.sum(axis=1, keepdims=True)
        return ((ctx.p * row_total - coeff) * (gd * scale)).astype(x._data.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        coeff = ctx.coeff
        scale = 1.0 / ctx.denom if ctx.reduction == "mean" else 1.0
        row_total = coeff.sum(axis=1, keepdims=True)
        p = Softmax.apply(x, 1)
        gcol = g.unsqueeze(1) if ctx.reduction == "none" else g
        return (p * _wrap(row_total.astype(x._data.dtype)) - _wrap(coeff.astype(x._data.dtype))) * (gcol * _factor(scale, g))


class NllLoss(Op):
    """Negative log-likelihood on log-probabilities `logp` (M, C) with a constant (M, C) coefficient array."""

    node_name = "NllLossBackward0"

    @staticmethod
    def forward(ctx, logp, coeff, reduction, denom):
        xp = logp._xp
        per_row = -gpu_kernels.weighted_row_sums(xp, coeff, logp._data, True)  # targets are class indices
        ctx.coeff, ctx.reduction, ctx.denom, ctx.dtype = coeff, reduction, denom, logp._data.dtype
        return _reduce_rows(xp, per_row, reduction, denom, logp._data.dtype)

    @staticmethod
    def backward(ctx, g):
        scale = -1.0 / ctx.denom if ctx.reduction == "mean" else -1.0
        gcol = g.unsqueeze(1) if ctx.reduction == "none" else g
        return _wrap(ctx.coeff.astype(ctx.dtype, copy=False)) * (gcol * _factor(scale, g))


def _factor(value, like):
    """A loss scale ready for tensor arithmetic: a Python number stays one; a backend scalar or 0-d array
    (the weighted 'mean' denominator, which stays on the GPU) becomes a 0-d tensor on `like`'s device."""
    return value if isinstance(value, (int, float)) else _wrap(like._xp.asarray(value))


class _errstate:
    """Silence 0/0 warnings (a mean over no targets is nan, as in PyTorch)."""

    def __init__(self, xp):
        self.xp = xp

    def __enter__(self):
        if hasattr(self.xp, "errstate"):
            self._old = self.xp.seterr(divide="ignore", invalid="ignore")

    def __exit__(self, *exc):
        if hasattr(self.xp, "errstate"):
            self.xp.seterr(**self._old)


# ---- activations ----------------------------------------------------------------------------------------

_SQRT_HALF = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


class NormalCdf(Op):
    """Phi(x) = 0.5 * (1 + erf(x / sqrt(2))), the standard normal CDF (used by exact GELU's backward)."""

    node_name = "ErfBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        a = x._data
        return (0.5 * (1.0 + _erf(x._xp, a * _SQRT_HALF))).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * ((x * x * -0.5).exp() * _INV_SQRT_2PI)


# Up to this many elements SciPy's erf (a loop per element, when SciPy is installed) takes less time than
# `normal_cdf_float32`'s array operations (2 us against 17 us for 256 float32 values: a token through a
# small model's MLP); above it the array operations win.
_SMALL_ERF = 1024


def _normal_cdf(xp, a):
    """Phi(x) = 0.5 * (1 + erf(x / sqrt(2))) as a fresh array: float32 arithmetic for a float32 NumPy array of
    more than `_SMALL_ERF` numbers, else `erf` of the array's dtype."""
    if xp is np and a.dtype == np.float32 and a.size > _SMALL_ERF:
        return normal_cdf_float32(xp, a)
    d = _erf(xp, a * _SQRT_HALF)
    d += 1.0
    d *= 0.5
    return d


def _normal_cdf_from_output(ctx, xp, a, a2):
    """Phi(x) for GELU's backward on the CPU as a fresh array, given a2 = x * x. From the saved output
    y = x Phi(x) when it is unchanged: Phi = y / x costs one division where computing erf again costs about 25
    array passes (PyTorch keeps only x; the output is kept here anyway by the layer after GELU, so holding it
    costs no memory). Where |x| is below 2^-60 (y / x would lose precision in subnormals, or be 0 / 0) Phi is
    0.5 to float64 precision; an infinite x gives NaN, as PyTorch's gradient there."""
    y = None
    if ctx.save_output:
        try:
            y = ctx.saved_output._data
        except RuntimeError:  # the output was modified in place: recompute from x, as PyTorch does
            y = None
    if y is None or y.dtype != a.dtype:
        return _normal_cdf(xp, a)
    with _errstate(xp):
        d = xp.divide(y, a)
    tiny = a2 < 2.0 ** -120
    if tiny.any():
        d[tiny] = 0.5
    return d


class Gelu(Op):
    """GELU: x * Phi(x) (approximate='none') or its tanh approximation (approximate='tanh')."""

    node_name = "GeluBackward0"

    @staticmethod
    def forward(ctx, x, approximate="none"):
        xp, a = x._xp, x._data
        ctx.approximate = approximate
        ctx.save_for_backward(x)
        if x._device.type == "cuda":
            return gpu_kernels.gelu_forward(a, approximate)
        if approximate == "tanh":
            return (0.5 * a * (1.0 + xp.tanh(_SQRT_2_OVER_PI * (a + 0.044715 * a * a * a)))).astype(a.dtype, copy=False)
        e = _normal_cdf(xp, a)
        if e.dtype != a.dtype:
            return (a * e).astype(a.dtype, copy=False)
        e *= a  # x * Phi(x) in Phi's own storage
        # the output is kept for the backward (the next layer keeps it anyway): Phi(x) = gelu(x) / x there
        ctx.save_output = True
        return e

    @staticmethod
    def fused_backward(ctx, g):
        (x,) = ctx.saved_tensors
        if x._device.type == "cuda":
            return gpu_kernels.gelu_backward(x._data, g._data, ctx.approximate)
        if ctx.approximate == "tanh" or g.dtype is not x.dtype or x.dtype.name not in ("float32", "float64"):
            return NotImplemented
        # in place, so that the backward holds two input-sized temporaries at a time
        xp, a = x._xp, x._data
        pdf = a * a
        d = _normal_cdf_from_output(ctx, xp, a, pdf)
        pdf *= -0.5 / math.log(2.0)
        xp.exp2(pdf, out=pdf)  # exp(-x^2 / 2) as 2^(-x^2 log2(e) / 2): NumPy's exp2 runs twice as fast
        pdf *= a
        pdf *= _INV_SQRT_2PI  # x phi(x)
        d += pdf
        d *= g._data
        return d.astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        if ctx.approximate == "tanh":
            inner = (x + x * x * x * 0.044715) * _SQRT_2_OVER_PI
            t = inner.tanh()
            d_inner = (x * x * (3 * 0.044715) + 1) * _SQRT_2_OVER_PI
            return g * ((t + 1) * 0.5 + x * 0.5 * (1 - t * t) * d_inner)
        return g * (NormalCdf.apply(x) + x * (x * x * -0.5).exp() * _INV_SQRT_2PI)


class Silu(Op):
    """SiLU (swish): x * sigmoid(x)."""

    node_name = "SiluBackward0"

    @staticmethod
    def forward(ctx, x):
        xp, a = x._xp, x._data
        e = xp.exp(-xp.abs(a))
        s = xp.where(a >= 0, 1 / (1 + e), e / (1 + e)).astype(a.dtype, copy=False)
        ctx.save_for_backward(x)
        return a * s

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        s = x.sigmoid()
        return g * (s * (x * (1 - s) + 1))


class LeakyRelu(Op):
    """max(x, 0) + negative_slope * min(x, 0)."""

    node_name = "LeakyReluBackward0"

    @staticmethod
    def forward(ctx, x, negative_slope=0.01):
        a = x._data
        ctx.save_for_backward(x)
        ctx.slope = negative_slope
        return x._xp.where(a > 0, a, a * negative_slope).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        xp, a = x._xp, x._data
        return g * _wrap(xp.where(a > 0, 1.0, ctx.slope).astype(a.dtype))


class ConstantMultiply(Op):
    """x * mask, where `mask` is an array drawn by the caller (no gradient flows to it)."""

    @staticmethod
    def forward(ctx, x, mask):
        ctx.mask = mask
        return x._data * mask

    @staticmethod
    def backward(ctx, g):
        return g * _wrap(ctx.mask)


class Dropout(ConstantMultiply):
    """x * mask, where `mask` (an array of 0 and 1/(1-p)) was drawn by the caller."""

    node_name = "NativeDropoutBackward0"


# ---- normalisation ------------------------------------------------------------------------------------

_EXACT_MEAN = (np.dtype(np.float32), np.dtype(np.float64))


def _mean(xp, a, dims):
    """`a.mean(axis=dims, keepdims=True)`, with NumPy's float32/float64 result, without its Python wrapper (which
    costs more than the sum on a short row): the sum, then one division by the count. NumPy divides by the
    count as a float64 and rounds to float32; dividing in float32 rounds once to the same value (a division
    rounded to float64 and then to float32 is correctly rounded), as long as the count is exact in float32."""
    if xp is not np or a.dtype not in _EXACT_MEAN:
        return a.mean(axis=dims, keepdims=True)
    count = 1
    for d in dims:
        count *= a.shape[d]
    if not 0 < count < 1 << 24:
        return a.mean(axis=dims, keepdims=True)
    return np.add.reduce(a, axis=dims, keepdims=True) / count  # (NumPy's in-place `/=` by a number is slower)


def normalized(xp, a, w, b, dims, param_shape, eps, stats=None):
    """`Normalize`'s forward on arrays: (the result in a's dtype, mean, variance, 1 / sqrt(variance + eps))."""
    rows = trailing_rows(a, dims) if stats is None else None
    if rows is not None:  # layer norm: each row's statistics as products with a vector of ones
        a2, n, keep = rows
        ones = xp.ones((n, 1), dtype=a.dtype)
        mean = xp.matmul(a2, ones)
        mean /= n
        xc = a2 - mean
        var = xp.matmul(xc * xc, ones)
        var /= n
        mean, var, xc = mean.reshape(keep), var.reshape(keep), xc.reshape(a.shape)
    elif stats is None:
        mean = _mean(xp, a, dims)
        xc = a - mean
        var = _mean(xp, xc * xc, dims)
    else:
        mean, var = (s.reshape(param_shape).astype(a.dtype, copy=False) for s in stats)
        xc = a - mean
    rstd = 1.0 / xp.sqrt(var + eps)
    # x-hat, then the affine map, in xc's own storage (values as x-hat * weight + bias; one temporary)
    out = xc
    out *= rstd
    if w is not None:
        out *= w.reshape(param_shape)
    if b is not None:
        out += b.reshape(param_shape)
    return out.astype(a.dtype, copy=False), mean, var, rstd


_add_reduce = np.add.reduce


def _one_row(a, w, b, n, eps):
    """Layer norm of an array holding a single row of n numbers (generation's one position): `normalized`'s
    formulas in its order (so the same bits as the recorded op), with the statistics as NumPy scalars of a's
    dtype, the sums as `np.add.reduce` (`_mean`'s) on the flat row and the affine map in place: half the
    NumPy calls and none of the reshapes and Python wrappers, which dominate on 64 numbers."""
    row = a.reshape(n)
    xc = row - _add_reduce(row) / n
    rstd = 1.0 / np.sqrt(_add_reduce(xc * xc) / n + eps)
    xc *= rstd
    if w is not None:
        xc *= w.reshape(n)
    if b is not None:
        xc += b.reshape(n)
    return xc.reshape(a.shape)


def layer_norm_unrecorded(x, weight, bias, dims, param_shape, eps):
    """`F.layer_norm`'s array for a call that records no graph (the caller checks) while nothing intercepts
    ops (no profiler, autocast or build-mode component), for NumPy float32/float64 operands of one dtype;
    None for every other case, which the `Normalize` op handles."""
    if profilers or _autocast.active or seams.ACTIVE:
        return None
    a, dtype = x._data, x.dtype
    if dtype.name not in ("float32", "float64") or type(a) is not np.ndarray:
        return None
    w = b = None
    if weight is not None:
        w = weight._data
        if weight.dtype is not dtype or type(w) is not np.ndarray:
            return None
    if bias is not None:
        b = bias._data
        if bias.dtype is not dtype or type(b) is not np.ndarray:
            return None
    n = a.shape[-1] if len(dims) == 1 else math.prod(a.shape[a.ndim - len(dims):])
    if a.size == n and 0 < n < _MANY:  # (from _MANY numbers on, `normalized` sums with products)
        return _one_row(a, w, b, n, eps)
    return normalized(np, a, w, b, dims, param_shape, eps)[0]


def _param_dims(ctx, ndim):
    """The dims of x that the weight and bias are broadcast over (their gradients sum over them)."""
    full = (1,) * (ndim - len(ctx.param_shape)) + tuple(ctx.param_shape)
    return tuple(i for i in range(ndim) if full[i] == 1)


class Normalize(Op):
    """(x - mean) / sqrt(var + eps) * weight + bias, the statistics taken over `dims` of x.

    Shared by layer norm (dims = the trailing normalized dims, weight shaped like them) and batch
    norm (dims = all but the channel dim, weight broadcast along the channel). With `stats`
    given (batch norm in eval mode) the mean and variance are constants instead of batch statistics.
    """

    node_name = "NativeLayerNormBackward0"

    @staticmethod
    def forward(ctx, x, weight, bias, dims, param_shape, eps, stats=None):
        out, mean, var, rstd = normalized(x._xp, x._data, None if weight is None else weight._data,
                                          None if bias is None else bias._data, dims, param_shape, eps, stats)
        if ctx.needs_input_grad:  # recorded: what the backward needs
            ctx.dims, ctx.param_shape, ctx.eps, ctx.frozen = dims, param_shape, eps, stats is not None
            # x is saved, and x-hat rebuilt from it in the backward: like PyTorch, nothing input-sized is kept
            # besides x
            ctx.rstd, ctx.batch_mean, ctx.batch_var = rstd, mean, var
            ctx.bias_shape = bias._data.shape if bias is not None else None
            ctx.save_for_backward(x, weight)
        return out

    @staticmethod
    def fused_backward(ctx, g):
        x, weight = ctx.saved_tensors
        if g.dtype is not x.dtype or x.dtype.name not in ("float32", "float64") or (
                weight is not None and weight.dtype is not x.dtype):
            return NotImplemented
        return normalize_grads_array(ctx, x._xp, g._data, x._data, weight, ctx.dims, _param_dims(ctx, x.ndim))

    @staticmethod
    def backward(ctx, g):
        x, weight = ctx.saved_tensors
        dims, shape = ctx.dims, ctx.param_shape
        param_dims = _param_dims(ctx, x.ndim)
        if not ctx.frozen:
            mean = x.mean(dims, keepdim=True)
            xc = x - mean
            rstd = ((xc * xc).mean(dims, keepdim=True) + ctx.eps).rsqrt()
            xhat = xc * rstd
        else:
            xhat, rstd = _wrap((x._data - ctx.batch_mean) * ctx.rstd), _wrap(ctx.rstd)
        need = ctx.needs_input_grad
        gx = gw = gb = None
        gxhat = g * weight.reshape(shape) if weight is not None else g
        if need[0]:
            if ctx.frozen:
                gx = gxhat * rstd
            else:
                gx = (gxhat - gxhat.mean(dims, keepdim=True) - xhat * (gxhat * xhat).mean(dims, keepdim=True)) * rstd
        if need[1]:
            gw = (g * xhat).sum(param_dims).reshape(weight.shape)
        if need[2]:
            gb = g.sum(param_dims).reshape(ctx.bias_shape)
        return gx, gw, gb


class BatchNormalize(Normalize):
    node_name = "NativeBatchNormBackward0"
