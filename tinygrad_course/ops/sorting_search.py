"""Non-differentiable searching and counting on backend arrays: unique / unique_consecutive, searchsorted,
bincount, histc, histogram.

Each function takes arrays of one array module (`xp`, NumPy or CuPy) and returns arrays of it. Results
whose size depends on the data (unique) read one size back from the device, as PyTorch does.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from .._namespace import namespace


class Histogram(namedtuple("Histogram", ["hist", "bin_edges"])):
    """(hist, bin_edges) of `histogram`; prints like `torch.return_types.histogram(...)`."""

    __slots__ = ()

    def __repr__(self):
        return f"{namespace()}.return_types.histogram(\nhist={self.hist!r},\nbin_edges={self.bin_edges!r})"


def unique_runs(xp, data, dim, sort):
    """(values, inverse, counts) of the runs of equal elements (or of equal slices along `dim`), after
    sorting when `sort` is set: `torch.unique` / `torch.unique_consecutive`. NaNs are all distinct."""
    dtype = data.dtype
    data = data.astype(np.float32) if dtype.kind == "V" else data  # bfloat16: NumPy mishandles its NaNs
    if dim is None:
        rows = data.reshape(-1, 1)
    else:
        rows = xp.moveaxis(data, dim, 0)
        rows = rows.reshape(rows.shape[0], -1)
    n = rows.shape[0]
    if sort and rows.shape[1] == 1:
        order = xp.argsort(rows[:, 0], kind="stable")
    elif sort and rows.shape[1]:
        order = xp.lexsort(rows.T[::-1])  # the first column is the primary key
    else:
        order = xp.arange(n)
    s = rows[order]
    starts = xp.concatenate([xp.ones(min(n, 1), dtype=bool), (s[1:] != s[:-1]).any(axis=1)])
    inverse = xp.empty(n, dtype=np.int64)
    inverse[order] = xp.cumsum(starts) - 1
    first = xp.nonzero(starts)[0]
    counts = xp.diff(xp.concatenate([first, xp.full(1, n, dtype=first.dtype)])).astype(np.int64)
    picked = s[first].astype(dtype, copy=False)
    if dim is None:
        return picked.reshape(-1), inverse.reshape(data.shape), counts
    moved_shape = xp.moveaxis(data, dim, 0).shape
    values = xp.moveaxis(picked.reshape((picked.shape[0],) + moved_shape[1:]), 0, dim)
    return values, inverse, counts


def searchsorted(xp, seq, values, right):
    """Insertion points of `values` in `seq` (sorted along its last dim), per row when `seq` is N-D."""
    if seq.ndim == 1:
        return xp.searchsorted(seq, values, side="right" if right else "left")
    n = seq.shape[-1]
    lo = xp.zeros(values.shape, dtype=np.int64)
    hi = xp.full(values.shape, n, dtype=np.int64)
    for _ in range(n.bit_length()):  # a binary search in every row at once
        mid = (lo + hi) // 2
        probe = xp.take_along_axis(seq, xp.minimum(mid, n - 1), axis=-1)
        go_right = ((probe <= values) if right else (probe < values)) & (mid < hi)
        lo, hi = xp.where(go_right, mid + 1, lo), xp.where(go_right, hi, mid)
    return lo


def histc(xp, data, bins, lo, hi):
    """Counts of `data` in `bins` equal-width bins over [lo, hi] (values outside are ignored), computed in
    the input's precision the way PyTorch's histc computes them."""
    dt = data.dtype.type
    lo_, hi_ = dt(lo), dt(hi)
    flat = data.reshape(-1)
    inside = (flat >= lo_) & (flat <= hi_)
    flat = xp.where(inside, flat, lo_)
    pos = ((flat - lo_) * dt(bins) / (hi_ - lo_)).astype(np.int64)
    pos = xp.clip(pos, 0, bins - 1)
    return xp.bincount(pos, weights=inside.astype(np.float64), minlength=bins).astype(data.dtype)


def linspace_edges(lo, hi, steps, np_dtype):
    """`steps` points from lo to hi as PyTorch's CPU linspace computes them: `lo + i * step` for the first
    half, `hi - (steps - 1 - i) * step` for the rest, in the output's precision."""
    dt = np.dtype(np_dtype).type
    step = (dt(hi) - dt(lo)) / dt(steps - 1) if steps > 1 else dt(0)
    i = np.arange(steps, dtype=np_dtype)
    half = steps // 2
    return np.where(np.arange(steps) < half, dt(lo) + step * i, dt(hi) - step * dt(steps - 1 - i)).astype(np_dtype)


def histogram(data, edges, weight):
    """Counts (or summed weights) of `data` in the bins between consecutive `edges`, the last bin closed;
    values outside the edges and NaN are ignored, as in `torch.histogram`."""
    flat = data.reshape(-1)
    nbins = len(edges) - 1
    inside = (flat >= edges[0]) & (flat <= edges[-1])
    pos = np.minimum(np.searchsorted(edges, flat[inside], side="right") - 1, nbins - 1)
    hist = np.zeros(nbins, data.dtype)
    if weight is None:
        return (hist + np.bincount(pos, minlength=nbins)).astype(data.dtype)
    np.add.at(hist, pos, weight.reshape(-1)[inside].astype(data.dtype))  # in order, in the input's precision
    return hist
