"""A view's geometry: the (shape, strides, storage offset) that `view`, `permute`/`transpose`, `expand` and
basic indexing give, computed from their input's, as PyTorch computes them. No element moves: a view is
the same storage read with other numbers. `contiguous()` is the one that moves them: it copies a view's
elements, read at `storage_positions`, into a fresh row-major storage.

Strides and offsets count elements (as `Tensor.stride()` and `Tensor.storage_offset()` do). In build mode
the view ops make their output from these numbers over the input's storage (`ops/storage_views.py`), so a
learner's stride arithmetic (chapter 01) is what every view in the framework is.
"""
from __future__ import annotations

import numpy as np

from .seams import component


@component("view_strides")
def view_strides(shape, strides, new_shape):
    """Strides that show a tensor of `shape` and `strides` as `new_shape` (same number of elements) without
    moving an element, or None when no strides can (PyTorch's `computeStride`: `view` then raises and
    `reshape` copies). The dims are grouped into chunks that are contiguous with each other; each chunk must
    be split exactly by consecutive new dims, which step through it row-major."""
    shape, strides, new_shape = tuple(shape), tuple(strides), tuple(new_shape)
    if not shape:  # a 0-d tensor: any view of its one element
        return (1,) * len(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_stride, chunk_numel, view_numel = strides[-1], 1, 1
    for d in range(len(shape) - 1, -1, -1):
        chunk_numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != chunk_numel * chunk_stride):  # a chunk ends at d
            while view_d >= 0 and (view_numel < chunk_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != chunk_numel:
                return None
            if d > 0:
                chunk_stride, chunk_numel, view_numel = strides[d - 1], 1, 1
    return tuple(new_strides) if view_d == -1 else None


@component("permute_strides")
def permute_strides(shape, strides, dims):
    """The shape and strides of `permute(dims)`: dim i of the result is dim `dims[i]` of the input, with its
    size and its stride (`transpose(d0, d1)` is the permutation that swaps d0 and d1)."""
    return tuple(shape[d] for d in dims), tuple(strides[d] for d in dims)


@component("expand_strides")
def expand_strides(shape, strides, new_shape):
    """The strides of `expand(new_shape)` (sizes already checked): a new leading dim, or a size-1 dim
    stretched to a larger size, gets stride 0, so every index along it reads the same element."""
    lead = len(new_shape) - len(shape)
    out = [0] * lead
    for size, stride, new_size in zip(shape, strides, new_shape[lead:]):
        out.append(stride if size == new_size else 0)
    return tuple(out)


@component("index_view")
def index_view(shape, strides, offset, index):
    """The (shape, strides, storage offset) of `x[index]` for a basic index: a tuple with one int or slice
    (step > 0) for each of the first dims, in range. An int moves the offset to that position and drops the
    dim; a slice start:stop:step moves the offset to `start`, keeps len(range(start, stop, step)) elements
    and multiplies the stride by `step`. Dims after the index are kept."""
    new_shape, new_strides = [], []
    for d, (size, stride) in enumerate(zip(shape, strides)):
        i = index[d] if d < len(index) else slice(None)
        if isinstance(i, slice):
            start, stop, step = i.indices(size)
            new_shape.append(len(range(start, stop, step)))
            new_strides.append(stride * step)
        else:
            start = i + size if i < 0 else i
        offset += start * stride
    return tuple(new_shape), tuple(new_strides), offset


@component("storage_positions")
def storage_positions(shape, strides, offset):
    """The storage position of every element of a view, as an int64 array of the view's shape: element
    `index` is at offset + sum(index[d] * strides[d]) (`shapes.storage_index`), for all elements at once by
    broadcasting one arange per dim. `contiguous()` copies a view's elements from these positions."""
    positions = np.asarray(offset, dtype=np.int64)
    for size, stride in zip(shape, strides):
        positions = positions[..., None] + np.arange(size, dtype=np.int64) * stride
    return positions
