"""Classification losses in `tc.nn.functional`: cross_entropy, nll_loss, binary_cross_entropy (on
probabilities and on logits) and kl_div."""
from __future__ import annotations

import warnings

from ...ops import fused as _fused
from ...ops._util import first_out_of_range
from ...ops.comparison import where
from ...ops.composite import recorded_as
from ...ops.cross_entropy_targets import CrossEntropyTargets
from ...ops.loss_ops import BinaryCrossEntropyWithLogits as _BCEWithLogits
from ...seams import ACTIVE, component, learner, offer, set_aside
from .loss_reduction import _check_reduction, _reduce, _reduction
from .softmax import log_softmax


_INDEX_DTYPES = ("int64", "uint8")  # the class indices PyTorch's losses take


def _target_dtype_error(target) -> RuntimeError:
    """PyTorch's error for class indices of another dtype (a float target that is not class probabilities)."""
    name = target.type().split(".")[-1].removesuffix("Tensor")
    return RuntimeError(f"expected target dtype to be Long or Byte, but got {name}")


def _class_scores_2d(input, target, name):
    """Input as (M, C) rows of class scores and target flattened to match; plus the 'none' output shape."""
    if input.ndim == 1:
        if target.ndim == 0:
            return input.unsqueeze(0), target.reshape(1), ()
        if target.shape == input.shape and target.dtype.is_floating_point:
            return input.unsqueeze(0), target.unsqueeze(0), ()
    if input.ndim == 0:
        raise RuntimeError(f"{name}: input tensor should be 1D or 2D or more, got 0D")
    shape, given = input._data.shape, target._data.shape  # the arrays' shapes: no property call on the hot path
    n = shape[0]
    if target.dtype.is_floating_point:  # class probabilities (or a float target, an error raised by the caller)
        if given and given[0] != n and given != shape:
            raise ValueError(f"Expected input batch_size ({n}) to match target batch_size ({given[0]}).")
    elif given[:1] != (n,):
        raise ValueError(f"Expected input batch_size ({n}) to match target batch_size ({given[0] if given else 0}).")
    elif len(shape) == 2 and len(given) != 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif len(shape) > 2 and given != (n, *shape[2:]):
        raise RuntimeError(f"Expected target size {[n, *shape[2:]]}, got {list(given)}")
    c = shape[1]
    if len(shape) > 2:
        perm = (0,) + tuple(range(2, len(shape))) + (1,)
        rows = input.permute(*perm).reshape(-1, c)
        out_shape = (n,) + tuple(input.shape[2:])
        if target.dtype.is_floating_point and target.shape == input.shape:
            target = target.permute(*perm).reshape(-1, c)
        else:
            target = target.reshape(-1)
        return rows, target, out_shape
    return input, target, (n,)


def _coefficients(xp, target, num_classes, weight, ignore_index, label_smoothing, dtype):
    """The constant (M, C) loss coefficients for class-index targets, and the 'mean' denominator."""
    t = target._data
    valid = t != ignore_index
    safe = xp.where(valid, t, 0)
    bad = first_out_of_range(safe, num_classes)  # ignored targets were replaced by 0 in `safe`
    if bad is not None:
        raise IndexError(f"Target {bad} is out of bounds.")
    w = weight._data.astype(dtype) if weight is not None else xp.ones(num_classes, dtype=dtype)
    wt = w[safe] * valid
    coeff = xp.zeros((t.shape[0], num_classes), dtype=dtype)
    coeff[xp.arange(t.shape[0]), safe] = wt * (1.0 - label_smoothing)
    if label_smoothing > 0:
        coeff += (label_smoothing / num_classes) * w[None, :] * valid[:, None]
    return coeff, wt.sum()


