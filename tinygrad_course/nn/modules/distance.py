"""Distance layers: `CosineSimilarity`, `PairwiseDistance`."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class CosineSimilarity(Module):
    """Cosine similarity of x1 and x2 along `dim` (see F.cosine_similarity)."""

    def __init__(self, dim: int = 1, eps: float = 1e-8):
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        """`F.cosine_similarity` with this layer's settings."""
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """p-norm of x1 - x2 + eps over the last dim (see F.pairwise_distance)."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        """`F.pairwise_distance` with this layer's settings."""
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
