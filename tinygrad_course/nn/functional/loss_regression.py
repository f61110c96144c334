"""Regression losses in `tc.nn.functional`: mse_loss, l1_loss, smooth_l1_loss, huber_loss, and the
likelihood losses poisson_nll_loss and gaussian_nll_loss. Compositions of framework ops, as in PyTorch, so
gradients reach every input that requires them (targets too)."""
from __future__ import annotations

import math

from ...factories import ones_like
from ...ops.comparison import where
from ...ops.composite import recorded_as
from ...ops.loss_ops import MseLoss as _MseLoss
from .loss_reduction import _check_reduction, _legacy, _reduce, _reduction, _warn_size


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error: mean((input - target)^2), recorded as `MseLossBackward0`."""
    reduction = _reduction(size_average, reduce, reduction)
    if (weight is None and input.shape == target.shape and input.dtype is target.dtype
            and input.dtype.is_floating_point and reduction in ("mean", "sum", "none")):
        return _MseLoss.apply(input, target, reduction)
    return _mse_composite(input, target, reduction=reduction, weight=weight)


@recorded_as("MseLossBackward0")
def _mse_composite(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
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


@recorded_as("SmoothL1LossBackward0")
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (d = input - target), like `F.smooth_l1_loss`."""
    _warn_size(input, target)
    reduction = _legacy(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = input - target
    z = d.abs()
    loss = z if beta == 0 else where(z < beta, d * d * (0.5 / beta), z - 0.5 * beta)
    return _reduce(loss, reduction)


@recorded_as("HuberLossBackward0")
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 d^2 where |d| < delta, delta (|d| - 0.5 delta) elsewhere (d = input - target), like `F.huber_loss`."""
    _warn_size(input, target)
    if weight is None:
        _check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    d = input - target
    z = d.abs()
    loss = where(z < delta, d * d * 0.5, (z - 0.5 * delta) * delta)
    if weight is not None:
        if tuple(weight.shape) != tuple(input.shape):
            raise ValueError("Weights and input must have the same size.")
        if reduction not in ("none", "mean", "sum"):
            raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")
        loss = loss * weight
    return _reduce(loss, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """Negative log-likelihood of a Poisson target with rate exp(input) (or input, log_input=False),
    like `F.poisson_nll_loss`; full=True adds Stirling's term for targets > 1."""
    reduction = _legacy(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        big = target > 1
        t = where(big, target, 2.0)  # Stirling's term is only used (and finite) where target > 1
        stirling = t * t.log() - t + (t * (2 * math.pi)).log() * 0.5
        loss = loss + stirling.masked_fill(big.logical_not(), 0.0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Negative log-likelihood of `target` under N(input, var): 0.5 (log var + (input - target)^2 / var),
    var clamped at eps (without changing its gradient), like `F.gaussian_nll_loss`."""
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = ones_like(input) * var
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):  # homoscedastic: one variance per sample
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim
                  and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    clamped = var.detach().clamp(min=eps)
    var = clamped + (var - var.detach()) if var.requires_grad else clamped
    loss = (var.log() + (input - target) ** 2 / var) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)
