"""Sorting, searching and selection: sort, argsort, topk, kthvalue, median, mode, cummax/cummin,
cumprod, unique, nonzero, masked_select, searchsorted, bucketize, bincount, take, ... (like torch)."""
from __future__ import annotations

METHOD_FUNCTIONS: tuple[str, ...] = ()
__all__: list[str] = []


class SortingMethods:
    """Mixin with sorting methods of `Tensor`."""

    __slots__ = ()
