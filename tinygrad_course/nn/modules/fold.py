"""`Unfold` (im2col) and `Fold` (col2im)."""
from __future__ import annotations

__all__: list[str] = []
