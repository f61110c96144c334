"""Element-wise operations with broadcasting: arithmetic, unary math, comparisons, `where`, `clamp`.

Every binary op reduces its gradients back to each input's shape with `sum_to_shape`
(the broadcast dimensions are summed), and casts them to the input's dtype.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Op
from ..autograd.sum_to_shape import sum_to_shape
from ..tensor import _wrap
from ._util import as_array, binary_operands, check_same_device, operand


def _grad_like(g, shape, dtype):
    """`g` reduced to `shape` and cast to `dtype` (the input it is the gradient of)."""
    if g._data.shape != shape:
        g = sum_to_shape(g, shape)
    if g.dtype is not dtype:
        g = g.to(dtype)
    return g


def _as_dtype(out, rd):
    """`out` in result dtype `rd` (NumPy computes bfloat16 with a Python float in float32)."""
    return out if out.dtype == rd.np_dtype else out.astype(rd.np_dtype)


def _meta(x):
    return (x._data.shape, x.dtype) if getattr(x, "_data", None) is not None else None


def _save_operands(ctx, a, b):
    """Save a (for b's gradient) and b (for a's gradient) when they are tensors and needed."""
    need = ctx.needs_input_grad
    if need:  # empty when nothing is recorded
        ctx.save_for_backward(a if need[1] and ctx.ma is not None else None,
                              b if need[0] and ctx.mb is not None else None)


# ---- arithmetic ----------------------------------------------------------------------------------

class Add(Op):
    node_name = "AddBackward0"

    @staticmethod
    def forward(ctx, a, b, alpha=1):
        xa, xb, rd = binary_operands(a, b)
        ctx.ma, ctx.mb, ctx.alpha = _meta(a), _meta(b), alpha
        return _as_dtype(xa + xb if alpha == 1 else xa + xb * alpha, rd)

    @staticmethod
    def backward(ctx, g):
        ga = _grad_like(g, *ctx.ma) if ctx.needs_input_grad[0] else None
        gb = None
        if ctx.needs_input_grad[1]:
            gb = _grad_like(g if ctx.alpha == 1 else g * ctx.alpha, *ctx.mb)
        return ga, gb


class Sub(Op):
    node_name = "SubBackward0"

    @staticmethod
    def forward(ctx, a, b, alpha=1):
        xa, xb, rd = binary_operands(a, b)
        bools = [getattr(t, "dtype", None) is _dt.bool_ for t in (a, b)]
        if all(bools):
            raise RuntimeError(
                "Subtraction, the `-` operator, with two bool tensors is not supported. "
                "Use the `^` or `logical_xor()` operator instead."
            )
        if any(bools):
            raise RuntimeError(
                "Subtraction, the `-` operator, with a bool tensor is not supported. "
                "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
            )
        ctx.ma, ctx.mb, ctx.alpha = _meta(a), _meta(b), alpha
        return _as_dtype(xa - xb if alpha == 1 else xa - xb * alpha, rd)

    @staticmethod
    def backward(ctx, g):
        ga = _grad_like(g, *ctx.ma) if ctx.needs_input_grad[0] else None
        gb = _grad_like(-g if ctx.alpha == 1 else g * (-ctx.alpha), *ctx.mb) if ctx.needs_input_grad[1] else None
        return ga, gb


class Mul(Op):
    node_name = "MulBackward0"

    @staticmethod
    def forward(ctx, a, b):
        xa, xb, rd = binary_operands(a, b)
        ctx.ma, ctx.mb = _meta(a), _meta(b)
        _save_operands(ctx, a, b)
        ctx.a_scalar = a if ctx.ma is None else None
        ctx.b_scalar = b if ctx.mb is None else None
        return _as_dtype(xa * xb, rd)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = _grad_like(g * (b if b is not None else ctx.b_scalar), *ctx.ma)
        if ctx.needs_input_grad[1]:
            gb = _grad_like(g * (a if a is not None else ctx.a_scalar), *ctx.mb)
        return ga, gb


class Div(Op):
    node_name = "DivBackward0"

    @staticmethod
    def forward(ctx, a, b):
        xa, xb, rd = binary_operands(a, b, float_only=True)
        ctx.ma, ctx.mb = _meta(a), _meta(b)
        need = ctx.needs_input_grad
        if need:  # b's gradient needs a and b; a's needs b
            ctx.save_for_backward(a if need[1] and ctx.ma is not None else None,
                                  b if ctx.mb is not None else None)
        ctx.a_scalar = a if ctx.ma is None else None
        ctx.b_scalar = b if ctx.mb is None else None
        with np.errstate(divide="ignore", invalid="ignore"):
            return _as_dtype(xa / xb, rd)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        b_val = b if b is not None else ctx.b_scalar
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = _grad_like(g / b_val, *ctx.ma)
        if ctx.needs_input_grad[1]:
            a_val = a if a is not None else ctx.a_scalar
            gb = _grad_like(-g * a_val / (b_val * b_val), *ctx.mb)
        return ga, gb


class Pow(Op):
    """a ** b. PyTorch names the node by overload: PowBackward0 (tensor ** number),
    PowBackward1 (tensor ** tensor), PowBackward2 (number ** tensor)."""

    node_name = "PowBackward0"

    @staticmethod
    def forward(ctx, a, b):
        xa, xb, rd = binary_operands(a, b)
        if ctx.needs_input_grad and _meta(b) is not None:
            ctx.__class__ = _POW_NODES[_meta(a) is not None]
        if rd.category < 2 and ctx is not None and _meta(b) is None and xb < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        if rd.category < 2 and hasattr(xb, "shape") and bool((xb < 0).any()):
            return _integer_pow(a._xp if _meta(a) is not None else b._xp, xa, xb, rd)
        ctx.ma, ctx.mb = _meta(a), _meta(b)
        ctx.a_scalar = a if ctx.ma is None else None
        ctx.b_scalar = b if ctx.mb is None else None
        ctx.save_for_backward(a if ctx.ma is not None else None, b if ctx.mb is not None else None)
        if ctx.mb is not None and ctx.needs_input_grad and ctx.needs_input_grad[1]:
            ctx.save_output = True
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return _as_dtype(xa ** xb, rd)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        ga = gb = None
        if ctx.needs_input_grad[0]:
            if b is None:
                e = ctx.b_scalar
                ga = g * e * a ** (e - 1) if e != 0 else g * 0
            else:
                ga = g * b * a ** (b - 1)
                ga = ga.masked_fill((b == 0) & (a == 0), 0.0) if ga.numel() else ga
            ga = _grad_like(ga, *ctx.ma)
        if ctx.needs_input_grad[1]:
            out = ctx.saved_output
            base = a if a is not None else ctx.a_scalar
            log_base = base.log() if a is not None else np.log(base) if base > 0 else float("nan")
            gb = g * out * log_base
            if a is not None:
                gb = gb.masked_fill((a == 0) & (b >= 0), 0.0)
            elif base == 0:
                gb = gb.masked_fill(b >= 0, 0.0)
            gb = _grad_like(gb, *ctx.mb)
        return ga, gb


def _integer_pow(xp, xa, xb, rd):
    """Integer power where some exponents are negative: 1 and -1 keep a magnitude of 1, others give 0."""
    xa, xb = xp.broadcast_arrays(xp.asarray(xa, dtype=rd.np_dtype), xp.asarray(xb, dtype=rd.np_dtype))
    pos = xa ** xp.abs(xb)
    neg = xp.where(xa == 1, 1, xp.where(xa == -1, xp.where(xb % 2 == 0, 1, -1), 0))
    return xp.where(xb < 0, neg, pos).astype(rd.np_dtype)


_POW_NODES = {True: type("PowBackward1", (Pow._Node,), {}), False: type("PowBackward2", (Pow._Node,), {})}


class Remainder(Op):
    node_name = "RemainderBackward0"

    @staticmethod
    def forward(ctx, a, b):
        xa, xb, rd = binary_operands(a, b)
        ctx.ma, ctx.mb = _meta(a), _meta(b)
        if ctx.mb is not None:
            ctx.save_for_backward(a if ctx.ma is not None else None, b)
        xp = (a if ctx.ma is not None else b)._xp
        with np.errstate(divide="ignore", invalid="ignore"):
            return _as_dtype(xp.remainder(xa, xb), rd)

    @staticmethod
    def backward(ctx, g):
        ga = _grad_like(g, *ctx.ma) if ctx.needs_input_grad[0] else None
        gb = None
        if ctx.needs_input_grad[1]:
            a, b = ctx.saved_tensors
            gb = _grad_like(-g * (a / b).floor(), *ctx.mb)
        return ga, gb


class FloorDivide(Op):
    node_name = "FloorDivideBackward0"
    differentiable = False

    @staticmethod
    def forward(ctx, a, b):
        xa, xb, rd = binary_operands(a, b)
        xp = (a if _meta(a) is not None else b)._xp
        if rd.category != 2 and np.any(xb == 0):
            raise RuntimeError("ZeroDivisionError")
        with np.errstate(divide="ignore", invalid="ignore"):
            return _as_dtype(xp.floor_divide(xa, xb), rd)


class Maximum(Op):
    """Element-wise maximum of two tensors (`Minimum` reuses it with the comparison flipped)."""

    node_name = "MaximumBackward0"
    pick = "maximum"

    @staticmethod
    def wins(a, b):
        return a > b

    @staticmethod
    def forward(ctx, a, b):
        xa, xb, rd = binary_operands(a, b)
        ctx.ma, ctx.mb = _meta(a), _meta(b)
        ctx.save_for_backward(a, b)
        return _as_dtype(getattr(a._xp, ctx._fn.pick)(xa, xb), rd)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return _minmax_grads(ctx, g, ctx._fn.wins(a, b), a == b)


class Minimum(Maximum):
    node_name = "MinimumBackward0"
    pick = "minimum"

    @staticmethod
    def wins(a, b):
        return a < b


def _minmax_grads(ctx, g, a_wins, tie):
    """Gradient of maximum/minimum: to the winner; split in half on ties (PyTorch's rule)."""
    wa = a_wins.to(g.dtype) + tie.to(g.dtype) * 0.5
    ga = _grad_like(g * wa, *ctx.ma) if ctx.needs_input_grad[0] else None
    gb = _grad_like(g * (1 - wa), *ctx.mb) if ctx.needs_input_grad[1] else None
    return ga, gb


# ---- unary math ----------------------------------------------------------------------------------

def _float_array(x):
    """`x`'s array, converted to the default float dtype if it is not floating point."""
    return x._data if x.dtype.category == 2 else x._data.astype(_dt.get_default_dtype().np_dtype)


class Neg(Op):
    node_name = "NegBackward0"

    @staticmethod
    def forward(ctx, x):
        if x.dtype is _dt.bool_:
            raise RuntimeError(
                "Negation, the `-` operator, on a bool tensor is not supported. "
                "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
            )
        return -x._data

    @staticmethod
    def backward(ctx, g):
        return -g


class Abs(Op):
    node_name = "AbsBackward0"

    @staticmethod
    def forward(ctx, x):
        if x.dtype is _dt.bool_:
            raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
        ctx.save_for_backward(x)
        return x._xp.abs(x._data)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.sign()


class Sign(Op):
    node_name = "SignBackward0"

    @staticmethod
    def forward(ctx, x):
        if x.dtype is _dt.bool_:
            return x._data.copy()
        out = x._xp.sign(x._data)
        return x._xp.nan_to_num(out, nan=0.0) if x.dtype.is_floating_point else out  # PyTorch: sign(nan) = 0

    @staticmethod
    def backward(ctx, g):
        return g * 0


class Exp(Op):
    node_name = "ExpBackward0"
    save_output = True

    @staticmethod
    def forward(ctx, x):
        with np.errstate(over="ignore"):
            return x._xp.exp(_float_array(x))

    @staticmethod
    def backward(ctx, g):
        return g * ctx.saved_output


class Log(Op):
    node_name = "LogBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            return x._xp.log(_float_array(x))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g / x


class Log1p(Op):
    node_name = "Log1PBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            return x._xp.log1p(_float_array(x))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g / (x + 1)


class Sqrt(Op):
    node_name = "SqrtBackward0"
    save_output = True

    @staticmethod
    def forward(ctx, x):
        with np.errstate(invalid="ignore"):
            return x._xp.sqrt(_float_array(x))

    @staticmethod
    def backward(ctx, g):
        return g / (2 * ctx.saved_output)


class Rsqrt(Op):
    node_name = "RsqrtBackward0"
    save_output = True

    @staticmethod
    def forward(ctx, x):
        with np.errstate(divide="ignore", invalid="ignore"):
            return 1 / x._xp.sqrt(_float_array(x))

    @staticmethod
    def backward(ctx, g):
        out = ctx.saved_output
        return g * (out * out * out) * -0.5


class Sin(Op):
    node_name = "SinBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x._xp.sin(_float_array(x))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.cos()


class Cos(Op):
    node_name = "CosBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x._xp.cos(_float_array(x))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return -g * x.sin()


class Tanh(Op):
    node_name = "TanhBackward0"
    save_output = True

    @staticmethod
    def forward(ctx, x):
        return x._xp.tanh(_float_array(x))

    @staticmethod
    def backward(ctx, g):
        y = ctx.saved_output
        return g * (1 - y * y)


class Sigmoid(Op):
    node_name = "SigmoidBackward0"
    save_output = True

    @staticmethod
    def forward(ctx, x):
        xp = x._xp
        a = _float_array(x)
        # exp of a non-positive number never overflows: use the form that is stable for each sign.
        e = xp.exp(-xp.abs(a))
        return xp.where(a >= 0, 1 / (1 + e), e / (1 + e)).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        y = ctx.saved_output
        return g * y * (1 - y)


class Relu(Op):
    node_name = "ReluBackward0"
    save_output = True

    @staticmethod
    def forward(ctx, x):
        if x.dtype is _dt.bool_:
            raise RuntimeError("Boolean inputs not supported for relu")
        return x._xp.maximum(x._data, 0).astype(x._data.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        y = ctx.saved_output
        return g * (y > 0)


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
        ctx.ma, ctx.mb = _meta(a), _meta(b)
        return xp.where(cond._data, xa, xb).astype(rd.np_dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        (cond,) = ctx.saved_tensors
        ga = _grad_like(g * cond, *ctx.ma) if ctx.needs_input_grad[1] else None
        gb = _grad_like(g * ~cond, *ctx.mb) if ctx.needs_input_grad[2] else None
        return None, ga, gb


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


class Rounding(Op):
    """floor, ceil, round, trunc: gradient zero everywhere (PyTorch's convention)."""

    node_name = "RoundingBackward0"

    @staticmethod
    def forward(ctx, x, op="floor"):
        ctx.node_op = op
        if x.dtype is _dt.bool_:
            raise NotImplementedError(f"\"{op}_vml_cpu\" not implemented for 'Bool'")
        if x.dtype.category != 2:
            return x._data.copy()
        return getattr(x._xp, {"round": "rint"}.get(op, op))(x._data)

    @staticmethod
    def backward(ctx, g):
        return g * 0


def _set_rounding_names():
    # PyTorch names these nodes FloorBackward0, CeilBackward0, ...; give each its own class.
    made = {}
    for op in ("floor", "ceil", "round", "trunc"):
        made[op] = type(op.capitalize(), (Rounding,), {"node_name": f"{op.capitalize()}Backward0"})
    return made


ROUNDING = _set_rounding_names()


def where(condition, input=None, other=None):
    """Elements of `input` where `condition` is True, else of `other` (broadcasting)."""
    if input is None and other is None:
        return tuple(_wrap(a) for a in condition._xp.nonzero(condition._data))
    return Where.apply(condition, operand(input), operand(other))
