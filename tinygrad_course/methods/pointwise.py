"""More element-wise math: trigonometric/hyperbolic functions, erf, atan2, hypot, logaddexp, lerp,
addcmul/addcdiv, fmod, nan_to_num, ... (like torch), and the reductions std_mean/var_mean, nanmean, nansum,
aminmax."""
from __future__ import annotations

from .. import dtypes as _dt
from ..dtypes import can_cast, finfo, iinfo  # noqa: F401  (tc.finfo, tc.iinfo, tc.can_cast)
from ..factories import tensor
from ..ops import pointwise_binary as PB
from ..ops import pointwise_unary as PU
from ..ops import reduce_extra as RX
from ..dtypes import type_name
from .numpy_names import numpy_arg_names

_UNARY_NAMES = tuple(PU.UNARY)
_ALIASES = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh", "arccosh": "acosh",
            "arctanh": "atanh", "arctan2": "atan2"}

METHOD_FUNCTIONS: tuple[str, ...] = _UNARY_NAMES + tuple(_ALIASES) + (
    "atan2", "hypot", "logaddexp", "logaddexp2", "logit", "fmod", "frac", "sgn", "signbit", "heaviside",
    "copysign", "nan_to_num", "lerp", "addcmul", "addcdiv", "float_power", "positive", "fmax", "fmin",
    "isneginf", "isposinf", "isreal", "nanmean", "nansum", "aminmax",
)
__all__: list[str] = ["xlogy", "var_mean", "std_mean", "finfo", "iinfo", "can_cast"]


def _tensor_like(v, like):
    """`v` as a tensor on `like`'s device (Python numbers become 0-d tensors, as torch's tensor-only
    arguments would require)."""
    if hasattr(v, "_data"):
        return v

    return tensor(v, device=like.device)


def _unary_method(name):
    op = PU.UNARY[name]

    def method(self):
        return op.apply(self)

    def method_(self):
        return self._inplace(op.apply)

    method.__name__, method_.__name__ = name, name + "_"
    method.__doc__ = f"Element-wise {name}, like `torch.{name}` (integer inputs give the default float dtype)."
    method_.__doc__ = f"In-place {name}, like `Tensor.{name}_`."
    return method, method_


def _binary_method(name, op_for):
    """A method `self.name(other)` and its in-place form; `op_for(other)` picks the op (node overload)."""

    def method(self, other):
        op = op_for(other)
        if not (_is_number(other) and name in _NUMBER_OK):
            other = _tensor_like(other, self)
        return op.apply(self, other)

    def method_(self, other):
        return self._inplace(lambda t, o: getattr(t, name)(o), other)

    method.__name__, method_.__name__ = name, name + "_"
    method.__doc__ = f"Element-wise {name} with broadcasting, like `torch.{name}`."
    method_.__doc__ = f"In-place {name}, like `Tensor.{name}_`."
    return method, method_


_NUMBER_OK = ("fmod", "copysign")  # the others take tensors only in torch


def _is_number(v):
    return isinstance(v, (bool, int, float))


def _fixed(op):
    return lambda other: op


