"""Reductions as Tensor methods: `sum`, `mean`, `var`, `max`, `argmax`, `logsumexp`, `softmax`, ...
(ops in `ops/reduce.py` and `ops/fused.py`)."""
from __future__ import annotations

from ..ops import fused as F
from ..ops import reduce as R
from .numpy_names import numpy_arg_names, numpy_dim_keepdim


@numpy_arg_names
class ReductionMethods:
    """Reductions over all elements or along dims."""

    __slots__ = ()

    # ---- reductions -------------------------------------------------------------------------------
    def sum(self, dim=None, keepdim=False, *, dtype=None, **numpy_names):
        """Sum of all elements, or over `dim` (an int or tuple; also `axis=`, `keepdims=`)."""
        if numpy_names:
            dim, keepdim = numpy_dim_keepdim("sum", numpy_names, dim, keepdim)
        if dim is None and not keepdim:
            return R.SumAll.apply(self, None, False, dtype)
        return R.Sum.apply(self, dim, keepdim, dtype)

    def mean(self, dim=None, keepdim=False, *, dtype=None, **numpy_names):
        """Mean of all elements, or over `dim` (also `axis=`, `keepdims=`)."""
        if numpy_names:
            dim, keepdim = numpy_dim_keepdim("mean", numpy_names, dim, keepdim)
        if dim is None and not keepdim:
            return R.MeanAll.apply(self, None, False, dtype)
        return R.Mean.apply(self, dim, keepdim, dtype)

    def var(self, dim=None, unbiased=True, keepdim=False, *, correction=None):
        """Variance; unbiased (divides by N-1) unless `unbiased=False` or `correction=0`."""
        if isinstance(unbiased, bool) is False and dim is None:
            dim, unbiased = unbiased, True
        c = correction if correction is not None else (1 if unbiased else 0)
        return R.Var.apply(self, dim, c, keepdim)

    def std(self, dim=None, unbiased=True, keepdim=False, *, correction=None):
        """Standard deviation; unbiased unless `unbiased=False` or `correction=0`."""
        if isinstance(unbiased, bool) is False and dim is None:
            dim, unbiased = unbiased, True
        c = correction if correction is not None else (1 if unbiased else 0)
        return R.Std.apply(self, dim, c, keepdim)

    def max(self, dim=None, keepdim=False):
        """Largest element; with `dim`, a (values, indices) pair; with a tensor, `maximum`."""
        if hasattr(dim, "_data"):
            return self.maximum(dim)
        if dim is None:
            return R.MaxMinAll.apply(self, None, False, True)
        return R.values_indices("max", *R.MaxMinDim.apply(self, dim, keepdim, True))

    def min(self, dim=None, keepdim=False):
        """Smallest element; with `dim`, a (values, indices) pair; with a tensor, `minimum`."""
        if hasattr(dim, "_data"):
            return self.minimum(dim)
        if dim is None:
            return R.MinAll.apply(self, None, False, False)
        return R.values_indices("min", *R.MinDim.apply(self, dim, keepdim, False))

    def amax(self, dim=(), keepdim=False):
        return R.AmaxOp.apply(self, dim if dim != () else None, keepdim, True)

    def amin(self, dim=(), keepdim=False):
        return R.AminOp.apply(self, dim if dim != () else None, keepdim, False)

    def argmax(self, dim=None, keepdim=False):
        """Index of the largest element (flattened when `dim` is None)."""
        return R.ArgMaxMin.apply(self, dim, keepdim, True)

    def argmin(self, dim=None, keepdim=False):
        """Index of the smallest element (flattened when `dim` is None)."""
        return R.ArgMaxMin.apply(self, dim, keepdim, False)

    def prod(self, dim=None, keepdim=False, *, dtype=None):
        """Product of all elements, or over `dim`."""
        if dim is None:
            return R.ProdAll.apply(self, None, False, dtype)
        return R.Prod.apply(self, dim, keepdim, dtype)

    def cumsum(self, dim, *, dtype=None):
        """Running sum along `dim`."""
        return R.Cumsum.apply(self, dim, dtype)

    def logsumexp(self, dim, keepdim=False):
        """log(sum(exp(x))) over `dim`, computed stably."""
        return R.Logsumexp.apply(self, dim, keepdim)

    def all(self, dim=None, keepdim=False):
        return R.AllAny.apply(self, dim, keepdim, op="all")

    def any(self, dim=None, keepdim=False):
        return R.AllAny.apply(self, dim, keepdim, op="any")

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        """Vector p-norm over all elements or `dim` ('fro' is the 2-norm)."""
        if p in ("fro", None):
            p = 2
        if p == "nuc":
            raise NotImplementedError("nuclear norm is not supported")
        return R.Norm.apply(self, float(p), dim, keepdim)

    def softmax(self, dim, dtype=None):
        """Softmax along `dim` (`torch.Tensor.softmax`); see `tc.nn.functional.softmax`."""
        return F.Softmax.apply(self if dtype is None else self.to(dtype), dim)

    def log_softmax(self, dim, dtype=None):
        """log(softmax) along `dim`, computed stably (`torch.Tensor.log_softmax`)."""
        return F.LogSoftmax.apply(self if dtype is None else self.to(dtype), dim)
