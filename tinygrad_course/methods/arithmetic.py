"""Arithmetic, unary math, comparisons and logic as Tensor methods and operators (`a + b`, `x.exp()`,
`a < b`), each a thin binding to an op in `ops/elementwise.py`."""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..ops import arithmetic as AR
from ..ops import comparison as CP
from ..ops import unary_math as UM
from ..ops._util import operand as _operand
from ..tensor import Tensor, _wrap

_PLAIN = frozenset((float, int, bool))  # operands used as they are (anything else goes through `operand`)


def _binary(fn_op, **kw):
    def method(self, other):
        if type(other) not in _PLAIN and not isinstance(other, Tensor):
            other = _operand(other)
            if other is None:
                return NotImplemented
        return fn_op.apply(self, other, **kw)

    return method


def _reflected(fn_op, **kw):
    def method(self, other):
        if type(other) not in _PLAIN and not isinstance(other, Tensor):
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


class ArithmeticMethods:
    """Operators and element-wise methods of `Tensor`."""

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
        return _wrap(self._xp.isclose(self._data, other._data, rtol, atol, equal_nan))

    def equal(self, other) -> bool:
        return self.shape == other.shape and bool((self._data == other._data).all())
