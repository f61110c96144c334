"""Whether a gradient reaching a leaf owns its storage (chapter 02): the engine's `accumulate` keeps such a
gradient as `.grad` without a copy, as PyTorch's AccumulateGrad steals a gradient no one else holds.
"""
from __future__ import annotations

import sys

import numpy as np


def owns_storage(grad) -> bool:
    """True when `grad`'s array is a reshaped or transposed view of a whole NumPy array that nothing else
    references but `grad` -- itself, or through the tensor it is a view of (`grad._base`, alive only through
    `grad`): a backward's fresh result, such as a Linear weight's gradient transposed back. Kept as `.grad` it
    aliases nothing, so it needs no copy -- as PyTorch's AccumulateGrad keeps a gradient no one else holds."""
    data = grad._data
    base = data.base
    if type(base) is not np.ndarray or base.nbytes != data.nbytes:
        return False
    holders = 3  # `data`'s link to its base, the local name `base` and getrefcount's argument
    owner = grad._base
    if owner is not None:
        if sys.getrefcount(owner) != 3:  # `grad._base`, the local name and the argument: nothing else
            return False
        if owner._data is base or owner._data.base is base:
            holders += 1
    return sys.getrefcount(base) == holders
