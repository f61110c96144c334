"""Two- and three-argument element-wise functions with broadcasting: atan2, hypot, logaddexp/logaddexp2,
xlogy, fmod, copysign, fmax/fmin, heaviside, lerp, addcmul/addcdiv.

Each differentiable op computes on backend arrays and writes its backward with framework ops (so double
backward works); node names are PyTorch's (`Atan2Backward0`, `XlogyBackward1`, ...).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..autograd.engine import Op
from ..factories import full
from ..dtypes import type_name
from ._util import as_array
from .arithmetic import binary_operands


def _tensor_or_full(v, like):
    """Saved operand `v`, or a 0-d tensor holding it when it was a Python number."""
    if hasattr(v, "_data"):
        return v

    return full((), v, dtype=like.dtype, device=like.device)


class Binary(Op):
    """Base of two-argument functions with broadcasting; subclasses define `compute(xp, a, b)` and
    `derivatives(g, a, b, out)` (returning both gradients before reduction to the input shapes).
    `float_only`: integer inputs give the default float dtype; `int_name`: PyTorch's name in its error for
    integer-only inputs (None: integers allowed)."""

    float_only = True
    int_name = None
    bool_name = None  # PyTorch's name in its error for bool inputs (None: bools allowed)
    uses_output = False

    @staticmethod
    def forward(ctx, a, b):
        fn = ctx._fn
        if fn.int_name and all(getattr(v, "dtype", _dt.int64).category < 2 for v in (a, b)):
            rd = _dt.result_type(a, b)
            raise NotImplementedError(f"\"{fn.int_name}_cpu\" not implemented for '{type_name(rd)}'")
        xa, xb, rd = binary_operands(a, b, float_only=fn.float_only)
        if rd is _dt.bool_ and fn.int_name is None and not fn.float_only and fn.bool_name:
            raise NotImplementedError(f"\"{fn.bool_name}_cpu\" not implemented for 'Bool'")
        ctx.save_for_backward(a, b)
        ctx.save_output = fn.uses_output and bool(ctx.needs_input_grad)
        tensor_a, tensor_b = hasattr(a, "_data"), hasattr(b, "_data")
        xp = (a if tensor_a else b)._xp
        if rd.itemsize == 2 and rd.category == 2:
            return fn.compute(xp, xa.astype(np.float32) if tensor_a else np.float32(xa),
                              xb.astype(np.float32) if tensor_b else np.float32(xb)).astype(rd.np_dtype)
        return xp.asarray(fn.compute(xp, xa, xb)).astype(rd.np_dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        out = ctx.saved_output if ctx._fn.uses_output else None
        return ctx._fn.derivatives(ctx, g, _tensor_or_full(a, g), _tensor_or_full(b, g), out)


class Atan2(Binary):
    node_name = "Atan2Backward0"
    compute = staticmethod(lambda xp, a, b: xp.arctan2(a, b))

    @staticmethod
    def derivatives(ctx, g, a, b, out):
        r = g / (a * a + b * b)
        return r * b, r * -a


class Hypot(Binary):
    node_name = "HypotBackward0"
    int_name = "hypot"
    uses_output = True
    compute = staticmethod(lambda xp, a, b: xp.hypot(a, b))

    @staticmethod
    def derivatives(ctx, g, a, b, out):
        return g * a / out, g * b / out


class Logaddexp(Binary):
    node_name = "LogaddexpBackward0"
    int_name = "logaddexp"
    compute = staticmethod(lambda xp, a, b: xp.logaddexp(a, b))

    @staticmethod
    def derivatives(ctx, g, a, b, out):
        return g / ((b - a).exp() + 1), g / ((a - b).exp() + 1)


class Logaddexp2(Binary):
    node_name = "Logaddexp2Backward0"
    int_name = "logaddexp2"
    compute = staticmethod(lambda xp, a, b: xp.logaddexp2(a, b))

    @staticmethod
    def derivatives(ctx, g, a, b, out):
        return g / ((b - a).exp2() + 1), g / ((a - b).exp2() + 1)


def _xlogy(xp, x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return xp.where((x == 0) & ~xp.isnan(y), 0, x * xp.log(y))


class Xlogy(Binary):
    """x * log(y), 0 where x == 0 (unless y is NaN). Node 0: two tensors, 1: number x, 2: number y."""

    node_name = "XlogyBackward0"
    compute = staticmethod(_xlogy)

    @staticmethod
    def derivatives(ctx, g, x, y, out):
        gx = (g * y.log()).masked_fill(((g == 0) & ~y.isnan()) | ((x == 0) & (y <= 0)), 0.0)
        return gx, g * x / y


class Fmod(Binary):
    """C's fmod: the remainder with the sign of the dividend. Node 0: number divisor, 1: tensor divisor."""

    node_name = "FmodBackward1"
    float_only = False
    bool_name = "fmod"

    @staticmethod
    def compute(xp, a, b):
        if np.dtype(getattr(b, "dtype", type(b))).kind in "iub" and bool((xp.asarray(b) == 0).any()):
            raise RuntimeError("ZeroDivisionError")
        with np.errstate(divide="ignore", invalid="ignore"):
            return xp.fmod(a, b)

    @staticmethod
    def derivatives(ctx, g, a, b, out):
        return g, -g * (a / b).trunc()


