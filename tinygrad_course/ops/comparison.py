"""Comparisons, logic and selection by value: eq/ne/lt/le/gt/ge, logical and bitwise and/or/xor/not,
isnan/isinf/isfinite, `where` and `clamp`. Comparisons and logic give bool (or integer) results and are not
differentiable; `where` and `clamp` pass the gradient through where their input was chosen.
"""
from __future__ import annotations

from .. import dtypes as _dt
from ..autograd.engine import Op
from ..tensor_base import _wrap
from ._util import as_array, check_same_device, operand
from .arithmetic import binary_operands


class Clamp(Op):
    node_name = "ClampBackward1"

    @staticmethod
    def forward(ctx, x, min=None, max=None):
        if min is None and max is None:
            raise RuntimeError("tc.clamp: At least one of 'min' or 'max' must not be None")
        ctx.save_for_backward(x)
        ctx.lo, ctx.hi = min, max
        rd = _dt.result_type(x, *(v for v in (min, max) if v is not None))
        data = as_array(x, rd, x._xp)
        if min is not None:
            data = x._xp.maximum(data, as_array(min, rd, x._xp))
        if max is not None:
            data = x._xp.minimum(data, as_array(max, rd, x._xp))
        return data.astype(rd.np_dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        mask = None
        if ctx.lo is not None:
            mask = x >= ctx.lo
        if ctx.hi is not None:
            m = x <= ctx.hi
            mask = m if mask is None else mask & m
        return g * mask


class Where(Op):
    node_name = "WhereBackward0"

    @staticmethod
    def forward(ctx, cond, a, b):
        xa, xb, rd = binary_operands(a, b)
        xp = cond._xp
        if cond.dtype is not _dt.bool_:
            raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype {cond.dtype.name.capitalize()}")
        for t in (a, b):
            if getattr(t, "_data", None) is not None:
                check_same_device(cond, t)
        ctx.save_for_backward(cond)
        return xp.where(cond._data, xa, xb).astype(rd.np_dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        (cond,) = ctx.saved_tensors
        return None, g * cond, g * ~cond


# ---- non-differentiable: comparisons and logic ----------------------------------------------------

class Compare(Op):
    """Element-wise comparison returning a bool tensor (never requires grad)."""

    node_name = "CompareBackward"
    differentiable = False
    _UFUNCS = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater",
               "ge": "greater_equal", "and": "logical_and", "or": "logical_or", "xor": "logical_xor"}

    @staticmethod
    def forward(ctx, a, b, op="eq"):
        xa, xb, rd = binary_operands(a, b)
        xp = (a if getattr(a, "_data", None) is not None else b)._xp
        return getattr(xp, Compare._UFUNCS[op])(xa, xb)


class Bitwise(Op):
    """`&`, `|`, `^` on bool and integer tensors."""

    node_name = "BitwiseBackward"
    differentiable = False

    @staticmethod
    def forward(ctx, a, b, op="and"):
        xa, xb, rd = binary_operands(a, b)
        if rd.category == 2:
            raise RuntimeError(f'"bitwise_{op}_cpu" not implemented for \'{rd.name.capitalize()}\'')
        xp = (a if getattr(a, "_data", None) is not None else b)._xp
        return getattr(xp, f"bitwise_{op}")(xa, xb)


class Unary(Op):
    """Non-differentiable unary ops: logical_not, bitwise_not, isnan, isinf, isfinite, floor, ceil, round, trunc."""

    node_name = "UnaryBackward"
    differentiable = False

    @staticmethod
    def forward(ctx, x, op="logical_not"):
        xp = x._xp
        if op == "bitwise_not":
            if x.dtype.category == 2:
                raise RuntimeError("bitwise_not_cpu not implemented for 'Float'")
            return xp.invert(x._data)
        return getattr(xp, op)(x._data)


def where(condition, input=None, other=None):
    """Elements of `input` where `condition` is True, else of `other` (broadcasting), like `torch.where`;
    `where(condition)` alone gives the indices of the True elements per dimension."""
    if input is None and other is None:
        return tuple(_wrap(a) for a in condition._xp.nonzero(condition._data))
    return Where.apply(condition, operand(input), operand(other))
