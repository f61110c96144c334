"""Fused kernels for the two losses training loops use most, `mse_loss` and
`binary_cross_entropy_with_logits` (the plain case: same shapes, no weights, a target that needs no
gradient), recorded as PyTorch's `MseLossBackward0` / `BinaryCrossEntropyWithLogitsBackward0`. Other cases
go through the composite in `nn.functional` (see `ops/composite.py`). Backwards are framework ops, so
`create_graph=True` works."""
from __future__ import annotations

from ..autograd.engine import Op


def _reduced(xp, loss, reduction):
    if reduction == "mean":
        return xp.asarray(loss.mean(dtype=loss.dtype))
    if reduction == "sum":
        return xp.asarray(loss.sum(dtype=loss.dtype))
    return loss


def _scaled(ctx, g, n):
    return g / n if ctx.reduction == "mean" else g


class MseLoss(Op):
    """mean/sum/none of (input - target)^2."""

    node_name = "MseLossBackward0"

    @staticmethod
    def forward(ctx, input, target, reduction):
        d = input._data - target._data
        ctx.reduction = reduction
        ctx.save_for_backward(input, target)
        return _reduced(input._xp, d * d, reduction)

    @staticmethod
    def backward(ctx, g):
        input, target = ctx.saved_tensors
        grad = (input - target) * (_scaled(ctx, g, input.numel()) * 2)
        return (grad if ctx.needs_input_grad[0] else None,
                -grad if ctx.needs_input_grad[1] else None, None)


class BinaryCrossEntropyWithLogits(Op):
    """mean/sum/none of (1 - y) x + log(1 + exp(-x)), computed without overflow."""

    node_name = "BinaryCrossEntropyWithLogitsBackward0"

    @staticmethod
    def forward(ctx, input, target, reduction):
        xp, x, y = input._xp, input._data, target._data
        loss = (1 - y) * x + xp.log1p(xp.exp(-xp.abs(x))) + xp.maximum(-x, 0)
        ctx.reduction = reduction
        ctx.save_for_backward(input, target)
        return _reduced(xp, loss.astype(x.dtype, copy=False), reduction)

    @staticmethod
    def backward(ctx, g):
        input, target = ctx.saved_tensors
        grad = (input.sigmoid() - target) * _scaled(ctx, g, input.numel())
        return grad, None, None
