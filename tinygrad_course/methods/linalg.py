"""Products and matrix functions: einsum, outer, inner, tensordot, kron, trace, diag, diagonal, cross,
cdist, addmm, baddbmm, ... (like torch)."""
from __future__ import annotations

METHOD_FUNCTIONS: tuple[str, ...] = ()
__all__: list[str] = []


class LinalgMethods:
    """Mixin with linalg methods of `Tensor`."""

    __slots__ = ()