def _plain(t, num_classes, ignore_index):
    """True when every class index is in [0, num_classes) and none is `ignore_index`: the fast path's case
    (anything else takes the general path, which also raises the out-of-range error)."""
    if not t.size or t.min() < 0 or t.max() >= num_classes:
        return False
    return not 0 <= ignore_index < num_classes or not (t == ignore_index).any()


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Cross-entropy between logits `input` (N, C, ...) and class indices or class probabilities.

    Fused log-softmax + NLL: stable for huge logits, backward = softmax - target distribution. In build mode
    the learner's cross_entropy (chapter 05) takes the call (an inline seam: no extra call without one).
    """
    if ACTIVE:
        mine = learner("cross_entropy")
        if mine is not None:
            return mine(input, target, weight, size_average, ignore_index, reduce, reduction, label_smoothing)
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    label_smoothing = max(label_smoothing, 0.0)  # PyTorch smooths only above 0
    rows, tgt, out_shape = _class_scores_2d(input, target, "cross_entropy")
    xp, dtype = rows._xp, rows._data.dtype
    c = rows.shape[1]
    if tgt.dtype.is_floating_point:
        if tuple(tgt.shape) != tuple(rows.shape):
            raise _target_dtype_error(tgt)
        if tgt.requires_grad:  # soft labels that are trained: use the composite (differentiable in target)
            probs = tgt * (1 - label_smoothing) + label_smoothing / c if label_smoothing else tgt
            if weight is not None:
                probs = probs * weight
            loss = -(probs * log_softmax(rows, 1)).sum(1)
            loss = loss.reshape(out_shape) if reduction == "none" else loss
            return _reduce(loss, reduction)
        probs = tgt._data.astype(dtype, copy=False)
        if label_smoothing:
            probs = probs * (1 - label_smoothing) + label_smoothing / c
        coeff = probs * weight._data.astype(dtype)[None, :] if weight is not None else probs
        denom = rows.shape[0]
    elif tgt.dtype.name not in _INDEX_DTYPES:
        raise _target_dtype_error(tgt)
    elif "log_softmax" in ACTIVE and weight is None and not label_smoothing:
        # build mode: PyTorch's composite, nll_loss(log_softmax(input, 1), target), so the loss runs on the
        # learner's log_softmax (chapter 05) and pick (chapter 01)
        out = nll_loss(log_softmax(rows, 1), tgt, ignore_index=ignore_index, reduction=reduction)
        return out.reshape(out_shape) if reduction == "none" and tuple(out.shape) != out_shape else out
    elif weight is None and not label_smoothing and rows._device.type == "cpu" and _plain(tgt._data, c, ignore_index):
        out = CrossEntropyTargets.apply(rows, tgt._data, reduction, float(tgt._data.shape[0]))
        return out.reshape(out_shape) if reduction == "none" and tuple(out.shape) != out_shape else out
    else:
        coeff, denom = _coefficients(xp, tgt, c, weight, ignore_index, label_smoothing, dtype)
    out = _fused.CrossEntropy.apply(rows, coeff, reduction, denom, not tgt.dtype.is_floating_point)
    return out.reshape(out_shape) if reduction == "none" and tuple(out.shape) != out_shape else out


@component("pick")
def pick(scores, labels):
    """scores[i, labels[i]] for every row i, shape (N,): the score of each row's target class. `nll_loss`
    computes the same with its fused op; a learner's pick installed under this name (build mode) computes
    the loss of rows without weights or ignored targets."""
    return scores.gather(1, labels.unsqueeze(1)).squeeze(1)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log-likelihood of class indices under log-probabilities `input` (N, C, ...). In build mode the
    learner's nll_loss (chapter 05) takes the call (an inline seam: no extra call without one)."""
    if ACTIVE:
        mine = learner("nll_loss")
        if mine is not None:
            return mine(input, target, weight, size_average, ignore_index, reduce, reduction)
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    rows, tgt, out_shape = _class_scores_2d(input, target, "nll_loss")
    if tgt.dtype.name not in _INDEX_DTYPES:
        raise _target_dtype_error(tgt)
    if "pick" in ACTIVE and weight is None and input.ndim == 2 and not (tgt._data == ignore_index).any():
        return _reduce(-pick(rows, tgt), reduction)  # build mode: the learner's pick (chapter 01) in the loss
    coeff, denom = _coefficients(rows._xp, tgt, rows.shape[1], weight, ignore_index, 0.0, rows._data.dtype)
    out = _fused.NllLoss.apply(rows, coeff, reduction, denom)
    return out.reshape(out_shape) if reduction == "none" and tuple(out.shape) != out_shape else out


# the references a learner's loss hands the options it does not cover (the learner's own set aside meanwhile)
offer("cross_entropy", set_aside("cross_entropy", cross_entropy))
offer("nll_loss", set_aside("nll_loss", nll_loss))


@recorded_as("BinaryCrossEntropyBackward0")
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(y log p + (1 - y) log(1 - p)) for probabilities p (logs clamped at -100, as in PyTorch)."""
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) is deprecated. "
            "Please ensure they have the same size."
        )
    d = input._data
    if d.size and (d.min() < 0 or d.max() > 1):
        raise RuntimeError("all elements of input should be between 0 and 1")
    log_p = input.log().clamp(min=-100)
    log_q = (1 - input).log().clamp(min=-100)
    loss = -(target * log_p + (1 - target) * log_q)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, _reduction(size_average, reduce, reduction))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """Binary cross-entropy on logits, computed stably as (1 - y) x + (1 + (pw - 1) y) softplus(-x)."""
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    reduction = _reduction(size_average, reduce, reduction)
    if (weight is None and pos_weight is None and not target.requires_grad and input.dtype is target.dtype
            and input.dtype.is_floating_point and reduction in ("mean", "sum", "none")):
        return _BCEWithLogits.apply(input, target, reduction)
    return _bce_logits_composite(input, target, weight, reduction=reduction, pos_weight=pos_weight)


@recorded_as("BinaryCrossEntropyWithLogitsBackward0")
def _bce_logits_composite(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                          pos_weight=None):
    softplus_neg = (-input.abs()).exp().log1p() + (-input).relu()  # log(1 + exp(-x)) without overflow
    if pos_weight is not None:
        loss = (1 - target) * input + (1 + (pos_weight - 1) * target) * softplus_neg
    else:
        loss = (1 - target) * input + softplus_neg
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, _reduction(size_average, reduce, reduction))


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Kullback-Leibler divergence target * (log target - input) for log-probabilities `input`
    (`target` as log-probabilities too with log_target=True), like `F.kl_div`.

    reduction='batchmean' divides the sum by the batch size (the mathematical KL divergence); 'mean'
    divides by the number of elements and warns, as PyTorch does."""
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    elif reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support size."
            "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
            "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
            stacklevel=2,
        )
    if reduction != "batchmean":
        _check_reduction(reduction)
    if log_target:
        loss = target.exp() * (target - input)
    else:  # xlogy(target, target): 0 where target == 0
        loss = target * where(target == 0, 1.0, target).log() - target * input
    if reduction != "batchmean":
        return _reduce(loss, reduction)
    total = loss.sum()
    return total / input.shape[0] if input.ndim != 0 else total