@numpy_arg_names
class PointwiseMethods:
    """Mixin with pointwise methods of `Tensor`."""

    __slots__ = ()

    tan, tan_ = _unary_method("tan")
    asin, asin_ = _unary_method("asin")
    acos, acos_ = _unary_method("acos")
    atan, atan_ = _unary_method("atan")
    sinh, sinh_ = _unary_method("sinh")
    cosh, cosh_ = _unary_method("cosh")
    asinh, asinh_ = _unary_method("asinh")
    acosh, acosh_ = _unary_method("acosh")
    atanh, atanh_ = _unary_method("atanh")
    arcsin, arcsin_, arccos, arccos_, arctan, arctan_ = asin, asin_, acos, acos_, atan, atan_
    arcsinh, arcsinh_, arccosh, arccosh_, arctanh, arctanh_ = asinh, asinh_, acosh, acosh_, atanh, atanh_
    erf, erf_ = _unary_method("erf")
    erfc, erfc_ = _unary_method("erfc")
    erfinv, erfinv_ = _unary_method("erfinv")
    exp2, exp2_ = _unary_method("exp2")
    sinc, sinc_ = _unary_method("sinc")
    deg2rad, deg2rad_ = _unary_method("deg2rad")
    rad2deg, rad2deg_ = _unary_method("rad2deg")

    atan2, atan2_ = _binary_method("atan2", _fixed(PB.Atan2))
    arctan2, arctan2_ = atan2, atan2_
    hypot, hypot_ = _binary_method("hypot", _fixed(PB.Hypot))
    logaddexp, _ = _binary_method("logaddexp", _fixed(PB.Logaddexp))
    logaddexp2, _ = _binary_method("logaddexp2", _fixed(PB.Logaddexp2))
    fmod, fmod_ = _binary_method("fmod", lambda o: PB.Fmod0 if _is_number(o) else PB.Fmod)
    copysign, copysign_ = _binary_method("copysign", lambda o: PB.Copysign1 if _is_number(o) else PB.Copysign)
    fmax, _ = _binary_method("fmax", _fixed(PB.Fmax))
    fmin, _ = _binary_method("fmin", _fixed(PB.Fmin))
    heaviside, heaviside_ = _binary_method("heaviside", _fixed(PB.Heaviside))
    del _

    def xlogy(self, other):
        """self * log(other), 0 where self == 0, like `torch.xlogy` (`other` may be a number)."""
        return (PB.Xlogy2 if _is_number(other) else PB.Xlogy).apply(self, other)

    def xlogy_(self, other):
        """In-place xlogy, like `Tensor.xlogy_`."""
        return self._inplace(lambda t, o: t.xlogy(o), other)

    def frac(self):
        """Fractional part x - trunc(x), like `torch.frac`."""
        return PU.Frac.apply(self)

    def frac_(self):
        """In-place frac, like `Tensor.frac_`."""
        return self._inplace(PU.Frac.apply)

    def sgn(self):
        """The sign of each element (sign, for real tensors), like `torch.sgn`."""
        return PU.Sgn.apply(self)

    def sgn_(self):
        """In-place sgn, like `Tensor.sgn_`."""
        return self._inplace(PU.Sgn.apply)

    def logit(self, eps=None):
        """log(p / (1 - p)), with p clamped to [eps, 1 - eps] if `eps` is given, like `torch.logit`."""
        return PU.Logit.apply(self, eps)

    def logit_(self, eps=None):
        """In-place logit, like `Tensor.logit_`."""
        return self._inplace(PU.Logit.apply, eps)

    def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
        """NaN/+inf/-inf replaced by `nan`/`posinf`/`neginf` (default 0 and the dtype's extremes)."""
        return PU.NanToNum.apply(self, nan, posinf, neginf)

    def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
        """In-place nan_to_num, like `Tensor.nan_to_num_`."""
        return self._inplace(PU.NanToNum.apply, nan, posinf, neginf)

    def signbit(self):
        """True where the sign bit is set (negative numbers and -0.0), like `torch.signbit`."""
        return PU.Predicate.apply(self, op="signbit")

    def isneginf(self):
        """True where the element is -inf, like `torch.isneginf`."""
        return PU.Predicate.apply(self, op="isneginf")

    def isposinf(self):
        """True where the element is +inf, like `torch.isposinf`."""
        return PU.Predicate.apply(self, op="isposinf")

    def isreal(self):
        """True everywhere (real dtypes only), like `torch.isreal`."""
        return PU.Predicate.apply(self, op="isreal")

    def positive(self):
        """This tensor itself (`+x`); refused for bool tensors, like `torch.positive`."""
        if self.dtype.name == "bool":
            raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
        return self

    def lerp(self, end, weight):
        """self + weight * (end - self), like `torch.lerp`."""
        return (PB.Lerp1 if hasattr(weight, "_data") else PB.Lerp).apply(self, end, weight)

    def lerp_(self, end, weight):
        """In-place lerp, like `Tensor.lerp_`."""
        return self._inplace(lambda t, e, w: t.lerp(e, w), end, weight)

    def addcmul(self, tensor1, tensor2, *, value=1):
        """self + value * tensor1 * tensor2, like `torch.addcmul`."""
        return PB.Addcmul.apply(self, tensor1, tensor2, value=value)

    def addcmul_(self, tensor1, tensor2, *, value=1):
        """In-place addcmul, like `Tensor.addcmul_`."""
        return self._inplace(lambda t, a, b: t.addcmul(a, b, value=value), tensor1, tensor2)

    def addcdiv(self, tensor1, tensor2, *, value=1):
        """self + value * tensor1 / tensor2, like `torch.addcdiv`."""
        return PB.Addcdiv.apply(self, tensor1, tensor2, value=value)

    def addcdiv_(self, tensor1, tensor2, *, value=1):
        """In-place addcdiv, like `Tensor.addcdiv_`."""
        return self._inplace(lambda t, a, b: t.addcdiv(a, b, value=value), tensor1, tensor2)

    def float_power(self, exponent):
        """self ** exponent computed in float64, like `torch.float_power`."""
        e = exponent.to(_dt.float64) if hasattr(exponent, "_data") else exponent
        return self.to(_dt.float64).pow(e)

    def float_power_(self, exponent):
        """In-place float_power (self must be float64), like `Tensor.float_power_`."""
        if self.dtype.name != "float64":
            raise RuntimeError(f"the base given to float_power_ has dtype {_TYPE(self.dtype)} but the operation's "
                               "result requires dtype Double")
        return self._inplace(lambda t, e: t.float_power(e), exponent)

    # ---- reductions ----------------------------------------------------------------------------------
    def nansum(self, dim=None, keepdim=False, *, dtype=None):
        """Sum treating NaN as zero, like `torch.nansum`."""
        return RX.Nansum.apply(self, dim, keepdim, dtype)

    def nanmean(self, dim=None, keepdim=False, *, dtype=None):
        """Mean over the non-NaN elements, like `torch.nanmean`."""
        if self.dtype.category != 2:
            raise RuntimeError("nanmean(): expected input to have floating point or complex dtype but got "
                               f"{_TYPE(self.dtype)}. Hint: call .float() first.")
        x = self if dtype is None else self.to(dtype)
        count = (~x.isnan()).sum(dim, keepdim=keepdim) if dim is not None or keepdim else (~x.isnan()).sum()
        return x.nansum(dim, keepdim) / count

    def aminmax(self, *, dim=None, keepdim=False):
        """The named pair (min, max) over all elements or `dim`, like `torch.aminmax`."""
        return RX.aminmax(self, dim, keepdim)


