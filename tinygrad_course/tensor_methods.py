"""Tensor methods and operators, each a thin binding to an op in `tinygrad_course/ops/`.

Kept apart from `tensor.py` so that the Tensor object itself stays short enough to read.
"""
from __future__ import annotations

import numbers

import numpy as np

from .ops import arithmetic as AR
from .ops import comparison as CP
from .ops import concat as CT
from .ops import gather_scatter as GS
from .ops import indexing as IX
from .ops import matmul as M
from .ops import rearrange as RA
from .ops import reduce as R
from .ops import unary_math as UM
from .ops import views as V
from .methods import MIXINS


def _operand(o):
    """A tensor or Python scalar usable in arithmetic, or None when the type is not supported."""
    if type(o) in _PLAIN_OPERANDS or isinstance(o, TensorMethods):  # tensors (any subclass) and numbers
        return o
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        from .factories import tensor

        return tensor(o)
    if isinstance(o, numbers.Number):
        return float(o)
    return None


_PLAIN_OPERANDS = {float, int, bool}


def _binary(fn_op, **kw):
    def method(self, other):
        other = _operand(other)
        if other is None:
            return NotImplemented
        return fn_op.apply(self, other, **kw)

    return method


def _reflected(fn_op, **kw):
    def method(self, other):
        other = _operand(other)
        if other is None:
            return NotImplemented
        return fn_op.apply(other, self, **kw)

    return method


def _compare(name):
    def method(self, other):
        other = _operand(other)
        if other is None:
            return NotImplemented if name in ("eq", "ne") else NotImplemented
        return CP.Compare.apply(self, other, op=name)

    method.__doc__ = f"Element-wise `{name}` comparison; a bool tensor (like `torch.{name}`)."
    return method


def _shape_args(args):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    if len(args) == 1 and hasattr(args[0], "_data") and args[0].ndim == 1:
        return tuple(args[0].tolist())
    return args


