"""Views made from their geometry (build mode): while a learner's stride arithmetic (`strides.py`) is
installed, `view`, `permute`/`transpose`, `expand` and basic indexing compute their output's (shape,
strides, storage offset) with it and read the input's storage with those numbers, as PyTorch makes every
view; `contiguous()` copies a view's elements from the storage positions it computes. Each function returns
None for what the learner's function does not cover (an empty tensor, a storage that is not one row-major
block, an index with None or ...): the op's own code runs then.
"""
from __future__ import annotations

import numpy as np

from ..strides import expand_strides, index_view, permute_strides, storage_positions, view_strides


def _storage(x):
    """x's storage as one flat array (its base's data) when it is one row-major block, else None."""
    root = (x if x._base is None else x._base)._data
    if not root.flags.c_contiguous or x._data.size == 0:
        return None
    return root.reshape(-1)


def storage_view(x, shape, strides, offset, rule, writeable=True):
    """The backend array that shows x's storage with `shape`, `strides` and storage `offset` (in elements);
    RuntimeError naming `rule` (the component that computed them) when that reaches outside the storage."""
    flat = _storage(x)
    shape, strides = tuple(int(n) for n in shape), tuple(int(s) for s in strides)
    if len(shape) != len(strides):
        raise RuntimeError(f"{rule} gave a view with shape {shape} and strides {strides} of different lengths")
    if 0 not in shape:
        moving = [s for n, s in zip(shape, strides) if n > 1]
        last = offset + sum((n - 1) * s for n, s in zip(shape, strides) if n > 1)
        if offset < 0 or min(moving, default=0) < 0 or last >= flat.size:
            raise RuntimeError(f"{rule} gave a view with shape {shape}, strides {strides} and storage offset {offset}, "
                               f"which reaches outside its storage of {flat.size} elements (no element was read)")
    item = flat.itemsize
    start = flat[offset:] if flat.size else flat
    options = {} if writeable or x._xp is not np else {"writeable": False}  # CuPy's views are always writeable
    return x._xp.lib.stride_tricks.as_strided(start, shape=shape, strides=tuple(s * item for s in strides), **options)


def viewed(x, shape):
    """`x.view(shape)` (shape resolved) through `view_strides`; RuntimeError with PyTorch's message when the
    strides allow no view (a 0-d input is the reference's: any strides show its one element)."""
    if x._data.ndim == 0 or _storage(x) is None:
        return None
    strides = view_strides(x._data.shape, x.stride(), tuple(shape))
    if strides is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one dimension "
                           "spans across two contiguous subspaces). Use .reshape(...) instead.")
    return storage_view(x, shape, strides, x.storage_offset(), "view_strides")


def permuted(x, dims):
    """`x.permute(dims)` (dims checked) through `permute_strides`."""
    if _storage(x) is None:
        return None
    shape, strides = permute_strides(x._data.shape, x.stride(), tuple(dims))
    return storage_view(x, shape, strides, x.storage_offset(), "permute_strides")


def expanded(x, shape):
    """`x.expand(shape)` (sizes resolved and checked) through `expand_strides`; read-only, as NumPy's
    broadcast views are, since many of its elements share one storage element."""
    if _storage(x) is None:
        return None
    return storage_view(x, shape, expand_strides(x._data.shape, x.stride(), tuple(shape)), x.storage_offset(),
                        "expand_strides", writeable=False)


def indexed(x, idx):
    """`x[idx]` through `index_view` when `idx` (bounds checked) holds only ints and slices, else None."""
    if len(idx) > x.ndim or _storage(x) is None or not all(type(i) is int or type(i) is slice for i in idx):
        return None
    shape, strides, offset = index_view(x._data.shape, x.stride(), x.storage_offset(), tuple(idx))
    return storage_view(x, shape, strides, offset, "index_view")


def gathered(x):
    """A row-major copy of x's elements read from the storage at `storage_positions` (on the CPU), else None."""
    flat = _storage(x)
    if flat is None or x._data.ndim == 0 or x._xp is not np:
        return None
    positions = storage_positions(x._data.shape, x.stride(), x.storage_offset())
    positions = np.asarray(getattr(positions, "_data", positions))
    if positions.shape != x._data.shape or positions.dtype.kind not in "iu":
        raise RuntimeError(f"storage_positions gave positions of shape {positions.shape} and dtype {positions.dtype}, "
                           f"expected integers of shape {x._data.shape}")
    if positions.min() < 0 or positions.max() >= flat.size:
        raise RuntimeError(f"storage_positions gave a position outside the storage of {flat.size} elements (no "
                           "element was read)")
    return flat[positions]
