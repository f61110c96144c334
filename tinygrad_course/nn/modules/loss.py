"""Loss modules: `CrossEntropyLoss`, `NLLLoss`, `MSELoss`, `L1Loss`, `BCELoss`, `BCEWithLogitsLoss`, and the
regression, divergence, margin and embedding losses (`SmoothL1Loss`, `HuberLoss`, `KLDivLoss`, ...)."""
from __future__ import annotations

from ..._unsupported import getattr_for
from .. import functional as F
from .distance import PairwiseDistance
from .module import Module

__all__ = ["CrossEntropyLoss", "NLLLoss", "NLLLoss2d", "MSELoss", "L1Loss", "BCELoss", "BCEWithLogitsLoss", "SmoothL1Loss",
           "HuberLoss", "KLDivLoss", "PoissonNLLLoss", "GaussianNLLLoss", "MarginRankingLoss", "HingeEmbeddingLoss",
           "SoftMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss", "MultiLabelMarginLoss",
           "CosineEmbeddingLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss"]
__getattr__ = getattr_for("tc.nn", __name__)  # CTCLoss, LinearCrossEntropyLoss: PyTorch names not implemented


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__()
        self.reduction = F._reduction(size_average, reduce, reduction)


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class CrossEntropyLoss(_WeightedLoss):
    """Cross-entropy between logits and class indices or class probabilities (see F.cross_entropy)."""

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean", label_smoothing: float = 0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        """`F.cross_entropy` with this layer's settings."""
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of class indices given log-probabilities (see F.nll_loss)."""

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        """`F.nll_loss` with this layer's settings."""
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)



class NLLLoss2d(NLLLoss):
    """PyTorch's old name of `NLLLoss` for (N, C, H, W) log-probabilities; `NLLLoss` handles those itself."""


class MSELoss(_Loss):
    """Mean squared error."""

    def forward(self, input, target):
        """`F.mse_loss` with this layer's settings."""
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error."""

    def forward(self, input, target):
        """`F.l1_loss` with this layer's settings."""
        return F.l1_loss(input, target, reduction=self.reduction)


class BCELoss(_WeightedLoss):
    """Binary cross-entropy on probabilities."""

    def forward(self, input, target):
        """`F.binary_cross_entropy` with this layer's settings."""
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross-entropy on logits (sigmoid built in, numerically stable), with optional pos_weight."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean", pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        """`F.binary_cross_entropy_with_logits` with this layer's settings."""
        return F.binary_cross_entropy_with_logits(input, target, self.weight, pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Squared error below `beta`, absolute error above it (see F.smooth_l1_loss)."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        """`F.smooth_l1_loss` with this layer's settings."""
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Squared error below `delta`, delta-scaled absolute error above it (see F.huber_loss)."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        """`F.huber_loss` with this layer's settings."""
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class KLDivLoss(_Loss):
    """KL divergence of `target` from log-probabilities `input` (see F.kl_div; use reduction='batchmean')."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        """`F.kl_div` with this layer's settings."""
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class PoissonNLLLoss(_Loss):
    """Negative log-likelihood of a Poisson-distributed target (see F.poisson_nll_loss)."""

    def __init__(self, log_input: bool = True, full: bool = False, size_average=None, eps: float = 1e-8,
                 reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input, target):
        """`F.poisson_nll_loss` with this layer's settings."""
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                  reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Negative log-likelihood of the target under N(input, var) (see F.gaussian_nll_loss)."""

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean"):
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input, target, var):
        """`F.gaussian_nll_loss` with this layer's settings."""
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class _MarginLoss(_Loss):
    def __init__(self, margin: float, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin


class MarginRankingLoss(_MarginLoss):
    """max(0, -target * (input1 - input2) + margin) (see F.margin_ranking_loss)."""

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input1, input2, target):
        """`F.margin_ranking_loss` with this layer's settings."""
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_MarginLoss):
    """x for target 1, max(0, margin - x) for target -1 (see F.hinge_embedding_loss)."""

    def __init__(self, margin: float = 1.0, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input, target):
        """`F.hinge_embedding_loss` with this layer's settings."""
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class CosineEmbeddingLoss(_MarginLoss):
    """1 - cos(x1, x2) for target 1, max(0, cos(x1, x2) - margin) for target -1 (see F.cosine_embedding_loss)."""

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input1, input2, target):
        """`F.cosine_embedding_loss` with this layer's settings."""
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """log(1 + exp(-target * input)) (see F.soft_margin_loss)."""

    def forward(self, input, target):
        """`F.soft_margin_loss` with this layer's settings."""
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Per-sample mean binary cross-entropy over classes, on logits (see F.multilabel_soft_margin_loss)."""

    def forward(self, input, target):
        """`F.multilabel_soft_margin_loss` with this layer's settings."""
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss over class scores (see F.multi_margin_loss)."""

    def __init__(self, p: int = 1, margin: float = 1.0, weight=None, size_average=None, reduce=None,
                 reduction: str = "mean"):
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.ndim != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.ndim}D instead")
        self.p = p
        self.margin = margin

    def forward(self, input, target):
        """`F.multi_margin_loss` with this layer's settings."""
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Multi-label hinge loss with -1-terminated target index lists (see F.multilabel_margin_loss)."""

    def forward(self, input, target):
        """`F.multilabel_margin_loss` with this layer's settings."""
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) with the p-norm distance
    (see F.triplet_margin_loss)."""

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                 size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead")
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor, positive, negative):
        """`F.triplet_margin_loss` with this layer's settings."""
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
                                     swap=self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """Triplet margin loss with any distance function, PairwiseDistance by default
    (see F.triplet_margin_with_distance_loss)."""

    def __init__(self, *, distance_function=None, margin: float = 1.0, swap: bool = False,
                 reduction: str = "mean"):
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} "
                             "instead")
        self.distance_function = distance_function if distance_function is not None else PairwiseDistance()
        self.margin = margin
        self.swap = swap

    def forward(self, anchor, positive, negative):
        """`F.triplet_margin_with_distance_loss` with this layer's settings."""
        return F.triplet_margin_with_distance_loss(anchor, positive, negative,
                                                   distance_function=self.distance_function,
                                                   margin=self.margin, swap=self.swap, reduction=self.reduction)