class TensorMethods(*MIXINS):
    """Mixin with the operators and methods of `Tensor` (see `tensor.py`); more families in `methods/`."""

    __slots__ = ()

    # ---- arithmetic operators -----------------------------------------------------------------------
    __add__ = _binary(AR.Add)
    __radd__ = _reflected(AR.Add)
    __sub__ = _binary(AR.Sub)
    __rsub__ = _reflected(AR.Sub)
    __mul__ = _binary(AR.Mul)
    __rmul__ = _reflected(AR.Mul)
    __truediv__ = _binary(AR.Div)
    __rtruediv__ = _reflected(AR.Div)
    __pow__ = _binary(AR.Pow)
    __rpow__ = _reflected(AR.Pow)
    __floordiv__ = _binary(AR.FloorDivide)
    __rfloordiv__ = _reflected(AR.FloorDivide)
    __mod__ = _binary(AR.Remainder)
    __rmod__ = _reflected(AR.Remainder)
    __and__ = _binary(CP.Bitwise, op="and")
    __rand__ = _reflected(CP.Bitwise, op="and")
    __or__ = _binary(CP.Bitwise, op="or")
    __ror__ = _reflected(CP.Bitwise, op="or")
    __xor__ = _binary(CP.Bitwise, op="xor")
    __rxor__ = _reflected(CP.Bitwise, op="xor")
    eq, ne, lt, le, gt, ge = (_compare(n) for n in ("eq", "ne", "lt", "le", "gt", "ge"))
    __eq__, __ne__, __lt__, __le__, __gt__, __ge__ = eq, ne, lt, le, gt, ge
    greater, less, greater_equal, less_equal, not_equal = gt, lt, ge, le, ne

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

    def __matmul__(self, other):
        if not hasattr(other, "_data"):
            return NotImplemented
        return M.matmul(self, other)

    def __rmatmul__(self, other):
        if not hasattr(other, "_data"):
            return NotImplemented
        return M.matmul(other, self)

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
            from . import dtypes as _dt

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
        return AR.Div.apply(1.0, self)

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
        return UM.Log.apply(self) / float(np.log(2.0))

    def log10(self):
        return UM.Log.apply(self) / float(np.log(10.0))

    def expm1(self):
        return UM.Exp.apply(self) - 1

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
        from .tensor import _wrap

        return _wrap(self._xp.isclose(self._data, other._data, rtol, atol, equal_nan))

    def equal(self, other) -> bool:
        return self.shape == other.shape and bool((self._data == other._data).all())

    # ---- reductions -------------------------------------------------------------------------------
    def sum(self, dim=None, keepdim=False, *, dtype=None):
        """Sum of all elements, or over `dim` (an int or tuple)."""
        if dim is None and not keepdim:
            return R.SumAll.apply(self, None, False, dtype)
        return R.Sum.apply(self, dim, keepdim, dtype)

    def mean(self, dim=None, keepdim=False, *, dtype=None):
        """Mean of all elements, or over `dim`."""
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

    # ---- matrix products ----------------------------------------------------------------------------
    def matmul(self, other):
        return M.matmul(self, other)

    def mm(self, other):
        return M.mm(self, other)

    def bmm(self, other):
        return M.bmm(self, other)

    def mv(self, vec):
        return M.mv(self, vec)

    def dot(self, other):
        return M.dot(self, other)

    # ---- shape and views -----------------------------------------------------------------------------
    def view(self, *shape):
        """Same data, new shape, without copying (fails if the strides do not allow it)."""
        return V.View.apply(self, _shape_args(shape))

    def view_as(self, other):
        return V.View.apply(self, other.shape)

    def reshape(self, *shape):
        """New shape: a view when possible, otherwise a copy."""
        shape = _shape_args(shape)
        if self._data.flags.c_contiguous:
            return V.View.apply(self, shape)
        try:
            return V.ReshapeAlias.apply(self, shape)  # the strides may still allow a view
        except RuntimeError:
            return V.UnsafeView.apply(self.contiguous(), shape)  # a copy: CloneBackward0 -> UnsafeViewBackward0

    def reshape_as(self, other):
        return self.reshape(other.shape)

    def flatten(self, start_dim=0, end_dim=-1):
        """Merge dims start_dim..end_dim into one."""
        from .ops._util import normalize_dim

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
        from .ops._util import normalize_dim

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
        return V.Permute.apply(self, _shape_args(dims))

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
        return V.Expand.apply(self, _shape_args(sizes))

    def expand_as(self, other):
        return V.Expand.apply(self, other.shape)

    def repeat(self, *sizes):
        """Tile the tensor `sizes` times along each dimension (a copy)."""
        return RA.Repeat.apply(self, _shape_args(sizes))

    def flip(self, *dims):
        """Reverse the order of elements along `dims` (a copy)."""
        return RA.Flip.apply(self, _shape_args(dims))

    def narrow(self, dim, start, length):
        """The slice start:start+length along `dim` (a view)."""
        return IX.Narrow.apply(self, dim, int(start), int(length))

    def split(self, split_size_or_sections, dim=0):
        """Split into chunks of a given size (the last may be smaller), or of the listed sizes."""
        from .ops._util import normalize_dim

        size = self._data.shape[normalize_dim(dim, self.ndim)]
        if isinstance(split_size_or_sections, int):
            step = split_size_or_sections
            if step <= 0 and size:
                raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
            sizes = [min(step, size - i) for i in range(0, size, step)] if step else [0]
        else:
            sizes = list(split_size_or_sections)
        return CT.Split.apply(self, sizes, dim, isinstance(split_size_or_sections, int))

    def chunk(self, chunks, dim=0):
        """Split into `chunks` nearly equal pieces (like `torch.chunk`)."""
        from .ops._util import normalize_dim

        if chunks <= 0:
            raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
        size = self._data.shape[normalize_dim(dim, self.ndim)]
        step = -(-size // chunks)
        return self.split(step, dim) if step else self.split([0] * 1, dim)

    def unbind(self, dim=0):
        """The slices along `dim`, as a tuple of views."""
        return CT.Unbind.apply(self, dim)

    def gather(self, dim, index):
        """out[i][j] = self[index[i][j]][j] (for dim=0), etc."""
        return GS.Gather.apply(self, dim, index)

    def scatter(self, dim, index, src=None, *, value=None, reduce=None):
        """A copy of self with `src` (or `value`) written at `index` along `dim`."""
        src = value if src is None else src
        if reduce not in (None, "add"):
            raise NotImplementedError("scatter supports reduce=None or 'add'")
        return GS.Scatter.apply(self, dim, index, src, reduce)

    def scatter_add(self, dim, index, src):
        """A copy of self with `src` added at `index` along `dim` (repeated indices accumulate)."""
        return GS.ScatterAdd.apply(self, dim, index, src, "add")

    def index_select(self, dim, index):
        return IX.IndexSelect.apply(self, dim, index)

    def masked_fill(self, mask, value):
        """A copy with `value` where `mask` is True."""
        return IX.MaskedFill.apply(self, mask, value)

    def tril(self, diagonal=0):
        return IX.Triangle.apply(self, diagonal, False)

    def triu(self, diagonal=0):
        return IX.Triu.apply(self, diagonal, True)

    def contiguous(self, memory_format=None):
        """This tensor if already contiguous, else a contiguous copy."""
        if self._data.flags.c_contiguous:
            return self
        return V.Clone.apply(self)

    def clone(self, *, memory_format=None):
        """A copy with its own storage (recorded in the graph)."""
        return V.Clone.apply(self)

    def __getitem__(self, idx):
        from .tensor import Tensor

        if type(idx) is int:
            return IX.SelectItem.apply(self, (idx,), True)
        nidx, basic = IX.normalize_index(idx, Tensor)
        if basic:
            op = IX.SelectItem if all(type(i) is int for i in nidx) else IX.GetItem
            return op.apply(self, nidx, True)
        return IX.AdvancedGetItem.apply(self, nidx, False)

    def __setitem__(self, idx, value):
        from .tensor import Tensor

        nidx, basic = IX.normalize_index(idx, Tensor)
        value = _operand(value) if not isinstance(value, Tensor) else value
        if value is None:
            raise TypeError("can't assign a value of this type to a tensor")
        if isinstance(value, Tensor) and value._data.size and value.dtype is not self.dtype:
            value = value.to(self.dtype)
        if basic:
            IX._check_bounds(self._data.shape, nidx)
        else:
            IX.check_index_arrays(self._data, nidx)
        self._check_inplace(through_view=True)
        self._inplace(IX.CopySlices.apply, value, nidx, basic)

    # ---- in-place versions ----------------------------------------------------------------------
    def add_(self, other, *, alpha=1):
        return self._inplace(AR.Add.apply, _operand(other), alpha=alpha)

    def sub_(self, other, *, alpha=1):
        return self._inplace(AR.Sub.apply, _operand(other), alpha=alpha)

    def mul_(self, other):
        return self._inplace(AR.Mul.apply, _operand(other))

    def div_(self, other):
        return self._inplace(AR.Div.apply, _operand(other))

    def pow_(self, exponent):
        return self._inplace(AR.Pow.apply, _operand(exponent))

    def neg_(self):
        return self._inplace(UM.Neg.apply)

    def abs_(self):
        return self._inplace(UM.Abs.apply)

    def exp_(self):
        return self._inplace(UM.Exp.apply)

    def log_(self):
        return self._inplace(UM.Log.apply)

    def sqrt_(self):
        return self._inplace(UM.Sqrt.apply)

    def relu_(self):
        return self._inplace(UM.Relu.apply)

    def sigmoid_(self):
        return self._inplace(UM.Sigmoid.apply)

    def tanh_(self):
        return self._inplace(UM.Tanh.apply)

    def clamp_(self, min=None, max=None):
        return self._inplace(lambda t: t.clamp(min, max))

    clip_ = clamp_

    def masked_fill_(self, mask, value):
        return self._inplace(IX.MaskedFill.apply, mask, value)

    def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
        return self._inplace(lambda t: t.scatter(dim, index, src, value=value, reduce=reduce))

    def scatter_add_(self, dim, index, src):
        return self._inplace(lambda t: t.scatter_add(dim, index, src))

    def copy_(self, src, non_blocking=False):
        """Copy `src`'s values (broadcast and converted) into this tensor."""
        from .tensor import Tensor

        if not isinstance(src, Tensor):
            from .factories import tensor

            src = tensor(src)

        return self._inplace(IX.Overwrite.apply, src.to(dtype=self.dtype, device=self.device), "CopyBackwards")

    def fill_(self, value):
        """Set every element to `value`."""
        return self._inplace(IX.Overwrite.apply, value, "FillBackward0")

    def zero_(self):
        """Set every element to zero."""
        return self._inplace(IX.Overwrite.apply, 0, "ZeroBackward0")

    # random in-place initialisers (used by tc.nn.init under no_grad)
    def uniform_(self, a=0.0, b=1.0, *, generator=None):
        """Fill with samples from U(a, b)."""
        from .factories import sampler

        return self._random_fill(sampler(generator, self._device).uniform(a, b, self._data.shape))

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        """Fill with samples from N(mean, std^2)."""
        from .factories import sampler

        return self._random_fill(sampler(generator, self._device).normal(mean, std, self._data.shape))

    def bernoulli_(self, p=0.5, *, generator=None):
        """Fill with 0/1 samples that are 1 with probability `p`."""
        from .factories import sampler

        return self._random_fill(sampler(generator, self._device).random(self._data.shape) < p)

    def exponential_(self, lambd=1.0, *, generator=None):
        from .factories import sampler

        return self._random_fill(sampler(generator, self._device).exponential(1.0 / lambd, self._data.shape))

    def random_(self, low=0, high=None, *, generator=None):
        from .factories import sampler

        if high is None:
            low, high = 0, low if low else 2 ** 24
        return self._random_fill(sampler(generator, self._device).integers(low, high, self._data.shape))

    def bernoulli(self, p=None, *, generator=None):
        """0/1 samples, 1 with the probability in each element (or `p`), like `torch.bernoulli(self)`."""
        from .factories import bernoulli

        return bernoulli(self, p, generator=generator)

    def multinomial(self, num_samples, replacement=False, *, generator=None):
        """Indices drawn from the row-wise (unnormalised) probabilities, like `torch.multinomial(self, ...)`."""
        from .factories import multinomial

        return multinomial(self, num_samples, replacement, generator=generator)

    def _random_fill(self, values):
        from .tensor import _wrap

        self._check_inplace()
        self._write(_wrap(self._xp.asarray(values).astype(self.dtype.np_dtype, copy=False)))
        return self



def _inplace_variant(name, zero_grad=False):
    """`Tensor.<name>_`: the out-of-place method `name` written into this tensor, like PyTorch's in-place twin.

    With `zero_grad` (comparisons, whose bool result has no gradient) the written values carry a zero gradient,
    as PyTorch's `GeBackward0`/... give; the logical ops keep the tensor's old history, as PyTorch's do."""

    def method(self, *args, **kwargs):
        def compute(t):
            out = getattr(t, name)(*args, **kwargs)
            if zero_grad and t.requires_grad:
                out = t.mul(0).add(out.to(t.dtype))
            return out

        return self._inplace(compute)

    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"In-place `{name}`: writes `self.{name}(...)` into this tensor and returns it."
    return method


_PLAIN_INPLACE = ("absolute bitwise_and bitwise_not bitwise_or bitwise_xor ceil clamp_max clamp_min cos cumsum divide "
                  "expm1 floor floor_divide log10 log1p log2 multiply negative reciprocal remainder round rsqrt sign "
                  "sin square subtract tril triu true_divide trunc").split()
_PLAIN_INPLACE += "logical_and logical_not logical_or logical_xor".split()
_COMPARISON_INPLACE = "eq ne lt le gt ge greater greater_equal less less_equal not_equal".split()
for _name in _PLAIN_INPLACE + _COMPARISON_INPLACE:
    if not hasattr(TensorMethods, _name + "_"):
        setattr(TensorMethods, _name + "_", _inplace_variant(_name, zero_grad=_name in _COMPARISON_INPLACE))
