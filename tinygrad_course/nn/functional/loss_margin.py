"""Margin and embedding losses in `tc.nn.functional`: margin_ranking, hinge_embedding, soft_margin,
multilabel_soft_margin, multi_margin, multilabel_margin, cosine_embedding and the triplet margin losses.
Compositions of framework ops (as most are in PyTorch), so gradients reach every input that requires them."""
from __future__ import annotations

from ...ops.comparison import where
from ...tensor_base import _wrap
from ...ops.activation import _Softplus
from ...ops.composite import recorded_as
from ._utils import _shape_str
from .activation import logsigmoid
from .distance import pairwise_distance
from .loss_reduction import _legacy, _reduce, _reduction


def _check_long(target):
    if target.dtype.is_floating_point:
        kind = target.type().split(".")[-1].replace("Tensor", "")
        raise RuntimeError(f"expected scalar type Long but found {kind}")


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -target * (input1 - input2) + margin) for targets of +1/-1, like `F.margin_ranking_loss`."""
    reduction = _legacy(size_average, reduce, reduction)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} "
        )
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """x where target is 1, max(0, margin - x) where target is -1, like `F.hinge_embedding_loss`."""
    reduction = _legacy(size_average, reduce, reduction)
    margin_part = where(target != 1, (margin - input).clamp_min(0), 0.0)
    self_part = where(target != -1, input, 0.0)
    return _reduce(margin_part + self_part, reduction)


@recorded_as("SoftMarginLossBackward0")
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * input)) (computed without overflow), like `F.soft_margin_loss`."""
    reduction = _legacy(size_average, reduce, reduction)
    return _reduce(_Softplus.apply(-target * input, 1.0, 20.0), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Per-sample mean over classes of the binary cross-entropy of sigmoid(input) with 0/1 `target`,
    like `F.multilabel_soft_margin_loss`."""
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)


def _class_rows(input):
    """Input as (N, C) rows (a vector or 0-d input is one row); PyTorch's error for other shapes."""
    if input.ndim > 2 or (input.ndim == 2 and input.shape[1] == 0) or (input.ndim == 1 and input.shape[0] == 0):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           + _shape_str(input.shape))
    return input.reshape(1, -1) if input.ndim < 2 else input


@recorded_as("MultiMarginLossBackward0")
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """Multi-class hinge loss: sum over classes j != y of max(0, margin - x[y] + x[j])^p / C (weighted by
    weight[y]), like `F.multi_margin_loss`."""
    reduction = _legacy(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    rows = _class_rows(input)
    _check_long(target)
    n, c = rows.shape
    if target.ndim > 1 or target.numel() != n:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of input samples "
            f"(batch size). Expected target size [{n}], but got {_shape_str(target.shape)}. "
            f"Input has shape {_shape_str(input.shape)}."
        )
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {_shape_str(weight.shape)}")
    xp, t = rows._xp, target._data.reshape(-1)
    if t.size and bool(((t < 0) | (t >= c)).any()):
        raise RuntimeError("target out of range")
    dtype = rows._data.dtype
    others = _wrap((t[:, None] != xp.arange(c)[None, :]).astype(dtype))  # every class but the target
    picked = rows.gather(1, _wrap(t[:, None]))
    z = (margin - picked + rows).relu()  # relu: no gradient where the margin is met exactly, as in PyTorch
    if p == 2:
        z = z * z
    loss = (z * others).sum(1) / c
    if weight is not None:
        loss = loss * _wrap(weight._data.astype(dtype, copy=False)[t])
    if reduction == "none":
        return loss.reshape(target.shape) if input.ndim < 2 else loss
    return _reduce(loss, reduction)


@recorded_as("MultilabelMarginLossBackward0")
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-label hinge loss: for each target class y (target rows end at the first -1) and each
    non-target class j, max(0, 1 - (x[y] - x[j])), summed and divided by C, like `F.multilabel_margin_loss`."""
    reduction = _legacy(size_average, reduce, reduction)
    rows = _class_rows(input)
    _check_long(target)
    if tuple(target.shape) != tuple(input.shape) and not (input.ndim == 0 and target.numel() == 1):
        raise RuntimeError(f"inconsistent target size: {_shape_str(target.shape)} for input of size: "
                           f"{_shape_str(input.shape)}")
    n, c = rows.shape
    xp, t = rows._xp, target._data.reshape(n, c)
    if t.size and bool(((t < -1) | (t >= c)).any()):
        raise RuntimeError("argument #2 'target' is out of range")
    dtype = rows._data.dtype
    valid = xp.cumprod(t >= 0, axis=1).astype(bool)  # the targets before the first -1
    safe = xp.where(valid, t, 0)
    is_target = ((safe[:, :, None] == xp.arange(c)[None, None, :]) & valid[:, :, None]).any(axis=1)
    pairs = _wrap((valid[:, :, None] & ~is_target[:, None, :]).astype(dtype))  # (N, target slot, class)
    picked = rows.gather(1, _wrap(safe))
    z = (1 - picked.unsqueeze(2) + rows.unsqueeze(1)).relu()
    loss = (z * pairs).sum((1, 2)) / c
    if reduction == "none":
        return loss.reshape(()) if input.ndim < 2 else loss
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where target is -1,
    like `F.cosine_embedding_loss`."""
    reduction = _legacy(size_average, reduce, reduction)
    dim = target.ndim
    if dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.ndim != dim + 1 or input2.ndim != dim + 1:
        raise RuntimeError(
            f"{dim}D target tensor expects {dim + 1}D input tensors, but found inputs with sizes "
            f"{_shape_str(input1.shape)} and {_shape_str(input2.shape)}."
        )
    eps = 1e-12
    prod = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + eps
    mag2 = (input2 * input2).sum(dim) + eps
    cos = prod / (mag1 * mag2).sqrt()
    loss = where(target == 1, 1 - cos, 0.0) + where(target == -1, (cos - margin).clamp_min(0), 0.0)
    return _reduce(loss, reduction)


def _check_triplet_dims(anchor, positive, negative):
    a, p, n = anchor.ndim, positive.ndim, negative.ndim
    if not (a == p and p == n):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of dimensions, "
            f"but got: anchor {a}D, positive {p}D, and negative {n}D inputs"
        )


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) with the pairwise p-norm distance d,
    like `F.triplet_margin_loss`."""
    reduction = _legacy(size_average, reduce, reduction)
    _check_triplet_dims(anchor, positive, negative)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = d_neg.minimum(pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    """Triplet margin loss with any distance function (default: pairwise_distance),
    like `F.triplet_margin_with_distance_loss`."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    distance = distance_function if distance_function is not None else pairwise_distance
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(distance(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)
