"""`PixelShuffle` and `PixelUnshuffle`."""
from __future__ import annotations

__all__: list[str] = []