def _TYPE(d):
    return type_name(d)


# ---- standalone functions (torch has no Tensor method for these) ------------------------------------------

def xlogy(input, other):
    """input * log(other), 0 where input == 0, like `torch.xlogy` (either argument may be a number)."""
    if _is_number(input):
        return PB.Xlogy1.apply(input, other)
    return input.xlogy(other)


def _spread_args(input, dim, unbiased, correction):
    if not isinstance(unbiased, bool) and dim is None:  # var_mean(x, 0): the dim given positionally
        dim, unbiased = unbiased, True
    if isinstance(dim, bool):  # var_mean(x, False): the unbiased flag given positionally
        dim, unbiased = None, dim
    return dim, correction if correction is not None else (1 if unbiased else 0)


def var_mean(input, dim=None, unbiased=True, keepdim=False, *, correction=None):
    """(variance, mean) over `dim` in one pass, like `torch.var_mean`."""
    dim, c = _spread_args(input, dim, unbiased, correction)
    return RX.VarMean.apply(input, dim, c, keepdim)


def std_mean(input, dim=None, unbiased=True, keepdim=False, *, correction=None):
    """(standard deviation, mean) over `dim` in one pass, like `torch.std_mean`."""
    dim, c = _spread_args(input, dim, unbiased, correction)
    return RX.StdMean.apply(input, dim, c, keepdim)
