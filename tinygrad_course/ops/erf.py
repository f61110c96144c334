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
