"""How every loss of `tc.nn.functional` reduces: reduction='none' | 'mean' | 'sum', the legacy
size_average/reduce flags that name one, and PyTorch's warning for targets that broadcast."""
from __future__ import annotations

import warnings


def _reduction(size_average, reduce, reduction):
    """The reduction the legacy size_average/reduce flags name, or `reduction` when neither is given."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def _check_reduction(reduction):
    """PyTorch's ValueError for a reduction other than 'none', 'mean' or 'sum'."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _reduce(loss, reduction):
    """The element-wise `loss` reduced: its mean, its sum, or itself ('none')."""
    _check_reduction(reduction)
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _legacy(size_average, reduce, reduction):
    """The reduction named by the legacy flags (if given) or `reduction`, checked."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    return reduction


def _warn_size(input, target):
    """PyTorch's warning for a target whose shape differs from the input's (it would broadcast)."""
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size.",
            stacklevel=3,
        )
