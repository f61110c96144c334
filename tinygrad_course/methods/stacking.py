"""Module-level shape functions (like torch): repeat_interleave, meshgrid, hstack/vstack/dstack/column_stack,
atleast_1d/2d/3d, cartesian_prod, combinations."""
from __future__ import annotations

import itertools
import warnings

from ..dtypes import int64
from ..factories import arange, empty, tensor
from ..dtypes import type_name
from ..shapes import normalize_dim
from ..ops.concat import cat, stack
from ..tensor_base import _wrap

METHOD_FUNCTIONS: tuple[str, ...] = ()
__all__: list[str] = [
    "repeat_interleave", "meshgrid", "hstack", "vstack", "dstack", "column_stack", "row_stack", "atleast_1d",
    "atleast_2d", "atleast_3d", "cartesian_prod", "combinations",
]



def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element of input `repeats` times along `dim` (flattened when None), like
    `torch.repeat_interleave`; `tc.repeat_interleave(counts)` gives indices 0.. repeated by the counts."""
    if repeats is None:  # torch.repeat_interleave(repeats): arange(len(repeats)) repeated
        counts = input
        if counts.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        return repeat_interleave(arange(counts._data.size, device=counts.device), counts, 0, output_size=output_size)
    if dim is None:
        input, d = input.flatten(), 0
    else:
        d = normalize_dim(dim, input.ndim)
    n = input._data.shape[d] if input.ndim else 1
    if not hasattr(repeats, "_data"):
        r = int(repeats)
        if r < 0:
            raise RuntimeError("Repeats must be non-negative")
        if output_size is not None and output_size != n * r:
            raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {n * r} but got {output_size}")
        if input.ndim == 0:
            input = input.reshape(1)
        shape = list(input._data.shape)
        expanded = input.unsqueeze(d + 1).expand(shape[:d + 1] + [r] + shape[d + 1:])
        shape[d] = n * r
        return expanded.contiguous().view(shape)
    if repeats.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if repeats.dtype.category != 1:
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for '{type_name(repeats.dtype)}'")
    counts = repeats._data.reshape(-1)
    if counts.size == 1 and n != 1:
        counts = repeats._xp.broadcast_to(counts, (n,))
    if counts.size != n:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                           f"{counts.size} and input.size({d}) = {n}")
    if counts.size and bool((counts < 0).any()):
        raise RuntimeError("repeats can not be negative")
    xp = repeats._xp
    index = xp.repeat(xp.arange(n, dtype=counts.dtype if counts.dtype.itemsize == 8 else None), counts)
    if output_size is not None and output_size != index.size:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {index.size} but got {output_size}")

    index = _wrap(index.astype("int64", copy=False))
    if input.ndim == 0:
        input = input.reshape(1)
    return input.index_select(d, index)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 1-D tensors, like `torch.meshgrid` ('ij' indexing unless `indexing='xy'`)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("tc.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'tc.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"tc.meshgrid: Expected 0D or 1D tensor in the tensor list but got a tensor of "
                               f"shape [{', '.join(map(str, t.shape))}]")
    if any(t.dtype is not tensors[0].dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    ts = list(tensors)
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = [t.numel() for t in ts]
    grids = []
    for k, t in enumerate(ts):
        view = [1] * len(ts)
        view[k] = -1
        grids.append(t.view(view).expand(shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def _tensor_list(name, tensors):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


def _atleast(tensors, fn):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(fn(t) for t in tensors[0])
    if len(tensors) == 1:
        return fn(tensors[0])
    return tuple(fn(t) for t in tensors)


def _atleast_1d(t):
    return t.reshape(1) if t.ndim == 0 else t


def _atleast_2d(t):
    if t.ndim == 0:
        return t.reshape(1, 1)
    return t.unsqueeze(0) if t.ndim == 1 else t


def _atleast_3d(t):
    if t.ndim == 0:
        return t.reshape(1, 1, 1)
    if t.ndim == 1:
        return t.unsqueeze(0).unsqueeze(-1)
    return t.unsqueeze(-1) if t.ndim == 2 else t


def atleast_1d(*tensors):
    """Each 0-d input as a 1-element 1-D view (others unchanged), like `torch.atleast_1d`."""
    return _atleast(tensors, _atleast_1d)


def atleast_2d(*tensors):
    """Each input viewed with at least 2 dims (1-D becomes a row), like `torch.atleast_2d`."""
    return _atleast(tensors, _atleast_2d)


def atleast_3d(*tensors):
    """Each input viewed with at least 3 dims ((n,) -> (1, n, 1), (m, n) -> (m, n, 1)), like `torch.atleast_3d`."""
    return _atleast(tensors, _atleast_3d)


def hstack(tensors, *, out=None):
    """Concatenate along dim 1 (dim 0 for 1-D inputs), like `torch.hstack`."""
    ts = [_atleast_1d(t) for t in _tensor_list("hstack", tensors)]
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors, *, out=None):
    """Concatenate along dim 0 after making inputs at least 2-D, like `torch.vstack`."""
    return cat([_atleast_2d(t) for t in _tensor_list("vstack", tensors)], 0)


def row_stack(tensors, *, out=None):
    """Alias of `vstack`, like `torch.row_stack`."""
    return cat([_atleast_2d(t) for t in _tensor_list("row_stack", tensors)], 0)


def dstack(tensors, *, out=None):
    """Concatenate along dim 2 after making inputs at least 3-D, like `torch.dstack`."""
    return cat([_atleast_3d(t) for t in _tensor_list("dstack", tensors)], 2)


def column_stack(tensors, *, out=None):
    """Stack 0-d/1-d inputs as columns and concatenate along dim 1, like `torch.column_stack`."""
    ts = [t.reshape(t.numel(), 1) if t.ndim <= 1 else t for t in _tensor_list("column_stack", tensors)]
    return cat(ts, 1)


def cartesian_prod(*tensors):
    """All combinations of one element from each 1-D input, as rows, like `torch.cartesian_prod`."""
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape [{', '.join(map(str, t.shape))}]")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.flatten() for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    """All length-`r` combinations of the elements of a 1-D tensor, as rows, like `torch.combinations`."""
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape [{', '.join(map(str, input.shape))}]")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return empty(0, dtype=input.dtype, device=input.device)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(input._data.shape[0]), r))
    cols = tensor(rows, dtype=int64, device=input.device).reshape(len(rows), r).t()
    return stack([input.index_select(0, cols[k].contiguous()) for k in range(r)], 1)
