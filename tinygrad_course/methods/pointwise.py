"""More element-wise math: trigonometric/hyperbolic functions, erf, atan2, hypot, logaddexp, lerp,
addcmul/addcdiv, fmod, nan_to_num, ... (like torch)."""
from __future__ import annotations

METHOD_FUNCTIONS: tuple[str, ...] = ()
__all__: list[str] = []


class PointwiseMethods:
    """Mixin with pointwise methods of `Tensor`."""

    __slots__ = ()
