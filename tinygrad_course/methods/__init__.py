"""Tensor method families, one concept per module; `binding.py` attaches them to `Tensor`.

Each family module defines a class of methods and may define `METHOD_FUNCTIONS` (names `n` for which
`tc.n(input, ...)` is `input.n(...)`) and `__all__` (its standalone functions, such as `tc.meshgrid`).
`METHOD_FAMILIES` lists the classes in binding order: when two define the same name, the earlier wins.
"""
from . import (
               aliases,
               arithmetic,
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
               reductions,
               shaping,
               sorting,
               stacking,
               statistics,
               storage,
               unsupported,
               views,
)

METHOD_FAMILIES = (
    inplace.InplaceMachinery, conversion.ConversionMethods,
    arithmetic.ArithmeticMethods, reductions.ReductionMethods, products.ProductMethods, views.ViewMethods,
    indexing.IndexingMethods, inplace_ops.InplaceMethods,
    sorting.SortingMethods, pointwise.PointwiseMethods, linalg.LinalgMethods, shaping.ShapingMethods,
    index_updates.IndexUpdateMethods, storage.StorageMethods, statistics.StatisticsMethods, aliases.AliasMethods,
    inplace_ops.InplaceTwins, predicates.PredicateMethods, legacy_types.LegacyMethods,
    unsupported.UnsupportedMethods,
)
# modules whose METHOD_FUNCTIONS / __all__ become `tc.<name>` functions
FAMILIES = (sorting, pointwise, linalg, shaping, index_updates, storage, stacking, statistics, aliases)
