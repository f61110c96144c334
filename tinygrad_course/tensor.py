"""`Tensor`: the class every tensor is -- its operators and methods, defined in this class's body and in the
method families it lists as bases (as PyTorch's `torch.Tensor` subclasses its C base `torch._C.TensorBase`).

Reading order: `TensorBase` (`tensor_base.py`) holds the data -- storage, shape, strides, dtype, device,
printing. This class adds what a learner uses first, each a call of an op in `ops/` (`a * b` is
`Mul.apply(a, b)`): arithmetic and comparison operators, element-wise math, reductions (`sum`, `mean`,
`max`, ...), views (`view`, `reshape`, `transpose`, `expand`, ...) and autograd (`backward`,
`register_hook`, `retain_grad`). The bases in `methods/` add the longer tail by family (conversions,
products, indexing, in-place ops, sorting, linear algebra, ...). When two define one name, the first class
in `Tensor.__mro__` wins: this body, then `TensorBase`, then the families in the order listed.
"""
from __future__ import annotations

import itertools
import weakref

import numpy as np

from . import dtypes as _dt
from . import seams
from .autograd.engine import backward as _backward
from .autograd.hooks import OutputHooks, add_hook
from .factories import empty, tensor
from .methods import (
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
    statistics,
    storage,
    unsupported,
)
from .ops import arithmetic as AR
from .ops import comparison as CP
from .ops import concat as CT
from .ops import fused as F
from .ops import indexing as IX
from .ops import rearrange as RA
from .ops import reduce as R
from .ops import unary_math as UM
from .ops import views as V
from .methods.numpy_names import numpy_arg_names, numpy_dim_keepdim
from .ops._util import operand
from .shapes import normalize_dim, shape_from_args
from .tensor_base import TensorBase, _wrap, register_tensor_class

_PLAIN = frozenset((float, int, bool))  # operands used as they are (anything else goes through `operand`)


def _operand(other):
    """`other` as an operand of arithmetic: a tensor or Python number as it is, NumPy values converted; None
    for anything else (the operator then returns NotImplemented, as Python expects)."""
    if type(other) in _PLAIN or isinstance(other, TensorBase):
        return other
    return operand(other)


def _compare(a, b, name):
    b = operand(b)
    return NotImplemented if b is None else CP.Compare.apply(a, b, op=name)


