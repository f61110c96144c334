"""Tensor method families that extend `TensorMethods`, one family per module.

Each module defines a mixin class,
`METHOD_FUNCTIONS` (names `n` for which `tc.n(input, ...)` is `input.n(...)`) and `__all__` (its standalone
functions, such as `tc.meshgrid`, exported by `tinygrad_course`).
"""
from .sorting import SortingMethods
from .pointwise import PointwiseMethods
from .linalg import LinalgMethods
from .shaping import ShapingMethods
from .statistics import StatisticsMethods
from .aliases import AliasMethods
from . import aliases, sorting, pointwise, linalg, shaping, statistics

MIXINS = (SortingMethods, PointwiseMethods, LinalgMethods, ShapingMethods, StatisticsMethods, AliasMethods)
FAMILIES = (sorting, pointwise, linalg, shaping, statistics, aliases)
