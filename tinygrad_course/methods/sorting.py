"""Sorting, searching and selection: sort, argsort, topk, kthvalue, median, mode, cummax/cummin,
cumprod, unique, nonzero, masked_select, searchsorted, bucketize, bincount, take, ... (like torch)."""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..factories import tensor
from ..ops import cumulative as CU
from ..ops import sorting as S
from ..ops import sorting_search as Q
from ..dtypes import type_name
from ..shapes import normalize_dim, normalize_dims
from ..ops._util import check_same_device
from ..tensor_base import _wrap
from .numpy_names import numpy_arg_names

METHOD_FUNCTIONS: tuple[str, ...] = (
    "sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian", "mode", "cummax", "cummin", "cumprod",
    "logcumsumexp", "unique", "unique_consecutive", "nonzero", "argwhere", "masked_select", "count_nonzero",
    "bincount", "histc", "histogram", "take", "take_along_dim",
)
__all__: list[str] = ["searchsorted", "bucketize", "tril_indices", "triu_indices"]


def _shape_text(shape):
    return f"[{', '.join(map(str, shape))}]"


@numpy_arg_names
class SortingMethods:
    """Mixin with sorting methods of `Tensor`."""

    __slots__ = ()

    # ---- sorting --------------------------------------------------------------------------------
    def sort(self, dim=-1, descending=False, *, stable=False):
        """(values, indices) sorted along `dim`, like `torch.sort`; NaN counts as the largest value."""
        op = S.StableSort if stable else S.Sort
        return S.values_indices("sort", *op.apply(self, dim, descending))

    def argsort(self, dim=-1, descending=False, *, stable=False):
        """The indices that sort the tensor along `dim`, like `torch.argsort`."""
        d = normalize_dim(dim, self.ndim)
        data = self._data if self.ndim else self._data.reshape(1)
        idx = S.sort_indices(self._xp, data, d, descending).astype(np.int64)
        return _wrap(idx if self.ndim else idx.reshape(()))

    def msort(self):
        """Values sorted along dim 0, like `torch.msort`."""
        return self.sort(0).values

    def topk(self, k, dim=-1, largest=True, sorted=True):
        """(values, indices) of the k largest (or smallest) elements along `dim`, like `torch.topk`."""
        return S.values_indices("topk", *S.Topk.apply(self, k, dim, largest, sorted))

    def kthvalue(self, k, dim=-1, keepdim=False):
        """(values, indices) of the k-th smallest element along `dim` (k counts from 1), like `torch.kthvalue`."""
        return S.values_indices("kthvalue", *S.Kthvalue.apply(self, k, dim, keepdim))

    def median(self, dim=None, keepdim=False):
        """The lower of the two middle values (NaN if any is NaN); with `dim`, (values, indices), like
        `torch.median`."""
        if dim is None:
            return S.MedianAll.apply(self)
        return S.values_indices("median", *S.MedianDim.apply(self, dim, keepdim))

    def nanmedian(self, dim=None, keepdim=False):
        """`median` that ignores NaNs, like `torch.nanmedian`."""
        if dim is None:
            return S.NanmedianAll.apply(self)
        return S.values_indices("nanmedian", *S.NanmedianDim.apply(self, dim, keepdim))

    def mode(self, dim=-1, keepdim=False):
        """(values, indices) of the most frequent value along `dim` (the smallest one on a tie), like
        `torch.mode`."""
        return S.values_indices("mode", *S.Mode.apply(self, dim, keepdim))

    # ---- scans ----------------------------------------------------------------------------------
    def cummax(self, dim):
        """(values, indices) of the running maximum along `dim`, like `torch.cummax`."""
        return S.values_indices("cummax", *CU.Cummax.apply(self, dim, True))

    def cummin(self, dim):
        """(values, indices) of the running minimum along `dim`, like `torch.cummin`."""
        return S.values_indices("cummin", *CU.Cummin.apply(self, dim, False))

    def cumprod(self, dim, *, dtype=None):
        """Running product along `dim` (integers give int64), like `torch.cumprod`."""
        return CU.Cumprod.apply(self, dim, dtype)

    def logcumsumexp(self, dim):
        """log(cumsum(exp(x))) along `dim`, computed stably, like `torch.logcumsumexp`."""
        return CU.Logcumsumexp.apply(self, dim)

    # ---- unique values --------------------------------------------------------------------------
    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        """The distinct elements (or slices along `dim`), sorted, like `torch.unique`; optionally the index of
        each element's value (`return_inverse`) and how often each value occurs (`return_counts`)."""
        return self._unique(True, return_inverse, return_counts, dim)

    def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
        """The first element of every run of equal consecutive elements, like `torch.unique_consecutive`."""
        return self._unique(False, return_inverse, return_counts, dim)

    def _unique(self, sort, return_inverse, return_counts, dim):
        d = None if dim is None else normalize_dim(dim, self.ndim)
        values, inverse, counts = Q.unique_runs(self._xp, self._data, d, sort)
        out = (_wrap(values),) + ((_wrap(inverse),) if return_inverse else ()) + ((_wrap(counts),) if return_counts else ())
        return out if len(out) > 1 else out[0]

    # ---- selection ------------------------------------------------------------------------------
    def nonzero(self, *, as_tuple=False):
        """Indices of the non-zero elements: an (n, ndim) int64 tensor, or one tensor per dim with
        `as_tuple=True`, like `torch.nonzero`."""
        xp, data = self._xp, self._data
        if as_tuple:
            return tuple(_wrap(i.astype(np.int64)) for i in xp.nonzero(data if data.ndim else data.reshape(1)))
        if not data.ndim:
            return _wrap(xp.zeros((int(xp.count_nonzero(data)), 0), dtype=np.int64))
        return _wrap(xp.stack(xp.nonzero(data), axis=1).astype(np.int64))

    def argwhere(self):
        """Indices of the non-zero elements as an (n, ndim) tensor, like `torch.argwhere`."""
        return self.nonzero()

    def masked_select(self, mask):
        """A 1-D tensor of the elements where the (broadcast) bool `mask` is True, like `torch.masked_select`."""
        return S.MaskedSelect.apply(self, mask)

    def count_nonzero(self, dim=None):
        """Number of non-zero elements (over `dim`, an int or tuple), like `torch.count_nonzero`."""
        if dim is not None:
            normalize_dims(dim, self.ndim)
        return (self != 0).sum(dim)

    def take(self, index):
        """Elements of the flattened tensor at `index` (negative counts from the end), like `torch.take`."""
        return S.Take.apply(self, index)

    def take_along_dim(self, indices, dim=None):
        """Elements at `indices` along `dim` (broadcasting the other dims), or of the flattened tensor when
        `dim` is None, like `torch.take_along_dim`."""
        if indices.dtype is not _dt.int64:
            raise RuntimeError(
                f"tc.take_along_dim(): dtype of indices should be Long but got {type_name(indices.dtype)}")
        if dim is None:
            return self.reshape(-1).gather(0, _wrap_negative(indices.reshape(-1), self.numel()))
        d = normalize_dim(dim, self.ndim)
        if self.ndim != indices.ndim:
            raise RuntimeError(
                "tc.take_along_dim(): input and indices should have the same number of dimensions, but got "
                f"{self.ndim} dimensions for input, and {indices.ndim} dimensions for indices")
        wanted = list(self.shape)
        wanted[d] = indices.shape[d]
        shape = list(S.broadcast_shape(wanted, indices.shape))
        index = indices.expand(shape)
        shape[d] = self.shape[d]
        return self.expand(shape).gather(d, _wrap_negative(index, self.shape[d]))

    # ---- counting -------------------------------------------------------------------------------
    def bincount(self, weights=None, minlength=0):
        """How often each value 0..max occurs in a 1-D tensor of non-negative integers (summing `weights`
        instead of ones if given), like `torch.bincount`."""
        if self.dtype.category != 1:
            raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{type_name(self.dtype)}'")
        if minlength < 0:
            raise RuntimeError("minlength should be >= 0")
        xp, data = self._xp, self._data
        if self.ndim != 1 or (data.size and bool((data < 0).any())):
            raise RuntimeError(
                "bincount only supports 1-d non-negative integral inputs. Hint: shift or flatten the values first.")
        w = None
        if weights is not None:
            if weights.ndim != 1 or weights.shape[0] != data.shape[0]:
                raise RuntimeError("weights should be 1-d and have the same length as input")
            check_same_device(self, weights)
            wd = np.float32 if weights.dtype is _dt.float32 else np.float64
            w = weights._data.astype(wd)
            if not data.size:
                return _wrap(xp.zeros(minlength, dtype=wd))
            return _wrap(xp.bincount(data, weights=w, minlength=minlength).astype(wd))
        if not data.size:
            return _wrap(xp.zeros(minlength, dtype=np.int64))
        return _wrap(xp.bincount(data, minlength=minlength).astype(np.int64))

    def histogram(self, bins, *, range=None, weight=None, density=False):
        """Histogram of the values: `bins` equal-width bins over `range` (the data's min and max by default)
        or the bin edges given as a 1-d tensor; `weight` adds each element's weight instead of 1, `density`
        divides by the total and the bin widths. Returns (hist, bin_edges), like `torch.histogram`."""
        if self.dtype.category != 2:
            raise NotImplementedError(f"\"histogramdd\" not implemented for '{type_name(self.dtype)}'")
        data = self.detach().cpu()._data
        if isinstance(bins, int):
            if bins <= 0:
                raise RuntimeError(f"tc.histogram(): bins must be > 0, but got {bins} for dimension 0")
            if range is not None:
                lo, hi = float(range[0]), float(range[1])
                if lo > hi:
                    raise RuntimeError(f"tc.histogramdd: min should not exceed max, but got min {lo:g} max "
                                       f"{hi:g} for dimension 0")
            elif data.size:
                lo, hi = float(data.min()), float(data.max())
            else:
                lo, hi = 0.0, 1.0
            if not (np.isfinite(lo) and np.isfinite(hi)):
                raise RuntimeError(f"tc.histogramdd: dimension 0's range [{lo:g}, {hi:g}] is not finite. Hint: "
                                   "remove NaN and infinite values first, or pass range=(min, max).")
            if lo == hi:
                lo, hi = lo - 0.5, hi + 0.5
            edges = Q.linspace_edges(lo, hi, bins + 1, data.dtype)
        else:
            edges = bins.detach().cpu()._data.astype(data.dtype)
        w = None if weight is None else weight.detach().cpu()._data
        hist = Q.histogram(data, edges, w)
        if density:
            hist = hist / (hist.sum() * np.diff(edges))
        return Q.Histogram(_wrap(hist).to(self.device), _wrap(edges).to(self.device))

    def histc(self, bins=100, min=0, max=0):
        """Histogram of the values in `bins` equal-width bins over [min, max] (the data's range when both are
        equal); values outside are ignored, like `torch.histc`."""
        if self.dtype.category != 2:
            raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{type_name(self.dtype)}'")
        if bins <= 0:
            raise RuntimeError(f"tc.histogram(): bins must be > 0, but got {bins} for dimension 0")
        lo, hi = float(min), float(max)
        if lo > hi:
            raise RuntimeError("tc.histc: max must be larger than min")
        data = self._data
        if lo == hi and data.size:
            lo, hi = float(data.min()), float(data.max())  # one read-back, as in PyTorch
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise RuntimeError(f"tc.histc: range of [{lo:g}, {hi:g}] is not finite")
        if lo == hi:
            lo, hi = lo - 1, hi + 1
        return _wrap(Q.histc(self._xp, data, int(bins), lo, hi))


