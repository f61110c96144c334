"""The error function on a backend array, shared by GELU (`ops/fused.py`), its GPU kernels and `tc.erf`."""
from __future__ import annotations


def erf(xp, a):
    """The error function on an array (SciPy's / CuPy's when available, else a 1e-7 approximation)."""
    try:
        if xp.__name__ == "numpy":
            from scipy.special import erf
        else:
            from cupyx.scipy.special import erf
        return erf(a)
    except ImportError:  # Abramowitz & Stegun 7.1.26
        s = xp.sign(a)
        z = xp.abs(a)
        t = 1.0 / (1.0 + 0.3275911 * z)
        poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
        return (s * (1.0 - poly * xp.exp(-z * z))).astype(a.dtype, copy=False)


# erf(x) ~ x * P(x^2) / Q(x^2) on [-4, 4] (|erf(x)| rounds to 1 in float32 outside): a rational
# approximation for float32 evaluated with plain multiply-adds, within 4e-7 of the exact value (a few
# float32 ulps). SciPy's erf runs a scalar loop that costs about 60 times a NumPy exp per element.
_ERF_P = (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06, -5.69250639462346e-05,
          -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02)
_ERF_Q = (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03, -7.37332916720468e-03,
          -1.42647390514189e-02)


def erf_float32(xp, a):
    """erf of a float32 array in float32 arithmetic (GELU's fast path on the CPU). `a` is overwritten (the
    callers pass a temporary), so that the whole computation holds three arrays of its size."""
    x = xp.clip(a, -4.0, 4.0, out=a)
    x2 = x * x
    p = x2 * xp.float32(_ERF_P[0])
    p += xp.float32(_ERF_P[1])
    for c in _ERF_P[2:]:
        p *= x2
        p += xp.float32(c)
    p *= x
    q = xp.multiply(x2, xp.float32(_ERF_Q[0]), out=x)  # x is not needed any more
    q += xp.float32(_ERF_Q[1])
    for c in _ERF_Q[2:]:
        q *= x2
        q += xp.float32(c)
    p /= q
    return p
