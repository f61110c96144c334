"""More element-wise math: trigonometric/hyperbolic functions, erf family, atan2, hypot, logaddexp, xlogy,
fmod, copysign, fmax/fmin, heaviside, lerp, addcmul/addcdiv, logit, nan_to_num, predicates.

Each differentiable op computes on backend arrays and writes its backward with framework ops (so double
backward works); node names are PyTorch's (`TanBackward0`, `Atan2Backward0`, ...).
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Op
from .elementwise import _float_array, _grad_like, _meta, Sign
from ._util import as_array, binary_operands, type_name

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_LN2 = math.log(2.0)


def _in_float32(fn, xp, a):
    """`fn(xp, a)` computed in float32 for 16-bit floats (as PyTorch does), in `a`'s own dtype otherwise."""
    if a.dtype.itemsize == 2:
        return fn(xp, a.astype(np.float32)).astype(a.dtype)
    return fn(xp, a)


def _erf(xp, a):
    """The error function on an array: the one exact GELU uses (imported late: fused.py imports tensor.py)."""
    from .fused import _erf as erf

    return erf(xp, a)


def special(xp, name, a):
    """`scipy.special.<name>` (or CuPy's `cupyx.scipy.special.<name>`) of array `a`; None if unavailable."""
    try:
        if xp.__name__ == "numpy":
            from scipy import special as sp
        else:
            from cupyx.scipy import special as sp
        fn = getattr(sp, name)
    except (ImportError, AttributeError):
        return None
    return fn(a)


def _erfc(xp, a):
    out = special(xp, "erfc", a)
    return (1.0 - _erf(xp, a)) if out is None else out


def _erfinv(xp, a):
    """Inverse error function: SciPy's/CuPy's, else Giles' approximation refined by Newton steps on erf."""
    out = special(xp, "erfinv", a)
    if out is not None:
        return out
    w = -xp.log((1.0 - a) * (1.0 + a))
    y = xp.where(w < 5.0, _giles_central(xp, w - 2.5), _giles_tail(xp, xp.sqrt(w) - 3.0)) * a
    for _ in range(3):
        y = y - (_erf(xp, y) - a) / (_TWO_OVER_SQRT_PI * xp.exp(-y * y))
    y = xp.where(xp.abs(a) == 1, a * xp.inf, y)
    return xp.where(xp.abs(a) > 1, xp.nan, y).astype(a.dtype, copy=False)


def _giles_central(xp, w):
    p = 2.81022636e-08
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164,
              0.246640727, 1.50140941):
        p = c + p * w
    return p


def _giles_tail(xp, w):
    p = -0.000200214257
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
              1.00167406, 2.83297682):
        p = c + p * w
    return p


# ---- one-argument float functions ---------------------------------------------------------------------

class FloatUnary(Op):
    """Base of one-argument functions with a floating result (integer and bool inputs give the default float
    dtype); subclasses define `compute(xp, a)` on arrays and `derivative(g, x, out)` with framework ops."""

    uses_output = False

    @staticmethod
    def compute(xp, a):
        raise NotImplementedError

    @staticmethod
    def derivative(g, x, out):
        raise NotImplementedError

    @staticmethod
    def forward(ctx, x):
        fn = ctx._fn
        if ctx.needs_input_grad:
            ctx.save_for_backward(x)
            ctx.save_output = fn.uses_output
        return _in_float32(fn.compute, x._xp, _float_array(x))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return ctx._fn.derivative(g, x, ctx.saved_output if ctx._fn.uses_output else None)


def _unary(node, compute, derivative, uses_output=False):
    name = node[:node.index("Backward")]
    return type(name, (FloatUnary,), {"node_name": node, "compute": staticmethod(compute),
                                      "derivative": staticmethod(derivative), "uses_output": uses_output})


def _sinc(xp, a):
    """sin(pi x) / (pi x), 1 at 0 (written out: NumPy's sinc is a Python function, CuPy's a ufunc)."""
    px = a * math.pi
    safe = xp.where(a == 0, 1.0, px).astype(a.dtype, copy=False)
    return xp.where(a == 0, 1.0, xp.sin(safe) / safe).astype(a.dtype, copy=False)


def _sinc_derivative(g, x, out):
    px = x * math.pi
    d = (px * px.cos() - px.sin()) / (px * x)
    return g * d.masked_fill(x == 0, 0.0)


