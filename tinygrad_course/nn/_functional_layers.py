"""More layer functions for `tc.nn.functional`: 1-d convolutions and pools, transposed convolutions,
adaptive max pooling, interpolate, pixel_shuffle, group/instance/RMS norm, fold, ..."""
from __future__ import annotations

__all__: list[str] = []
