"""Distance layers: `CosineSimilarity`, `PairwiseDistance`."""
from __future__ import annotations

__all__: list[str] = []
