"""Binary arithmetic with broadcasting and PyTorch's type promotion: add, sub, mul, div, pow, remainder,
floor_divide, maximum, minimum.

Every op reduces its gradients back to each input's shape with `sum_to_shape` (the broadcast dimensions
are summed) and casts them to the input's dtype (`_grad_like`).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..autograd.engine import Op
from ..autograd.grad_mode import _state
from ..tensor_base import _wrap
from ._util import binary_operands
from .broadcast_grad import _grad_like, _meta

_ARRAY_GRAD_DTYPES = (_dt.float32, _dt.float64)


def _array_operand(g, v):
    """`v`'s array (or `v` itself, a Python number) when a backward may compute `g (op) v` on arrays
    directly -- no graph is being built (create_graph=False), `g` is float32/float64 and `v` is a Python
    float/int or a tensor of `g`'s dtype on its device -- else None (the recorded op is used)."""
    if _state.enabled or g.dtype not in _ARRAY_GRAD_DTYPES:
        return None
    if type(v) is float or type(v) is int:
        return v
    if getattr(v, "dtype", None) is g.dtype and v._device is g._device:
        return v._data
    return None


def _times(g, v):
    """g * v in a backward."""
    a = _array_operand(g, v)
    return g * v if a is None else _wrap(g._data * a)


def _as_dtype(out, rd):
    """`out` in result dtype `rd` (NumPy computes bfloat16 with a Python float in float32)."""
    return out if out.dtype == rd.np_dtype else out.astype(rd.np_dtype)


def _save_operands(ctx, a, b):
    """Save a (for b's gradient) and b (for a's gradient) when they are tensors and needed."""
    need = ctx.needs_input_grad
    if need:  # empty when nothing is recorded
        ctx.save_for_backward(a if need[1] and ctx.ma is not None else None,
                              b if need[0] and ctx.mb is not None else None)


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
            ga = _grad_like(_times(g, b if b is not None else ctx.b_scalar), *ctx.ma)
        if ctx.needs_input_grad[1]:
            gb = _grad_like(_times(g, a if a is not None else ctx.a_scalar), *ctx.mb)
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
            arr = _array_operand(g, b_val)
            if arr is None:
                ga = _grad_like(g / b_val, *ctx.ma)
            else:
                with np.errstate(divide="ignore", invalid="ignore"):
                    ga = _grad_like(_wrap(g._data / arr), *ctx.ma)
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