@numpy_arg_names  # `axis=`/`keepdims=` accepted for `dim=`/`keepdim=`, as PyTorch's parser accepts them
class Tensor(TensorBase, inplace.InplaceMachinery, conversion.ConversionMethods, products.ProductMethods,
             indexing.IndexingMethods, inplace_ops.InplaceMethods, sorting.SortingMethods,
             pointwise.PointwiseMethods, linalg.LinalgMethods, shaping.ShapingMethods,
             index_updates.IndexUpdateMethods, storage.StorageMethods, statistics.StatisticsMethods,
             aliases.AliasMethods, inplace_ops.InplaceTwins, predicates.PredicateMethods,
             legacy_types.LegacyMethods, unsupported.UnsupportedMethods):
    """A multi-dimensional array that can record operations for automatic differentiation.

    Create tensors with `tc.tensor(data)` or the factory functions (`tc.zeros`, `tc.randn`, ...).
    `tc.Tensor(data)` also works and, as in PyTorch, gives float32 data.
    """

    __slots__ = ()

    def __new__(cls, *args, **kwargs):
        """The legacy constructor: `tc.Tensor([1, 2])` gives float32 data, `tc.Tensor(2, 3)` an uninitialised 2x3."""
        if len(args) == 1 and not isinstance(args[0], int):
            t = tensor(args[0], dtype=kwargs.get("dtype") or _dt.get_default_dtype(), device=kwargs.get("device"))
        else:
            t = empty(*(args or (0,)), dtype=kwargs.get("dtype") or _dt.get_default_dtype(), device=kwargs.get("device"))
        if cls is not Tensor:  # a subclass (e.g. a user's): the new tensor's storage, its own type
            return Tensor._make_subclass(cls, t, t._requires_grad)
        return t

    def __init__(self, *args, **kwargs):
        pass  # everything is done by __new__

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self.detach().cpu()._data, self._requires_grad, str(self._device)))

    # ---- arithmetic operators: `a * b` is `Mul.apply(a, b)` (a Python number or NumPy value may stand on either side)
    def __add__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else AR.Add.apply(self, other)

    def __radd__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else AR.Add.apply(other, self)

    def __sub__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else AR.Sub.apply(self, other)

    def __rsub__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else AR.Sub.apply(other, self)

    def __mul__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else AR.Mul.apply(self, other)

    def __rmul__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else AR.Mul.apply(other, self)

    def __truediv__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else AR.Div.apply(self, other)

    def __rtruediv__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else AR.Div.apply(other, self)

    def __pow__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else AR.Pow.apply(self, other)

    def __rpow__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else AR.Pow.apply(other, self)

    def __floordiv__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else AR.FloorDivide.apply(self, other)

    def __rfloordiv__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else AR.FloorDivide.apply(other, self)

    def __mod__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else AR.Remainder.apply(self, other)

    def __rmod__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else AR.Remainder.apply(other, self)

    def __and__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else CP.Bitwise.apply(self, other, op="and")

    def __rand__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else CP.Bitwise.apply(other, self, op="and")

    def __or__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else CP.Bitwise.apply(self, other, op="or")

    def __ror__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else CP.Bitwise.apply(other, self, op="or")

    def __xor__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else CP.Bitwise.apply(self, other, op="xor")

    def __rxor__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else CP.Bitwise.apply(other, self, op="xor")

    def eq(self, other):
        """Element-wise `eq` comparison; a bool tensor (like `torch.eq`)."""
        return _compare(self, other, "eq")

    def ne(self, other):
        """Element-wise `ne` comparison; a bool tensor (like `torch.ne`)."""
        return _compare(self, other, "ne")

    def lt(self, other):
        """Element-wise `lt` comparison; a bool tensor (like `torch.lt`)."""
        return _compare(self, other, "lt")

    def le(self, other):
        """Element-wise `le` comparison; a bool tensor (like `torch.le`)."""
        return _compare(self, other, "le")

    def gt(self, other):
        """Element-wise `gt` comparison; a bool tensor (like `torch.gt`)."""
        return _compare(self, other, "gt")

    def ge(self, other):
        """Element-wise `ge` comparison; a bool tensor (like `torch.ge`)."""
        return _compare(self, other, "ge")

    __eq__, __ne__, __lt__, __le__, __gt__, __ge__ = eq, ne, lt, le, gt, ge
    greater, less, greater_equal, less_equal, not_equal = gt, lt, ge, le, ne
    __hash__ = TensorBase.__hash__  # (defining __eq__ would otherwise make tensors unhashable)

    def __neg__(self):
        return UM.Neg.apply(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return UM.Abs.apply(self)

    def __invert__(self):
        if self.dtype.name == "bool":
            return CP.Unary.apply(self, op="logical_not")
        return CP.Unary.apply(self, op="bitwise_not")

    # in-place operators
    def __iadd__(self, other):
        return self.add_(other)

    def __isub__(self, other):
        return self.sub_(other)

    def __imul__(self, other):
        return self.mul_(other)

    def __itruediv__(self, other):
        return self.div_(other)

    def __ipow__(self, other):
        return self.pow_(other)

    # ---- arithmetic methods -----------------------------------------------------------------------
    def add(self, other, *, alpha=1):
        """self + alpha * other, with broadcasting."""
        return AR.Add.apply(self, _operand(other), alpha=alpha)

    def sub(self, other, *, alpha=1):
        """self - alpha * other, with broadcasting."""
        return AR.Sub.apply(self, _operand(other), alpha=alpha)

    subtract = sub

    def mul(self, other):
        """Element-wise product, with broadcasting."""
        return AR.Mul.apply(self, _operand(other))

    multiply = mul

    def div(self, other, *, rounding_mode=None):
        """True division (always floating), or 'trunc'/'floor' rounding division."""
        if rounding_mode is None:
            return AR.Div.apply(self, _operand(other))
        if rounding_mode == "floor":
            return AR.FloorDivide.apply(self, _operand(other))
        if rounding_mode == "trunc":
            q = AR.Div.apply(self, _operand(other)).trunc()
            rd = _dt.result_type(self, _operand(other))
            return q if rd.category == 2 else q.to(rd)
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")

    divide = true_divide = div

    def floor_divide(self, other):
        return AR.FloorDivide.apply(self, _operand(other))

    def remainder(self, other):
        return AR.Remainder.apply(self, _operand(other))

    def pow(self, exponent):
        """self ** exponent, element-wise."""
        return AR.Pow.apply(self, _operand(exponent))

    def square(self):
        """self ** 2 (bool and integer tensors give int64, like PyTorch)."""
        return AR.Pow.apply(self, 2)

    def reciprocal(self):
        return UM.Reciprocal.apply(self)

    def neg(self):
        return UM.Neg.apply(self)

    negative = neg

    def abs(self):
        return UM.Abs.apply(self)

    absolute = abs

    def sign(self):
        return UM.Sign.apply(self)

    def exp(self):
        return UM.Exp.apply(self)

    def log(self):
        return UM.Log.apply(self)

    def log1p(self):
        return UM.Log1p.apply(self)

    def log2(self):
        return UM.Log2.apply(self)

    def log10(self):
        return UM.Log10.apply(self)

    def expm1(self):
        return UM.Expm1.apply(self)

    def sqrt(self):
        return UM.Sqrt.apply(self)

    def rsqrt(self):
        return UM.Rsqrt.apply(self)

    def sin(self):
        return UM.Sin.apply(self)

    def cos(self):
        return UM.Cos.apply(self)

    def tanh(self):
        return UM.Tanh.apply(self)

    def sigmoid(self):
        return UM.Sigmoid.apply(self)

    def relu(self):
        return UM.Relu.apply(self)

    def clamp(self, min=None, max=None):
        """Limit values to [min, max] (either bound may be None)."""
        if hasattr(min, "_data") or hasattr(max, "_data"):
            out = self
            if min is not None:
                out = out.maximum(min) if hasattr(min, "_data") else CP.Clamp.apply(out, min=min)
            if max is not None:
                out = out.minimum(max) if hasattr(max, "_data") else CP.Clamp.apply(out, max=max)
            return out
        return CP.Clamp.apply(self, min=min, max=max)

    clip = clamp

    def clamp_min(self, min):
        return self.clamp(min=min)

    def clamp_max(self, max):
        return self.clamp(max=max)

    def maximum(self, other):
        return AR.Maximum.apply(self, other)

    def minimum(self, other):
        return AR.Minimum.apply(self, other)

    def where(self, condition, other):
        """Elements of self where `condition`, else of `other` (like `torch.where(condition, self, other)`)."""
        return CP.Where.apply(condition, self, _operand(other))

    def floor(self):
        return UM.ROUNDING["floor"].apply(self, op="floor")

    def ceil(self):
        return UM.ROUNDING["ceil"].apply(self, op="ceil")

    def round(self, decimals=0):
        if decimals:
            return UM.ROUNDING["round"].apply(self * 10 ** decimals, op="round") / 10 ** decimals
        return UM.ROUNDING["round"].apply(self, op="round")

    def trunc(self):
        return UM.ROUNDING["trunc"].apply(self, op="trunc")

    def logical_not(self):
        return CP.Unary.apply(self, op="logical_not")

    def logical_and(self, other):
        return CP.Compare.apply(self, _operand(other), op="and")

    def logical_or(self, other):
        return CP.Compare.apply(self, _operand(other), op="or")

    def logical_xor(self, other):
        return CP.Compare.apply(self, _operand(other), op="xor")

    def bitwise_and(self, other):
        return CP.Bitwise.apply(self, _operand(other), op="and")

    def bitwise_or(self, other):
        return CP.Bitwise.apply(self, _operand(other), op="or")

    def bitwise_xor(self, other):
        return CP.Bitwise.apply(self, _operand(other), op="xor")

    def bitwise_not(self):
        return CP.Unary.apply(self, op="bitwise_not")

    def isnan(self):
        return CP.Unary.apply(self, op="isnan")

    def isinf(self):
        return CP.Unary.apply(self, op="isinf")

    def isfinite(self):
        return CP.Unary.apply(self, op="isfinite")

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
        return bool(np.allclose(self.detach().cpu()._data, other.detach().cpu()._data, rtol, atol, equal_nan))

    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return _wrap(self._xp.isclose(self._data, other._data, rtol, atol, equal_nan))

    def equal(self, other) -> bool:
        return self.shape == other.shape and bool((self._data == other._data).all())

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

    # ---- shape and views -----------------------------------------------------------------------------
    def view(self, *shape):
        """Same data, new shape, without copying (fails if the strides do not allow it)."""
        return V.View.apply(self, shape_from_args(shape))

    def view_as(self, other):
        return V.View.apply(self, other.shape)

    def reshape(self, *shape):
        """New shape: a view when possible, otherwise a copy."""
        shape = shape_from_args(shape)
        if self._data.flags.c_contiguous:
            return V.View.apply(self, shape)
        if type(self._data) is np.ndarray:  # asked before recording: a view, or a copy and a view of the copy
            try:
                self._data.reshape(V.infer_shape(shape, self._data.size), copy=False)
            except ValueError:
                return V.UnsafeView.apply(self.contiguous(), shape)  # CloneBackward0 -> UnsafeViewBackward0
            return V.ReshapeAlias.apply(self, shape)
        try:
            return V.ReshapeAlias.apply(self, shape)  # the strides may still allow a view
        except RuntimeError:
            return V.UnsafeView.apply(self.contiguous(), shape)  # a copy: CloneBackward0 -> UnsafeViewBackward0

    def reshape_as(self, other):
        return self.reshape(other.shape)

    def flatten(self, start_dim=0, end_dim=-1):
        """Merge dims start_dim..end_dim into one."""
        if self.ndim == 0:
            return self.reshape(1)
        s, e = normalize_dim(start_dim, self.ndim), normalize_dim(end_dim, self.ndim)
        if s > e:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        if s == e:
            return self
        shape = self._data.shape
        return self.reshape(shape[:s] + (-1,) + shape[e + 1:])

    def unflatten(self, dim, sizes):
        """Split dimension `dim` into `sizes`."""
        d = normalize_dim(dim, self.ndim)
        shape = self._data.shape
        return self.view(shape[:d] + tuple(sizes) + shape[d + 1:])

    def squeeze(self, dim=None):
        """Remove size-1 dimensions (all, or only `dim`)."""
        return V.Squeeze.apply(self, dim)

    def unsqueeze(self, dim):
        """Insert a size-1 dimension at `dim`."""
        return V.Unsqueeze.apply(self, dim)

    def permute(self, *dims):
        """Reorder dimensions (a view)."""
        return V.Permute.apply(self, shape_from_args(dims))

    def transpose(self, dim0, dim1):
        """Swap two dimensions (a view)."""
        return V.Transpose.apply(self, dim0, dim1)

    swapaxes = swapdims = transpose

    def t(self):
        """Transpose of a matrix (<= 2-D)."""
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
        if self.ndim < 2:
            return V.AliasView.apply(self)
        return V.T.apply(self, 0, 1)

    @property
    def T(self):
        """All dimensions reversed (the matrix transpose for 2-D tensors)."""
        if self.ndim == 2:
            return V.T.apply(self, 0, 1)
        return V.Permute.apply(self, tuple(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self):
        """Transpose of the last two dimensions (a batch of matrices)."""
        return self._matrix_transpose("tensor.mT")

    @property
    def mH(self):
        """Conjugate transpose of the last two dimensions (the same as `mT` for real tensors)."""
        return self._matrix_transpose("tensor.mH")

    def adjoint(self):
        """Conjugate transpose of the last two dimensions (a view; `mT` for real tensors)."""
        return self._matrix_transpose("tensor.adjoint()")

    @property
    def H(self):
        """Conjugate transpose of a matrix (the same as `T` on a 2-D real tensor)."""
        if self.ndim == 0:
            return self
        if self.ndim != 2:
            hint = " For batches of matrices, consider using tensor.mH" if self.ndim > 2 else ""
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor.{hint}")
        return V.T.apply(self, 0, 1)

    def _matrix_transpose(self, what):
        if self.ndim < 2:
            raise RuntimeError(f"{what} is only supported on matrices or batches of matrices. Got {self.ndim}-D tensor.")
        return V.Transpose.apply(self, -2, -1)

    def expand(self, *sizes):
        """Broadcast size-1 dims to `sizes` without copying (stride 0); -1 keeps a size."""
        return V.Expand.apply(self, sizes[0] if len(sizes) == 1 and type(sizes[0]) is tuple else shape_from_args(sizes))

    def expand_as(self, other):
        return V.Expand.apply(self, other.shape)

    def repeat(self, *sizes):
        """Tile the tensor `sizes` times along each dimension (a copy)."""
        return RA.Repeat.apply(self, shape_from_args(sizes))

    def flip(self, *dims):
        """Reverse the order of elements along `dims` (a copy)."""
        return RA.Flip.apply(self, shape_from_args(dims))

    def narrow(self, dim, start, length):
        """The slice start:start+length along `dim` (a view)."""
        return IX.Narrow.apply(self, dim, int(start), int(length))

    def split(self, split_size_or_sections, dim=0):
        """Split into chunks of a given size (the last may be smaller), or of the listed sizes."""
        size = self._data.shape[normalize_dim(dim, self.ndim)]
        if isinstance(split_size_or_sections, int):
            step = split_size_or_sections
            if step <= 0 and size:
                raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
            sizes = [min(step, size - i) for i in range(0, size, step)] if step and size else [0]
        else:
            sizes = list(split_size_or_sections)
            if min(sizes, default=0) < 0:
                raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                                   f"split_sizes={sizes}")
        if "Narrow" in seams.ACTIVE and sum(sizes) == size:  # build mode: the learner's Narrow slices each piece
            # (PyTorch's error for sizes of another sum stays Split's)
            d, starts = normalize_dim(dim, self.ndim), itertools.accumulate(sizes, initial=0)
            return tuple(IX.Narrow.apply(self, d, start, s) for start, s in zip(starts, sizes))
        return CT.Split.apply(self, sizes, dim, isinstance(split_size_or_sections, int))

    def chunk(self, chunks, dim=0):
        """Split into `chunks` nearly equal pieces (like `torch.chunk`)."""
        if chunks <= 0:
            raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
        size = self._data.shape[normalize_dim(dim, self.ndim)]
        step = -(-size // chunks)
        return self.split(step, dim) if step else self.split([0] * chunks, dim)  # an empty dim: `chunks` empty pieces

    def unbind(self, dim=0):
        """The slices along `dim`, as a tuple of views."""
        return CT.Unbind.apply(self, dim)

    def contiguous(self, memory_format=None):
        """This tensor if already contiguous, else a contiguous copy."""
        if self._data.flags.c_contiguous:
            return self
        return V.Clone.apply(self)

    def clone(self, *, memory_format=None):
        """A copy with its own storage (recorded in the graph)."""
        return V.Clone.apply(self)

    # ---- autograd ------------------------------------------------------------------------------------
    @property
    def retains_grad(self) -> bool:
        """True when a non-leaf tensor keeps its `.grad` (see `retain_grad`)."""
        fn = self.grad_fn
        return bool(fn is not None and fn._retain_hooks and self._output_nr in fn._retain_hooks)

    def retain_grad(self):
        """Keep `.grad` for this non-leaf tensor during backward (leaves always keep it)."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        fn = self.grad_fn
        if fn is None:
            return
        if fn._retain_hooks is None:
            fn._retain_hooks = {}
        fn._retain_hooks[self._output_nr] = weakref.ref(self)

    def register_hook(self, hook):
        """Call `hook(grad)` whenever this tensor's gradient is computed; it may return a new gradient."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        fn = self.grad_fn
        if fn is None:
            return add_hook(self, "_hooks", hook)
        if fn._tensor_pre_hooks is None:
            fn._tensor_pre_hooks = {}
        return add_hook(OutputHooks(fn._tensor_pre_hooks, self._output_nr), "hooks", hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute gradients of this tensor w.r.t. the graph leaves and accumulate them into `.grad`."""
        _backward(self, None if gradient is None else (gradient,), retain_graph, create_graph, inputs=inputs)


register_tensor_class(Tensor)

# The operators, element-wise math and views a learner writes in chapter 02c (02c.1): build mode sets the class
# attribute to theirs while it is installed (`seams.offer_methods`), so these calls cost nothing extra here.
LEARNER_METHODS = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
                   "__rtruediv__", "__pow__", "__neg__", "__matmul__", "exp", "log", "tanh", "sqrt", "relu",
                   "sigmoid", "view", "reshape", "transpose", "t", "T", "mT", "expand", "unsqueeze", "squeeze",
                   "contiguous", "clone")
seams.offer_methods(Tensor, LEARNER_METHODS, "Tensor.")
# Chapter 02d.1: the learner's `backward` (the plain call: no create_graph, inputs or hooks) is also a slot.
seams.offer_methods(Tensor, ("backward",), "Tensor.")
# Chapter 02c.2's methods: the reductions, comparisons, logical operators and conversions a model, its loss and its
# accuracy call; slots as above.
LEARNER_REDUCTION_METHODS = ("sum", "mean", "max", "argmax", "all", "any", "eq", "ne", "lt", "le", "gt", "ge",
                             "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__and__", "__or__",
                             "__invert__", "to", "cpu", "float", "long")
seams.offer_methods(Tensor, LEARNER_REDUCTION_METHODS, "Tensor.")
# Chapter 02c.3's methods: the in-place machinery (`_check_inplace` and `_inplace` of `InplaceMachinery`, `_write` of
# `TensorBase`) with the in-place methods and operators the optimizers and `nn.init` call; slots as above.
LEARNER_INPLACE_METHODS = ("_check_inplace", "_write", "_inplace", "add_", "sub_", "mul_", "div_", "addcmul_",
                           "addcdiv_", "lerp_", "zero_", "fill_", "copy_", "__iadd__", "__isub__", "__imul__",
                           "__itruediv__")
seams.offer_methods(Tensor, LEARNER_INPLACE_METHODS, "Tensor.")


def _rebuild(data, requires_grad, device):
    """Unpickle a tensor (what `Tensor.__reduce_ex__` names)."""
    t = _wrap(data)
    if device != "cpu":
        t = t.to(device)
    t._requires_grad = requires_grad
    return t
