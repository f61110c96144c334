"""Adapters of chapter 05's losses: the framework's `F.nll_loss` and `F.cross_entropy` run the learner's, which
have PyTorch's signatures without the legacy `size_average`/`reduce` flags; what the exercise does not cover
goes to the reference (these adapters only route, they never change a result)."""
from __future__ import annotations

from ..seams import reference
from .adapters import _expect_shape


def _covered(input, target, size_average, reduce) -> bool:
    """Class-index targets of (N, C) or (N, C, d1, ...) CPU scores, the reduction given by `reduction`."""
    return (size_average is None and reduce is None and input.ndim >= 2 and input._device.type == "cpu"
            and not target.dtype.is_floating_point)


def _checked(out, target, reduction):
    """The learner's loss, refused (never repaired) unless it has the shape PyTorch's has: the target's for
    reduction='none', else a 0-d tensor."""
    return _expect_shape(out, tuple(target.shape) if reduction == "none" else (), "target", target.shape,
                         f" for reduction={reduction!r}")


def nll_loss(learner):
    """F.nll_loss runs the learner's nll_loss(input, target, weight, ignore_index, reduction); legacy flags,
    a 1-D input and scores on a GPU stay the reference's."""
    original = reference("nll_loss")

    def run(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
        if not _covered(input, target, size_average, reduce):
            return original(input, target, weight, size_average, ignore_index, reduce, reduction)
        return _checked(learner(input, target, weight=weight, ignore_index=ignore_index, reduction=reduction),
                        target, reduction)

    return run


def cross_entropy(learner):
    """F.cross_entropy (and so nn.CrossEntropyLoss) runs the learner's cross_entropy(input, target, weight,
    ignore_index, reduction, label_smoothing); class probabilities as targets, class weights together with
    label smoothing, legacy flags, a 1-D input and logits on a GPU stay the reference's."""
    original = reference("cross_entropy")

    def run(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
            label_smoothing=0.0):
        if not _covered(input, target, size_average, reduce) or (weight is not None and label_smoothing > 0):
            return original(input, target, weight, size_average, ignore_index, reduce, reduction, label_smoothing)
        return _checked(learner(input, target, weight=weight, ignore_index=ignore_index, reduction=reduction,
                                label_smoothing=label_smoothing), target, reduction)

    return run
