"""Cross-entropy for the common case: class-index targets, no class weights, no label smoothing, no ignored
entries, on the CPU. It picks each row's log-probability instead of weighting all of them with a one-hot
matrix (`fused.CrossEntropy`), with the same values, gradients and node name."""
from __future__ import annotations

import numpy as np

from .fused import CrossEntropy, _log_softmax_array, _reduce_rows


class CrossEntropyTargets(CrossEntropy):
    """CrossEntropy with (M,) class indices `targets` in place of the (M, C) coefficients."""

    node_name = "NllLossBackward0"

    @staticmethod
    def forward(ctx, x, targets, reduction, denom):
        logp, p = _log_softmax_array(np, x._data, 1)
        rows = np.arange(targets.shape[0])
        per_row = -logp[rows, targets]
        ctx.p, ctx.targets, ctx.reduction, ctx.denom = p, targets, reduction, denom
        ctx.save_for_backward(x)
        return _reduce_rows(np, per_row, reduction, denom, x._data.dtype)

    @staticmethod
    def backward(ctx, g):  # the general op's math, with the one-hot coefficients
        ctx.coeff = np.zeros(ctx.p.shape, dtype=ctx.p.dtype)
        ctx.coeff[np.arange(ctx.targets.shape[0]), ctx.targets] = 1
        return CrossEntropy.backward(ctx, g)

    @staticmethod
    def fused_backward(ctx, g):
        targets = ctx.targets
        scale = 1.0 / ctx.denom if ctx.reduction == "mean" else 1.0
        gd = g._data[:, None] if ctx.reduction == "none" else g._data
        grad = ctx.p.copy()  # softmax - one_hot, then times the incoming gradient
        grad[np.arange(targets.shape[0]), targets] -= 1
        grad *= gd * scale
        return grad.astype(ctx.saved_tensors[0]._data.dtype, copy=False)
