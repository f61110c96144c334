"""More one-argument element-wise math: trigonometric/hyperbolic functions, the erf family, exp2, sinc,
deg2rad/rad2deg, frac, sgn, logit, nan_to_num and predicates (isposinf, signbit, ...).

Each differentiable op computes on backend arrays and writes its backward with framework ops (so double
backward works); node names are PyTorch's (`TanBackward0`, `ErfBackward0`, ...).
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes as _dt
from ..autograd.engine import Op
from ..dtypes import type_name
from .erf import erf
from .unary_math import Sign, _float_array

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_LN2 = math.log(2.0)


def _in_float32(fn, xp, a):
    """`fn(xp, a)` computed in float32 for 16-bit floats (as PyTorch does), in `a`'s own dtype otherwise."""
    if a.dtype.itemsize == 2:
        return fn(xp, a.astype(np.float32)).astype(a.dtype)
    return fn(xp, a)


def _erf(xp, a):
    """The error function on an array: the one exact GELU uses."""
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
