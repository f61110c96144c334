"""Fused CuPy kernels for the GPU's hottest element-wise paths: the Adam/AdamW update, softmax +
cross-entropy, and GELU.

On a GPU every array operation is one kernel launch that reads and writes all of its operands from
GPU memory. An Adam update written as array calls (`m = beta1*m + ...; v = ...; p -= ...`) launches a
dozen kernels and streams the parameter-sized arrays through memory a dozen times; as one
`ElementwiseKernel` it reads p, g, m, v once and writes p, m, v once. The same holds for the
softmax-cross-entropy backward (`softmax * row_total - coeff`, scaled) and GELU.

Each public function takes backend arrays and works on both devices: CuPy float32 arrays go to the
fused kernel; anything else (NumPy arrays, other dtypes) runs the reference version written with
ordinary array calls through the array module — the same math the CPU path of the framework uses,
and the version the GPU tests compare the kernels against. Kernels are compiled on first use; this
module never imports CuPy itself (it asks `_backend.cupy_module()`).

Where they plug in (each hook only fires for tensors on cuda):
    optim/adam.py   Adam._update_group        adam_update(w, g, m, v, ...) instead of the array calls
    ops/fused.py    CrossEntropy forward/back cross_entropy_forward / cross_entropy_backward
    ops/fused.py    Gelu forward/backward     gelu_forward / gelu_backward
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .._backend import cupy_module
from .erf import erf as _erf

_SQRT_HALF = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _array_module(arr):
    cp = cupy_module()
    if cp is not None and isinstance(arr, cp.ndarray):
        return cp
    return np


def uses_kernel(*arrays) -> bool:
    """True when these arrays take the fused-kernel path (CuPy arrays, all float32)."""
    cp = cupy_module()
    return cp is not None and all(isinstance(a, cp.ndarray) and a.dtype == np.float32 for a in arrays)


# ---- Adam / AdamW -------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _adam_kernel():
    cp = cupy_module()
    return cp.ElementwiseKernel(
        "float32 grad, float32 l2, float32 decay, float32 one_minus_beta1, float32 beta2, "
        "float32 one_minus_beta2, float32 eps, float32 neg_step_size, float32 bc2_sqrt",
        "float32 param, float32 exp_avg, float32 exp_avg_sq",
        """
        float g = grad + l2 * param;           // L2 weight decay (Adam); l2 == 0 for AdamW
        float p = param * decay;               // decoupled weight decay (AdamW); decay == 1 for Adam
        float m = exp_avg;
        float d = g - m;                       // m.lerp_(g, 1 - beta1), rounded like torch.lerp
        m = (one_minus_beta1 < 0.5f) ? m + one_minus_beta1 * d : g - d * (1.0f - one_minus_beta1);
        float v = exp_avg_sq * beta2 + (g * g) * one_minus_beta2;
        float denom = sqrtf(v) / bc2_sqrt + eps;
        param = p + neg_step_size * (m / denom);
        exp_avg = m;
        exp_avg_sq = v;
        """,
        "tc_adam_update",
    )


def adam_update(param, grad, exp_avg, exp_avg_sq, *, lr, beta1, beta2, eps, weight_decay, decoupled, step):
    """One Adam (or AdamW, `decoupled=True`) step on arrays, in place, with PyTorch's formula.

    `grad` is already negated for `maximize`; `step` is the step count after incrementing (1 on the first
    step). Updates `param`, `exp_avg` and `exp_avg_sq` in place.
    """
    bias_correction1 = 1 - beta1 ** step
    bc2_sqrt = math.sqrt(1 - beta2 ** step)
    step_size = lr / bias_correction1
    l2 = 0.0 if decoupled else weight_decay
    decay = 1 - lr * weight_decay if decoupled else 1.0
    if uses_kernel(param, grad, exp_avg, exp_avg_sq):
        f = np.float32
        _adam_kernel()(grad, f(l2), f(decay), f(1 - beta1), f(beta2), f(1 - beta2), f(eps), f(-step_size),
                       f(bc2_sqrt), param, exp_avg, exp_avg_sq)
        return
    _adam_update_reference(param, grad, exp_avg, exp_avg_sq, beta1, beta2, eps, l2, decay, step_size, bc2_sqrt)


def _adam_update_reference(param, grad, exp_avg, exp_avg_sq, beta1, beta2, eps, l2, decay, step_size, bc2_sqrt):
    g = grad + l2 * param if l2 else grad
    if decay != 1.0:
        param *= decay
    weight = 1 - beta1
    if weight < 0.5:
        exp_avg += weight * (g - exp_avg)
    else:
        exp_avg[...] = g - (g - exp_avg) * (1 - weight)
    exp_avg_sq *= beta2
    exp_avg_sq += (g * g) * (1 - beta2)
    xp = _array_module(param)
    denom = xp.sqrt(exp_avg_sq) / bc2_sqrt + eps
    param += (-step_size) * (exp_avg / denom)


# ---- softmax + cross-entropy --------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _ce_kernels():
    cp = cupy_module()
    # CuPy's post-map expression sees only the outputs and the reduced value `a`, not the inputs, so the
    # kernel returns the row sum of exp(x - m) and the log is taken outside.
    sum_exp = cp.ReductionKernel(
        "float32 x, float32 m", "float32 y", "expf(x - m)", "a + b", "y = a", "0", "tc_row_sum_exp")
    weighted_nll = cp.ReductionKernel(
        "float32 x, float32 m, float32 logs, float32 c", "float32 y", "c * ((m - x) + logs)", "a + b", "y = a", "0",
        "tc_row_nll")
    # class-index targets: a class the target does not pick adds 0 even where its log-probability is -inf
    picked_nll = cp.ReductionKernel(
        "float32 x, float32 m, float32 logs, float32 c", "float32 y", "(c != 0.0f ? c * ((m - x) + logs) : 0.0f)",
        "a + b", "y = a", "0", "tc_row_nll_picked")
    backward = cp.ElementwiseKernel(
        "float32 x, float32 m, float32 logs, float32 c, float32 row_total, float32 scale", "float32 g",
        "g = (expf((x - m) - logs) * row_total - c) * scale", "tc_softmax_ce_backward")
    return sum_exp, weighted_nll, backward, picked_nll


def weighted_row_sums(xp, coeff, values, picked):
    """Row sums of coeff * values. With `picked` (coefficients of class-index targets) a zero coefficient
    contributes 0 even against an infinite value, as PyTorch's nll_loss reads only the target's entry; for
    target probabilities 0 * inf stays nan, as in PyTorch."""
    terms = coeff * values
    sums = terms.sum(axis=1)
    if picked and xp.isnan(sums).any():  # rare: look again, without the 0 * inf terms
        sums = xp.where(coeff != 0, terms, 0).sum(axis=1)
    return sums


def cross_entropy_forward(x, coeff, picked=False):
    """Per-row loss -sum_c coeff[i, c] * log_softmax(x)[i, c] of (M, C) logits, and the row statistics the
    backward needs instead of the whole softmax: the (M, 1) row maximum m and log(sum(exp(x - m))).

    Keeping m and the log-sum apart (not their sum, the log-sum-exp) keeps x - m exact for huge logits,
    where rounding m + log-sum to float32 would cost the softmax its precision."""
    xp = _array_module(x)
    m = x.max(axis=1, keepdims=True)
    if uses_kernel(x, coeff):
        sum_exp, weighted_nll, _, picked_nll = _ce_kernels()
        logs = xp.log(sum_exp(x, m, axis=1, keepdims=True))
        return (picked_nll if picked else weighted_nll)(x, m, logs, coeff, axis=1), (m, logs)
    logs = xp.log(xp.exp(x - m).sum(axis=1, keepdims=True))
    return weighted_row_sums(xp, coeff, (m - x) + logs, picked), (m, logs)


def cross_entropy_backward(x, stats, coeff, scale):
    """d loss / d x = (softmax(x) * row_total - coeff) * scale, with the softmax rebuilt from the row
    statistics `(m, logs)` of `cross_entropy_forward`.

    `scale` is a scalar or an (M, 1) array (the incoming gradient, divided by the mean's denominator).
    """
    m, logs = stats
    row_total = coeff.sum(axis=1, keepdims=True)
    xp = _array_module(x)
    if uses_kernel(x, coeff):
        scale = xp.asarray(scale, dtype=xp.float32)
        return _ce_kernels()[2](x, m, logs, coeff, row_total, scale)
    return ((xp.exp((x - m) - logs) * row_total - coeff) * scale).astype(x.dtype, copy=False)


# ---- GELU -----------------------------------------------------------------------------------------------

_GELU_PREAMBLE = f"""
__device__ float tc_gelu_cdf(float x, bool tanh_approx) {{
    if (tanh_approx) {{
        float inner = {_SQRT_2_OVER_PI}f * (x + 0.044715f * x * x * x);
        return 0.5f * (1.0f + tanhf(inner));
    }}
    return 0.5f * (1.0f + erff(x * {_SQRT_HALF}f));
}}
"""


@functools.lru_cache(maxsize=None)
def _gelu_kernels():
    cp = cupy_module()
    forward = cp.ElementwiseKernel(
        "float32 x, bool tanh_approx", "float32 y", "y = x * tc_gelu_cdf(x, tanh_approx)", "tc_gelu_forward",
        preamble=_GELU_PREAMBLE)
    backward = cp.ElementwiseKernel(
        "float32 x, float32 g, bool tanh_approx", "float32 dx",
        f"""
        if (tanh_approx) {{
            float inner = {_SQRT_2_OVER_PI}f * (x + 0.044715f * x * x * x);
            float t = tanhf(inner);
            float d_inner = {_SQRT_2_OVER_PI}f * (1.0f + 3.0f * 0.044715f * x * x);
            dx = g * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * d_inner);
        }} else {{
            dx = g * (tc_gelu_cdf(x, false) + x * expf(-0.5f * x * x) * {_INV_SQRT_2PI}f);
        }}
        """,
        "tc_gelu_backward", preamble=_GELU_PREAMBLE)
    return forward, backward


def erf_array(xp, a):
    return _erf(xp, a)


def gelu_forward(x, approximate="none"):
    """GELU of an array: x * Phi(x), or the tanh approximation, like `torch.nn.functional.gelu`."""
    if uses_kernel(x):
        return _gelu_kernels()[0](x, approximate == "tanh")
    xp = _array_module(x)
    if approximate == "tanh":
        return (0.5 * x * (1.0 + xp.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))).astype(x.dtype, copy=False)
    return (x * 0.5 * (1.0 + erf_array(xp, x * _SQRT_HALF))).astype(x.dtype, copy=False)


def gelu_backward(x, grad, approximate="none"):
    """grad * d gelu(x) / dx for arrays (first derivative only; double backward uses framework ops)."""
    if uses_kernel(x, grad):
        return _gelu_kernels()[1](x, grad, approximate == "tanh")
    xp = _array_module(x)
    if approximate == "tanh":
        t = xp.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x))
        d_inner = _SQRT_2_OVER_PI * (1.0 + 3 * 0.044715 * x * x)
        return (grad * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * d_inner)).astype(x.dtype, copy=False)
    cdf = 0.5 * (1.0 + erf_array(xp, x * _SQRT_HALF))
    return (grad * (cdf + x * xp.exp(-0.5 * x * x) * _INV_SQRT_2PI)).astype(x.dtype, copy=False)
