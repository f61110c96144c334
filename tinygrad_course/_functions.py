"""Module-level functions (`tc.exp(x)`, `tc.sum(x, dim)`, ...) that mirror the tensor methods,
as `torch.exp` mirrors `Tensor.exp`."""
from __future__ import annotations

from . import factories as _factories
from .factories import tensor
from .methods import FAMILIES
from .methods.numpy_names import accepting_numpy_names
from .ops.comparison import where as _where
from .ops.concat import cat as _cat
from .ops.concat import stack as _stack
from .ops.out_arg import supports_out
from .shapes import broadcast_shapes, broadcast_shapes_checked  # noqa: F401  (tc.broadcast_shapes)
from .shapes import Size
from .tensor import Tensor

_METHOD_NAMES = (
    "add sub subtract mul multiply div divide true_divide floor_divide remainder pow square reciprocal neg negative "
    "abs absolute sign exp log log1p log2 log10 expm1 sqrt rsqrt sin cos tanh sigmoid relu clamp clip clamp_min "
    "clamp_max maximum minimum floor ceil round trunc logical_not logical_and logical_or logical_xor bitwise_and "
    "bitwise_or bitwise_xor bitwise_not isnan isinf isfinite allclose isclose equal eq ne lt le gt ge greater less "
    "greater_equal less_equal not_equal sum mean var std max min amax amin argmax argmin prod cumsum logsumexp all "
    "any norm matmul mm bmm mv dot reshape flatten unflatten squeeze unsqueeze permute transpose swapaxes swapdims t "
    "repeat flip narrow split chunk unbind gather scatter scatter_add index_select masked_fill tril triu clone "
    "numel detach"
).split()


# the functions that take `out=` in PyTorch (ops/out_arg.py applies its rules)
OUT_NAMES = frozenset((
    "abs absolute acos acosh add addbmm addcdiv addcmul addmm addmv addr all amax amin aminmax any arccos arccosh "
    "arcsin arcsinh arctan arctanh argmax argmin asin asinh atan atan2 atanh baddbmm bitwise_and bitwise_not "
    "bitwise_or bitwise_xor bmm cat ceil clamp clip concat concatenate copysign cos cosh cross cummax cummin cumprod "
    "cumsum deg2rad diag diff div divide dot eq erf erfc erfinv exp exp2 expm1 fix float_power floor floor_divide "
    "fmax fmin fmod frac gather ge ger greater greater_equal gt heaviside histc hypot index_select inner "
    "inverse isneginf isposinf kron kthvalue le lerp less less_equal log log10 log1p log2 logaddexp logaddexp2 "
    "logcumsumexp logical_and logical_not logical_or logical_xor logit logsumexp lt masked_select matmul "
    "matrix_power max maximum mean median min minimum mm mode msort mul multiply mv nan_to_num nanmean nanmedian "
    "nansum ne neg negative nonzero norm not_equal outer pow prod rad2deg reciprocal remainder round rsqrt sgn "
    "sigmoid sign signbit sin sinc sinh sort sqrt square stack std sub subtract sum take_along_dim tan tanh topk "
    "tril triu true_divide trunc var vdot where zeros ones empty full arange rand randn randint randperm linspace "
    "logspace eye").split())


def _from_method(name):
    def fn(input, *args, **kwargs):
        if not hasattr(input, "_data") and not hasattr(input, "_indices_t"):  # sparse tensors have their own
            input = tensor(input)
        return getattr(input, name)(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"`tc.{name}(input, ...)` is `input.{name}(...)`, like `torch.{name}`."
    return supports_out(name, fn) if name in OUT_NAMES else fn


_METHOD_NAMES = _METHOD_NAMES + [n for family in FAMILIES for n in family.METHOD_FUNCTIONS]
for _name in _METHOD_NAMES:
    globals()[_name] = _from_method(_name)

__all__ = list(_METHOD_NAMES)

where = supports_out("where", _where)
cat = supports_out("cat", accepting_numpy_names(_cat, "cat"))
concat = supports_out("concat", accepting_numpy_names(_cat, "concat"))
concatenate = supports_out("concatenate", accepting_numpy_names(_cat, "concatenate"))
stack = supports_out("stack", accepting_numpy_names(_stack, "stack"))
for _name in ("zeros", "ones", "empty", "full", "arange", "rand", "randn", "randint", "randperm", "linspace",
              "logspace", "eye"):
    globals()[_name] = supports_out(_name, getattr(_factories, _name))
__all__ += ["where", "cat", "concat", "concatenate", "stack", "zeros", "ones", "empty", "full", "arange", "rand",
            "randn", "randint", "randperm", "linspace", "logspace", "eye"]


def is_tensor(obj) -> bool:
    """True if `obj` is a tensor."""
    return isinstance(obj, Tensor)


def is_floating_point(input) -> bool:
    return input.dtype.is_floating_point


def broadcast_tensors(*tensors):
    """Views of `tensors` expanded to their common broadcast shape."""
    shape = broadcast_shapes_checked(*(tuple(t.shape) for t in tensors), hint=False)
    return tuple(t.expand(shape) for t in tensors)




def softmax(input, dim, dtype=None):
    """Softmax along `dim` (also `Tensor.softmax`), like `torch.softmax`; see `tc.nn.functional.softmax`."""
    return input.softmax(dim, dtype)


def log_softmax(input, dim, dtype=None):
    """log(softmax) along `dim`, computed stably (also `Tensor.log_softmax`), like `torch.log_softmax`."""
    return input.log_softmax(dim, dtype)


__all__ += ["softmax", "log_softmax"]
