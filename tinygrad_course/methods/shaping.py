"""More shape and indexing functions: tile, repeat_interleave, roll, rot90, meshgrid, hstack/vstack,
movedim, tensor_split, new_* factories, index_add/index_copy/index_fill, in-place shape ops, ... (like torch)."""
from __future__ import annotations

METHOD_FUNCTIONS: tuple[str, ...] = ()
__all__: list[str] = []


class ShapingMethods:
    """Mixin with shaping methods of `Tensor`."""

    __slots__ = ()
