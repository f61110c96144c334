"""The `out=` argument of PyTorch's functions, in one place: `tc.add(x, y, out=r)` computes the result,
checks it may be written into `r` and writes it there (returning `r`), with PyTorch's rules:

- autograd: `out=` is refused when grad mode is on and an input (or `out`) requires grad;
- dtype: the result must be castable to `out.dtype` (no float -> integer, nothing -> bool), except for
  the functions that demand `out` have exactly the result's dtype (`matmul`, `mm`, `where`, `argmax`, ...);
- shape: a wrong-shaped `out` is resized (with PyTorch's UserWarning when it held elements).

A function that returns several tensors (`max(x, dim)`, `sort`) takes a tuple of outs, one per result.
"""
from __future__ import annotations

import functools
import warnings

from .._namespace import namespace
from ..autograd.grad_mode import is_grad_enabled
from ..dtypes import can_cast, type_name
from ..tensor_base import TensorBase

_CPP_NAMES = {"float64": "double", "float32": "float", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
              "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool"}
EXACT_DTYPE = {"matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "addmv", "addbmm",
               "baddbmm", "argmax", "argmin", "tensordot", "linalg.norm", "linalg.vector_norm", "linalg.matrix_norm",
               "linalg.det", "linalg.inv", "linalg.solve", "linalg.cross"}
CREATION = {"zeros", "ones", "empty", "full", "arange", "rand", "randn", "randint", "randperm", "linspace", "logspace",
            "eye"}
_FREE_CAST = CREATION | {"sum", "nansum", "prod"}  # these compute in (or cast freely to) out's dtype
_ARANGE_WARNING = (
    "The number of elements in the out tensor of shape [{old}] is {n_old} which does not match the computed number "
    "of elements {n_new}. Note that this may occur as a result of rounding error. The out tensor will be resized to "
    "a tensor of shape ({new},).")
_RESIZE_WARNING = (
    "An output with one or more elements was resized since it had shape [{old}], which does not match the required "
    "output shape [{new}]. This behavior is deprecated, and in a future PyTorch release outputs will not be resized "
    "unless they have zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
    "elements with t.resize_(0).")


def _tensors(args, kwargs):
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, TensorBase):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from (x for x in a if isinstance(x, TensorBase))


def _check_dtype(name, result, out):
    r, o = result.dtype, out.dtype
    if name in EXACT_DTYPE:
        if r is not o and name == "tensordot":
            raise RuntimeError(f"tensordot: Expected the output tensor to have dtype {type_name(r)}, but got an output "
                               f"tensor with dtype {type_name(o)}")
        if r is not o and name == "linalg.norm":
            raise RuntimeError(f"linalg.norm expected out tensor dtype {type_name(r)} but got: {type_name(o)}")
        if r is not o:
            raise RuntimeError(f"Expected out tensor to have dtype {_CPP_NAMES[r.name]}, but got "
                               f"{_CPP_NAMES[o.name]} instead")
    elif name == "where":
        if r is not o:
            raise RuntimeError(f"Expected out type to be {type_name(r)} but got {type_name(o)}")
    elif name not in _FREE_CAST and not can_cast(r, o):
        if name in ("cat", "concat", "concatenate", "stack", "hstack", "vstack"):
            raise TypeError(f"{namespace()}.cat(): input types can't be cast to the desired output type {type_name(o)}")
        if name in ("clamp", "clip"):
            raise RuntimeError(f"Found dtype {type_name(o)} but expected {type_name(r)}")
        if name == "mean.dtype_out":
            raise RuntimeError(f"mean.dtype_out(): input types can't be cast to the desired output type {type_name(o)}")
        raise RuntimeError(f"result type {type_name(r)} can't be cast to the desired output type {type_name(o)}")


def write_out(name: str, result, out):
    """Write `result` (a tensor, or a tuple of them) into `out` following PyTorch's resize and dtype rules;
    return `out` (a namedtuple-like of the outs for several results)."""
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(f"{name}(): argument 'out' must be tuple of {len(result)} Tensors")
        written = [write_out(name, r, o) for r, o in zip(result, out)]
        return type(result)(*written) if hasattr(result, "_fields") else tuple(written)
    if not isinstance(out, TensorBase):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    _check_dtype(name, result, out)
    if tuple(out.shape) != tuple(result.shape):
        old, new = ", ".join(map(str, out.shape)), ", ".join(map(str, result.shape))
        if name == "arange" and out.numel() != 0:
            warnings.warn(_ARANGE_WARNING.format(old=old, n_old=out.numel(), n_new=result.numel(), new=new),
                          UserWarning, stacklevel=3)
        elif out.numel() != 0 and name not in CREATION:
            warnings.warn(_RESIZE_WARNING.format(old=old, new=new), UserWarning, stacklevel=3)
        out._data = out._xp.empty(tuple(result.shape), dtype=out._data.dtype)
        out._base = None
    data = result._data if result.device == out.device else result.to(out.device)._data
    out._xp.copyto(out._data, data, casting="unsafe")
    out._version[0] += 1
    return out


def supports_out(name: str, fn):
    """`fn` with PyTorch's `out=` keyword (see the module docstring); without `out` it is `fn` itself."""

    @functools.wraps(fn)
    def with_out(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        if is_grad_enabled() and any(t.requires_grad for t in (*_tensors(args, kwargs), *outs)
                                     if isinstance(t, TensorBase)):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad.")
        rule = "mean.dtype_out" if name == "mean" and len(args) == 1 and "dim" not in kwargs else name
        return write_out(rule, fn(*args, **kwargs), out)

    return with_out
