"""The arithmetic PyTorch's CPU kernels use to turn random bits into values, reproduced bit for bit in NumPy.

PyTorch's x86 build contracts `a * b + c` into one fused multiply-add (rounded once), and its float32
normal kernel evaluates log, sin and cos with the polynomials of `avx_mathfun.h` (Cephes, eight lanes at a
time). NumPy rounds every operation, so `fma32`/`fma64` round the exact `a * b + c` once, and
`log_ps`/`sincos_ps` follow the AVX code step by step (with its fused steps fused). `log_f64` returns the
C library's `log` (NumPy's own vectorised log differs from it in the last bit now and then)."""
from __future__ import annotations

import math

import numpy as np

_f = np.float32
_TIE = np.uint64(1 << 28)
_LOW29 = np.uint64((1 << 29) - 1)


def fma32(a, b, c):
    """float32 `a * b + c` rounded once: exact in float64 except for a float32 tie, which is then resolved."""
    r = np.multiply(a, b, dtype=np.float64)
    r += c
    tie = (r.view(np.uint64) & _LOW29) == _TIE
    if tie.any():  # the float64 sum sits exactly between two floats: its rounding error decides
        ties = np.flatnonzero(tie)
        flat = r.reshape(-1)
        p = (np.broadcast_to(a, r.shape).reshape(-1)[ties].astype(np.float64)
             * np.broadcast_to(b, r.shape).reshape(-1)[ties])
        cc = np.broadcast_to(np.asarray(c, np.float64), r.shape).reshape(-1)[ties]
        s = flat[ties]
        bv = s - p
        err = (p - (s - bv)) + (cc - bv)
        flat[ties] = np.where(err != 0, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
    return r.astype(np.float32)


def _split(a):
    t = a * 134217729.0
    hi = t - (t - a)
    return hi, a - hi


def fma64(a, b, c):
    """float64 `a * b + c` rounded once (an error-free product and sum, then one rounding)."""
    a, b, c = (np.asarray(v, np.float64) for v in (a, b, c))
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    bv = s - p
    t = (p - (s - bv)) + (c - bv)
    return s + (t + e)


def log_f64(x):
    """The C library's `log` of a float64 array: computed in extended precision, and by `math.log` for
    the rare values that lie so near a rounding boundary that the two roundings could differ."""
    x = np.asarray(x, np.float64)
    wide = np.log(x.astype(np.longdouble))
    out = wide.astype(np.float64)
    near = np.abs(wide - out.astype(np.longdouble)) > 0.45 * np.spacing(np.abs(out)).astype(np.longdouble)
    if near.any():
        out[near] = [math.log(v) for v in x[near].tolist()]
    return out


_MIN_NORM = np.array([0x00800000], np.int32).view(np.float32)[0]
_HALF_BITS = np.int32(0x3F000000)
_LOG_P = (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1,
          -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1)


def log_ps(x):
    """`log256_ps` of PyTorch's `avx_mathfun.h` for positive float32 `x` (Cephes `logf`)."""
    x = np.maximum(np.asarray(x, np.float32), _MIN_NORM)
    bits = x.view(np.int32)
    e = ((bits >> 23) - 0x7F).astype(np.float32) + _f(1)
    x = ((bits & np.int32(~0x7F800000)) | _HALF_BITS).view(np.float32)
    small = x < _f(0.707106781186547524)
    x = (x - _f(1)) + np.where(small, x, _f(0))
    e = e - small.astype(np.float32)
    z = x * x
    y = np.full_like(x, _f(_LOG_P[0]))
    for coef in _LOG_P[1:]:
        y = fma32(y, x, _f(coef))
    y = y * x
    y = fma32(y, z, e * _f(-2.12194440e-4))
    y = y - z * _f(0.5)  # the products here are exact (a power of two; a small integer times 355/512), so
    return (x + y) + e * _f(0.693359375)  # fusing them changes nothing


def sincos_ps(x):
    """`sincos256_ps` of PyTorch's `avx_mathfun.h`: (sin, cos) of float32 `x` (Cephes `sinf`/`cosf`)."""
    x = np.asarray(x, np.float32)
    sign_sin = x.view(np.int32) & np.int32(-0x80000000)
    x = np.abs(x)
    j = (x * _f(1.27323954473516)).astype(np.int32)
    j = (j + 1) & ~1
    y = j.astype(np.float32)
    sign_sin = sign_sin ^ ((j & 4) << 29)
    sign_cos = ((~(j - 2)) & 4) << 29
    use_sin_poly = (j & 2) == 0
    x = x + y * _f(-0.78515625)  # exact products: j < 16 times constants of 8 and 12 bits
    x = x + y * _f(-2.4187564849853515625e-4)
    x = fma32(y, _f(-3.77489497744594108e-8), x)
    z = x * x
    yc = fma32(np.full_like(z, _f(2.443315711809948E-005)), z, _f(-1.388731625493765E-003))
    yc = fma32(yc, z, _f(4.166664568298827E-002)) * z
    yc = fma32(yc, z, -(z * _f(0.5))) + _f(1)
    ys = fma32(np.full_like(z, _f(-1.9515295891E-4)), z, _f(8.3321608736E-3))
    ys = fma32(ys, z, _f(-1.6666654611E-1)) * z
    ys = fma32(ys, x, x)
    s = np.where(use_sin_poly, ys, yc)
    c = np.where(use_sin_poly, yc, ys)
    return (s.view(np.int32) ^ sign_sin).view(np.float32), (c.view(np.int32) ^ sign_cos).view(np.float32)