def _wrap_negative(index, size):
    """`index` with negative entries counted from the end of a dim of `size`."""
    return index + (index < 0).long() * size


def _tensor_like(value, like):
    return tensor(value, device=like.device)


def searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None, sorter=None):
    """Indices where `values` would be inserted into `sorted_sequence` (sorted along its last dim) to keep it
    sorted, like `torch.searchsorted`; `right` (or `side='right'`) puts equal values after the existing ones."""
    seq = sorted_sequence
    scalar = not hasattr(values, "_data")
    if scalar:
        values = _tensor_like(values, seq)
    if seq.ndim == 0:
        raise RuntimeError(
            "tc.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension")
    if side not in (None, "left", "right"):
        raise RuntimeError(f"tc.searchsorted(): side can only be 'left' or 'right' but got {side}")
    if side == "left" and right:
        raise RuntimeError(
            "tc.searchsorted(): side and right can't be set to opposites, got side of left while right was True")
    if seq.ndim > 1 and values.ndim == 0:
        raise RuntimeError(
            "tc.searchsorted(): input value can be a scalar only when boundaries tensor dimension is 1, but we got "
            f"boundaries tensor dim({seq.ndim}) and input value's dim({values.ndim}) numel({values.numel()})")
    if seq.ndim > 1 and tuple(seq.shape[:-1]) != tuple(values.shape[:-1]):
        raise RuntimeError(
            "tc.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
            "tensor and input value tensor must match, but we got boundaries tensor "
            f"{_shape_text(seq.shape)} and input value tensor {_shape_text(values.shape)}")
    check_same_device(seq, values)
    xp = seq._xp
    common = _dt.result_type(seq, values)
    a, v = seq._data.astype(common.np_dtype, copy=False), values._data.astype(common.np_dtype, copy=False)
    if sorter is not None:
        if tuple(sorter.shape) != tuple(seq.shape):
            raise RuntimeError(
                "tc.searchsorted(): boundary and sorter must have the same size, but got boundary tensor "
                f"{_shape_text(seq.shape)}and got sorter tensor {_shape_text(sorter.shape)}")
        a = xp.take_along_axis(a, sorter._data, axis=-1)
    out = Q.searchsorted(xp, a, v, right or side == "right")
    return _wrap(xp.asarray(out).astype(np.int32 if out_int32 else np.int64))


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """Index of the bucket of each element of `input` given sorted 1-D `boundaries`, like `torch.bucketize`
    (`searchsorted(boundaries, input)`)."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def _triangle_indices(name, row, col, offset, dtype, device, upper):
    for what, n in (("row", row), ("col", col)):
        if n < 0:
            raise RuntimeError(f"{what} must be non-negative, got{n}")
    dt = _dt.to_dtype(dtype)
    if dt.category != 1:
        raise NotImplementedError(f"\"{name}\" not implemented for '{type_name(dt)}'")
    rows, cols = (np.triu_indices if upper else np.tril_indices)(row, offset, col)
    return tensor(np.stack([rows, cols]).reshape(2, -1), dtype=dt, device=device)


def tril_indices(row, col, offset=0, *, dtype=_dt.int64, device=None, layout=None):
    """The (2, n) coordinates of the lower triangle of a row x col matrix (diagonal shifted by `offset`),
    like `torch.tril_indices`."""
    return _triangle_indices("tril_indices", row, col, offset, dtype, device, upper=False)


def triu_indices(row, col, offset=0, *, dtype=_dt.int64, device=None, layout=None):
    """The (2, n) coordinates of the upper triangle of a row x col matrix (diagonal shifted by `offset`),
    like `torch.triu_indices`."""
    return _triangle_indices("triu_indices", row, col, offset, dtype, device, upper=True)