class Copysign(Binary):
    """|a| with the sign of b. Node 0: tensor b, 1: number b."""

    node_name = "CopysignBackward0"
    uses_output = True
    compute = staticmethod(lambda xp, a, b: xp.copysign(a, b))

    @staticmethod
    def derivatives(ctx, g, a, b, out):
        return g * (out / a).masked_fill(a == 0, 0.0), g * 0


class Fmax(Binary):
    """Element-wise maximum that ignores NaN (NaN only where both are NaN); ties send the gradient to a."""

    node_name = "FmaxBackward0"
    float_only = False
    compute = staticmethod(lambda xp, a, b: xp.fmax(a, b))
    a_wins = staticmethod(lambda a, b: a >= b)  # where a is the result (before NaN handling)

    @staticmethod
    def derivatives(ctx, g, a, b, out):
        a_wins = ctx._fn.a_wins(a, b) | b.isnan()
        return g * a_wins, g * ~a_wins


class Fmin(Fmax):
    """Element-wise minimum that ignores NaN; the mirror of Fmax."""

    node_name = "FminBackward0"
    compute = staticmethod(lambda xp, a, b: xp.fmin(a, b))
    a_wins = staticmethod(lambda a, b: a <= b)


class Heaviside(Binary):
    """0 where x < 0, `values` where x == 0, 1 where x > 0 (PyTorch defines no derivative)."""

    node_name = "NotImplemented"
    float_only = False

    @staticmethod
    def forward(ctx, x, values):
        if x.dtype is not values.dtype:
            raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
        return Binary.forward(ctx, x, values)

    @staticmethod
    def compute(xp, a, b):
        return xp.where(a == 0, b, a > 0)

    @staticmethod
    def derivatives(ctx, g, a, b, out):
        raise RuntimeError("the derivative for 'heaviside' is not implemented.")


# PyTorch names a few nodes by overload (which argument is a Python number).
Xlogy1 = type("Xlogy1", (Xlogy,), {"node_name": "XlogyBackward1"})
Xlogy2 = type("Xlogy2", (Xlogy,), {"node_name": "XlogyBackward2"})
Fmod0 = type("Fmod0", (Fmod,), {"node_name": "FmodBackward0"})
Copysign1 = type("Copysign1", (Copysign,), {"node_name": "CopysignBackward1"})


# ---- three-argument functions -------------------------------------------------------------------------

_C_NAMES = {"float32": "float", "float64": "double", "float16": "half", "int64": "long", "int32": "int"}


def _three_operands(a, b, c):
    rd = _dt.result_type(a, b, c)
    xp = next(v._xp for v in (a, b, c) if hasattr(v, "_data"))
    return [as_array(v, rd, xp) for v in (a, b, c)], rd, xp


class Lerp(Op):
    """start + weight * (end - start). Node 0: number weight, 1: tensor weight."""

    node_name = "LerpBackward0"

    @staticmethod
    def forward(ctx, start, end, weight):
        for name, v in (("end", end), ("weight", weight)):
            if hasattr(v, "_data") and v.dtype is not start.dtype:
                raise RuntimeError(f"expected dtype {_C_NAMES.get(start.dtype.name, start.dtype.name)} for `{name}` "
                                   f"but got dtype {_C_NAMES.get(v.dtype.name, v.dtype.name)}")
        if start.dtype.category != 2:
            raise NotImplementedError(f"\"lerp_kernel_scalar\" not implemented for '{type_name(start.dtype)}'")
        (s, e, w), rd, xp = _three_operands(start, end, weight)
        ctx.save_for_backward(start, end, weight)
        if not hasattr(w, "shape"):  # a Python number: pick the formula here
            out = s + w * (e - s) if abs(w) < 0.5 else e - (e - s) * (1 - w)
        else:
            out = xp.where(xp.abs(w) < 0.5, s + w * (e - s), e - (e - s) * (1 - w))
        return out.astype(rd.np_dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        start, end, weight = ctx.saved_tensors
        return g * (1 - weight), g * weight, g * (end - start)


Lerp1 = type("Lerp1", (Lerp,), {"node_name": "LerpBackward1"})


class Addcmul(Op):
    """input + value * tensor1 * tensor2."""

    node_name = "AddcmulBackward0"
    divide = False

    @staticmethod
    def forward(ctx, x, t1, t2, value=1):
        if ctx._fn.divide and t1.dtype.category < 2 and t2.dtype.category < 2:
            raise RuntimeError(
                "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will "
                "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented "
                "as (input + value * tc.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
                "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the "
                "latter implementation: (input + value * tensor1 / tensor2), for all dtypes."
            )
        (a, b, c), rd, xp = _three_operands(x, t1, t2)
        ctx.value = value
        ctx.save_for_backward(t1, t2)
        prod = b / c if ctx._fn.divide else b * c
        return (a + value * prod if value != 1 else a + prod).astype(rd.np_dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        t1, t2 = ctx.saved_tensors
        need, v = ctx.needs_input_grad, ctx.value
        if ctx._fn.divide:
            g1 = g * v / t2 if need[1] else None
            g2 = -g * v * t1 / (t2 * t2) if need[2] else None
        else:
            g1 = g * v * t2 if need[1] else None
            g2 = g * v * t1 if need[2] else None
        return g, g1, g2


class Addcdiv(Addcmul):
    """input + value * tensor1 / tensor2."""

    node_name = "AddcdivBackward0"
    divide = True