UNARY = {
    "tan": _unary("TanBackward0", lambda xp, a: xp.tan(a), lambda g, x, y: g * (y * y + 1), uses_output=True),
    "asin": _unary("AsinBackward0", lambda xp, a: xp.arcsin(a), lambda g, x, y: g * (1 - x * x).rsqrt()),
    "acos": _unary("AcosBackward0", lambda xp, a: xp.arccos(a), lambda g, x, y: -g * (1 - x * x).rsqrt()),
    "atan": _unary("AtanBackward0", lambda xp, a: xp.arctan(a), lambda g, x, y: g / (x * x + 1)),
    "sinh": _unary("SinhBackward0", lambda xp, a: xp.sinh(a), lambda g, x, y: g * x.cosh()),
    "cosh": _unary("CoshBackward0", lambda xp, a: xp.cosh(a), lambda g, x, y: g * x.sinh()),
    "asinh": _unary("AsinhBackward0", lambda xp, a: xp.arcsinh(a), lambda g, x, y: g * (x * x + 1).rsqrt()),
    "acosh": _unary("AcoshBackward0", lambda xp, a: xp.arccosh(a), lambda g, x, y: g * (x * x - 1).rsqrt()),
    "atanh": _unary("AtanhBackward0", lambda xp, a: xp.arctanh(a), lambda g, x, y: g / (1 - x * x)),
    "erf": _unary("ErfBackward0", _erf, lambda g, x, y: g * (x * x * -1).exp() * _TWO_OVER_SQRT_PI),
    "erfc": _unary("ErfcBackward0", _erfc, lambda g, x, y: g * (x * x * -1).exp() * -_TWO_OVER_SQRT_PI),
    "erfinv": _unary("ErfinvBackward0", _erfinv, lambda g, x, y: g * (y * y).exp() * (math.sqrt(math.pi) / 2),
                     uses_output=True),
    "exp2": _unary("Exp2Backward0", lambda xp, a: xp.exp2(a), lambda g, x, y: g * y * _LN2, uses_output=True),
    "sinc": _unary("SincBackward0", _sinc, _sinc_derivative),
    "deg2rad": _unary("Deg2RadBackward0", lambda xp, a: a * (math.pi / 180), lambda g, x, y: g * (math.pi / 180)),
    "rad2deg": _unary("Rad2DegBackward0", lambda xp, a: a * (180 / math.pi), lambda g, x, y: g * (180 / math.pi)),
}


class Frac(Op):
    """x - trunc(x) for floating tensors (PyTorch refuses integers)."""

    node_name = "FracBackward0"

    @staticmethod
    def forward(ctx, x):
        if x.dtype.category != 2:
            raise NotImplementedError(f"\"frac_cpu\" not implemented for '{type_name(x.dtype)}'")
        a = x._data
        return (a - x._xp.trunc(a)).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        return g


class Sgn(Sign):
    """sgn: the sign for real tensors, under its own node name."""

    node_name = "SgnBackward0"

    @staticmethod
    def forward(ctx, x):
        out = Sign.forward(ctx, x)
        if x.dtype.category == 2:  # NaN has sign 0 in PyTorch (NumPy's sign keeps NaN)
            out = x._xp.where(x._xp.isnan(out), 0, out).astype(out.dtype, copy=False)
        return out


class Logit(Op):
    """log(p / (1 - p)), with p clamped to [eps, 1 - eps] when `eps` is given."""

    node_name = "LogitBackward0"

    @staticmethod
    def forward(ctx, x, eps=None):
        ctx.eps = eps
        ctx.save_for_backward(x)

        def compute(xp, a):
            if eps is not None:
                a = xp.clip(a, eps, 1 - eps)
            return xp.log(a / (1 - a))

        return _in_float32(compute, x._xp, _float_array(x))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        d = g / (x * (1 - x))
        if ctx.eps is None:
            return d.masked_fill((x < 0) | (x > 1), float("nan"))
        return d.masked_fill((x < ctx.eps) | (x > 1 - ctx.eps), 0.0)


class NanToNum(Op):
    """NaN, +inf and -inf replaced by `nan`, `posinf` and `neginf` (default: 0 and the dtype's extremes)."""

    node_name = "NanToNumBackward0"

    @staticmethod
    def forward(ctx, x, nan=0.0, posinf=None, neginf=None):
        a = x._data
        if x.dtype.category != 2:
            return a.copy()
        ctx.save_for_backward(x)
        info = _dt.finfo(x.dtype)
        hi = info.max if posinf is None else posinf
        lo = info.min if neginf is None else neginf
        xp = x._xp
        out = xp.where(xp.isnan(a), nan, a)
        out = xp.where(out == np.inf, hi, out)
        return xp.where(out == -np.inf, lo, out).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.isfinite()


