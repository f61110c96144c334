"""One-argument math: neg, abs, sign, exp, log, log1p, sqrt, rsqrt, sin, cos, tanh, sigmoid, relu, and the
rounding functions floor, ceil, round, trunc (gradient zero, as in PyTorch). Integer inputs of the float
functions are computed in the default float dtype.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..autograd.engine import Op



def _fused(g, y, formula):
    """`formula(g, y)` on the arrays of the gradient and the saved output, as one `fused_backward` (the same
    arithmetic as the ops of `backward`, without an op per step), when both share a float32/float64 dtype
    (lower precisions round after every op, which the ops reproduce); else NotImplemented."""
    if g.dtype is not y.dtype or y.dtype.name not in ("float32", "float64"):
        return NotImplemented
    return formula(g._data, y._data)


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

    @staticmethod
    def fused_backward(ctx, g):
        return _fused(g, ctx.saved_output, lambda g, y: g * y)


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


class Expm1(Op):
    """exp(x) - 1, exact for tiny x (computed as one function, not as a difference)."""

    node_name = "Expm1Backward0"
    save_output = True

    @staticmethod
    def forward(ctx, x):
        with np.errstate(over="ignore"):
            return x._xp.expm1(_float_array(x))

    @staticmethod
    def backward(ctx, g):
        return g * (ctx.saved_output + 1)


class Log2(Op):
    node_name = "Log2Backward0"
    scale = float(np.log(2.0))
    compute = "log2"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            return getattr(x._xp, ctx._fn.compute)(_float_array(x))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g / (x * ctx._fn.scale)


class Log10(Log2):
    node_name = "Log10Backward0"
    scale = float(np.log(10.0))
    compute = "log10"


class Reciprocal(Op):
    node_name = "ReciprocalBackward0"
    save_output = True

    @staticmethod
    def forward(ctx, x):
        with np.errstate(divide="ignore", invalid="ignore"):
            return x._xp.reciprocal(_float_array(x))

    @staticmethod
    def backward(ctx, g):
        y = ctx.saved_output
        return -g * (y * y)


class Sqrt(Op):
    node_name = "SqrtBackward0"
    save_output = True
    component = "Pow"  # build mode: a learner's Pow computes sqrt(x) as x ** 0.5

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

    @staticmethod
    def fused_backward(ctx, g):
        return _fused(g, ctx.saved_output, lambda g, y: g * (1 - y * y))


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

    @staticmethod
    def fused_backward(ctx, g):
        return _fused(g, ctx.saved_output, lambda g, y: g * y * (1 - y))


class Relu(Op):
    node_name = "ReluBackward0"
    save_output = True

    @staticmethod
    def forward(ctx, x):
        if x.dtype is _dt.bool_:
            raise RuntimeError("Boolean inputs not supported for relu")
        a = x._data
        if x._xp is np and a.dtype.kind == "f" and a.flags.c_contiguous:
            # NumPy's maximum against a scalar misses its vectorised loop (about 3x slower on large arrays
            # than against an array): compare with a fresh zero array and write the result into it
            out = np.zeros(a.shape, dtype=a.dtype)
            return np.maximum(a, out, out=out)
        return x._xp.maximum(a, 0).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        return g * (ctx.saved_output > 0)

    @staticmethod
    def fused_backward(ctx, g):
        return _fused(g, ctx.saved_output, lambda g, y: g * (y > 0))


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
