"""Softmax and its relatives in `tc.nn.functional`: softmax, log_softmax, softmin and gumbel_softmax."""
from __future__ import annotations

import warnings

from ...factories import empty_like, zeros_like
from ...ops import fused as _fused
from ...seams import component


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


@component("log_softmax")
def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log(softmax(x)) along `dim`, computed as x - logsumexp(x) (no overflow for large logits)."""
    return _softmax_family(_fused.LogSoftmax, "log_softmax", input, dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x) along `dim`, like `F.softmin`."""
    return _softmax_family(_fused.Softmax, "softmin", -input, dim, dtype)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """Sample from the Gumbel-softmax distribution (one-hot in the forward pass with `hard=True`, gradients
    of the soft sample either way), like `F.gumbel_softmax`."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -empty_like(logits).exponential_().log()  # ~Gumbel(0, 1)
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft  # straight-through: forward one-hot, backward soft
