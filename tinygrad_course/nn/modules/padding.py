"""Padding layers: `ZeroPad1d/2d/3d`, `ConstantPad1d/2d/3d`, `ReflectionPad1d/2d`, `ReplicationPad1d/2d`, ..."""
from __future__ import annotations

__all__: list[str] = []
