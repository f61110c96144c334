"""`tc.special`: the special functions of `torch.special` that the framework has (most are the tensor
functions under PyTorch's other names: `expit` is `sigmoid`, `psi` would be `digamma`, ...), each
differentiable. The Bessel, gamma-family and polynomial functions are not implemented: using one raises
NotImplementedError saying what to use instead."""
from __future__ import annotations

import math

from . import _functions as F
from ._unsupported import missing as _missing
from .methods.pointwise import xlogy

__all__ = ["entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "log1p", "log_softmax", "logit",
           "logsumexp", "ndtr", "round", "sinc", "softmax", "xlog1py", "xlogy"]


def expit(input, *, out=None):
    """The logistic sigmoid 1 / (1 + exp(-x)), like `torch.special.expit`."""
    return F.sigmoid(input, out=out)


def logit(input, eps=None, *, out=None):
    """log(p / (1 - p)), with p clamped to [eps, 1 - eps] when eps is given."""
    return F.logit(input, eps, out=out)


def erf(input, *, out=None):
    return F.erf(input, out=out)


def erfc(input, *, out=None):
    return F.erfc(input, out=out)


def erfinv(input, *, out=None):
    return F.erfinv(input, out=out)


def exp2(input, *, out=None):
    return F.exp2(input, out=out)


def expm1(input, *, out=None):
    return F.expm1(input, out=out)


def log1p(input, *, out=None):
    return F.log1p(input, out=out)


def round(input, *, decimals=0, out=None):  # noqa: A001  (torch.special.round)
    return F.round(input, decimals=decimals, out=out)


def sinc(input, *, out=None):
    return F.sinc(input, out=out)


def logsumexp(input, dim, keepdim=False, *, out=None):
    return F.logsumexp(input, dim, keepdim, out=out)


def softmax(input, dim, *, dtype=None):
    return input.softmax(dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    return input.log_softmax(dim, dtype=dtype)


def ndtr(input, *, out=None):
    """The standard normal CDF, (1 + erf(x / sqrt(2))) / 2."""
    result = (F.erf(input / math.sqrt(2.0)) + 1) * 0.5
    return result if out is None else out.resize_(result.shape).copy_(result)


def entr(input, *, out=None):
    """-x * log(x) elementwise (0 at 0, -inf for negative x)."""
    result = F.where(input < 0, float("-inf"), -xlogy(input, input))
    return result if out is None else out.resize_(result.shape).copy_(result)


def xlog1py(input, other, *, out=None):
    """x * log1p(y), and 0 where x == 0."""
    result = F.where(input == 0, 0.0, input * F.log1p(other if hasattr(other, "_data") else F.tensor(other)))
    return result if out is None else out.resize_(result.shape).copy_(result)


def __getattr__(name):
    raise _missing("tc.special", name, f"module '{__name__}' has no attribute '{name}'")
