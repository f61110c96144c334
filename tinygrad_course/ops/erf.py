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


# Phi(x) = 0.5 + x * P'(x^2) / Q'(x^2), the same approximation with x / sqrt(2) folded into the
# coefficients (P'(t) = P(t / 2) / (2 sqrt(2)), Q'(t) = Q(t / 2), both divided by Q's leading coefficient so
# that Q' starts with t^4): two array passes fewer than 0.5 * (1 + erf(x / sqrt(2))), within 2.2e-7 of Phi.
_CDF_CLIP = 4.0 * 2.0 ** 0.5


def _cdf_coefficients():
    """P' and Q' (without Q''s leading 1) from P and Q, computed in float64 and rounded once to float32."""
    lead = _ERF_Q[0] / 2.0 ** 4
    p = [c / 2.0 ** (len(_ERF_P) - 1 - i) / (2.0 * 2.0 ** 0.5) / lead for i, c in enumerate(_ERF_P)]
    q = [c / 2.0 ** (len(_ERF_Q) - 1 - i) / lead for i, c in enumerate(_ERF_Q)]
    return tuple(p), tuple(q[1:])


_CDF_P, _CDF_Q = _cdf_coefficients()


def normal_cdf_float32(xp, a):
    """Phi(x) = 0.5 * (1 + erf(x / sqrt(2))) of a float32 array in float32 arithmetic, as a fresh array (GELU's
    fast path on the CPU): 25 array passes, three arrays of a's size at a time."""
    f = xp.float32
    x = xp.clip(a, f(-_CDF_CLIP), f(_CDF_CLIP))
    x2 = x * x
    p = x2 * f(_CDF_P[0])
    p += f(_CDF_P[1])
    for c in _CDF_P[2:]:
        p *= x2
        p += f(c)
    p *= x
    q = xp.add(x2, f(_CDF_Q[0]), out=x)  # x is not needed any more
    for c in _CDF_Q[1:]:
        q *= x2
        q += f(c)
    p /= q
    p += f(0.5)
    # the approximation dips to -6e-8 at the clip point: Phi(x) >= 0, so that x * Phi(x) is -0.0 for x << 0
    # (clip with both bounds: NumPy's maximum with a scalar runs about 3 times slower)
    return xp.clip(p, f(0), f(1), out=p)