class Predicate(Op):
    """Non-differentiable bool tests: signbit, isneginf, isposinf, isreal."""

    node_name = "PredicateBackward"
    differentiable = False

    @staticmethod
    def forward(ctx, x, op="signbit"):
        xp, a = x._xp, x._data
        if op == "isreal":
            return xp.ones(a.shape, dtype=bool)
        if x.dtype.category != 2:
            return a < 0 if op == "signbit" else xp.zeros(a.shape, dtype=bool)
        return getattr(xp, op)(a.astype(np.float32) if a.dtype.itemsize == 2 else a)


# ---- two-argument functions ---------------------------------------------------------------------------

def _tensor_or_full(v, like):
    """Saved operand `v`, or a 0-d tensor holding it when it was a Python number."""
    if hasattr(v, "_data"):
        return v
    from ..factories import full

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
        ctx.ma, ctx.mb = _meta(a), _meta(b)
        if ctx.needs_input_grad:
            ctx.save_for_backward(a if ctx.ma is not None else None, b if ctx.mb is not None else None)
            ctx.scalars = (a, b)
            ctx.save_output = fn.uses_output
        xp = (a if ctx.ma is not None else b)._xp
        if rd.itemsize == 2 and rd.category == 2:
            return fn.compute(xp, np.float32(xa) if ctx.ma is None else xa.astype(np.float32),
                              np.float32(xb) if ctx.mb is None else xb.astype(np.float32)).astype(rd.np_dtype)
        return xp.asarray(fn.compute(xp, xa, xb)).astype(rd.np_dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        a = a if a is not None else _tensor_or_full(ctx.scalars[0], g)
        b = b if b is not None else _tensor_or_full(ctx.scalars[1], g)
        out = ctx.saved_output if ctx._fn.uses_output else None
        ga, gb = ctx._fn.derivatives(ctx, g, a, b, out)
        need = ctx.needs_input_grad
        return (_grad_like(ga, *ctx.ma) if need[0] and ga is not None else None,
                _grad_like(gb, *ctx.mb) if need[1] and gb is not None else None)


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
        ctx.shapes = [_meta(v) for v in (start, end, weight)]
        ctx.save_for_backward(start, end, weight if hasattr(weight, "_data") else None)
        ctx.weight = weight
        if not hasattr(w, "shape"):  # a Python number: pick the formula here
            out = s + w * (e - s) if abs(w) < 0.5 else e - (e - s) * (1 - w)
        else:
            out = xp.where(xp.abs(w) < 0.5, s + w * (e - s), e - (e - s) * (1 - w))
        return out.astype(rd.np_dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        start, end, weight = ctx.saved_tensors
        w = weight if weight is not None else ctx.weight
        need = ctx.needs_input_grad
        gs = _grad_like(g * (1 - w), *ctx.shapes[0]) if need[0] else None
        ge = _grad_like(g * w, *ctx.shapes[1]) if need[1] else None
        gw = _grad_like(g * (end - start), *ctx.shapes[2]) if len(need) > 2 and need[2] else None
        return gs, ge, gw


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
        ctx.shapes = [_meta(v) for v in (x, t1, t2)]
        ctx.value = value
        ctx.save_for_backward(t1, t2)
        prod = b / c if ctx._fn.divide else b * c
        return (a + value * prod if value != 1 else a + prod).astype(rd.np_dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        t1, t2 = ctx.saved_tensors
        need, v = ctx.needs_input_grad, ctx.value
        gx = _grad_like(g, *ctx.shapes[0]) if need[0] else None
        if ctx._fn.divide:
            g1 = g * v / t2 if need[1] else None
            g2 = -g * v * t1 / (t2 * t2) if need[2] else None
        else:
            g1 = g * v * t2 if need[1] else None
            g2 = g * v * t1 if need[2] else None
        return (gx, _grad_like(g1, *ctx.shapes[1]) if g1 is not None else None,
                _grad_like(g2, *ctx.shapes[2]) if g2 is not None else None)


class Addcdiv(Addcmul):
    """input + value * tensor1 / tensor2."""

    node_name = "AddcdivBackward0"
    divide = True
