"""Tensor method families, one concept per module; `Tensor` (tensor.py) lists their classes as its bases.

Each family module defines a class of methods and may define `METHOD_FUNCTIONS` (names `n` for which
`tc.n(input, ...)` is `input.n(...)`) and `__all__` (its standalone functions, such as `tc.meshgrid`).
"""
from . import (
               aliases,
               conversion,
               index_updates,
               indexing,
               inplace,
               inplace_ops,
               legacy_types,
               linalg,
               pointwise,
               predicates,
               products,
               shaping,
               sorting,
               stacking,
               statistics,
               storage,
               unsupported,
)

# modules whose METHOD_FUNCTIONS / __all__ become `tc.<name>` functions
FAMILIES = (sorting, pointwise, linalg, shaping, index_updates, storage, stacking, statistics, aliases)
