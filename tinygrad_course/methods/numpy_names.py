"""PyTorch's NumPy spellings of two argument names: `axis=` for `dim=` and `keepdims=` for `keepdim=`.

PyTorch's argument parser accepts them wherever a native function takes `dim` or `keepdim`
(`P.sum(1, keepdims=True)`, `x.mean(axis=0)`, `torch.cat(ts, axis=1)`). `numpy_arg_names` wraps the methods
of a family class that take `dim` or `keepdim`; `accepting_numpy_names` wraps one function. Methods on every
step's path (`sum`, `mean`) take the names as `**numpy_names` and call `numpy_dim_keepdim` only when some
are given, so the common call costs no extra Python call; the decorator leaves methods with `**` alone."""
from __future__ import annotations

import functools
import inspect

ALIASES = (("axis", "dim"), ("keepdims", "keepdim"))


def _rename(name, kwargs):
    for alias, canonical in ALIASES:
        if alias in kwargs:
            if canonical in kwargs:
                raise TypeError(f"{name}() got multiple values for argument '{canonical}' (also given as "
                                f"'{alias}', its NumPy spelling). Hint: pass only one of them.")
            kwargs[canonical] = kwargs.pop(alias)


def accepting_numpy_names(fn, name=None):
    """`fn`, also accepting `axis=` for `dim=` and `keepdims=` for `keepdim=`."""
    name = name or fn.__name__

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if "axis" in kwargs or "keepdims" in kwargs:
            _rename(name, kwargs)
        return fn(*args, **kwargs)

    return wrapper


def numpy_dim_keepdim(name, given, dim, keepdim, dim_default=None):
    """(dim, keepdim) after the NumPy spellings in `given` (a method's `**numpy_names`); PyTorch's TypeError
    for any other keyword, or for a name given twice."""
    for alias, value in given.items():
        if alias == "axis":
            if dim is not dim_default:
                raise TypeError(f"{name}() got multiple values for argument 'dim' (also given as 'axis', its "
                                "NumPy spelling). Hint: pass only one of them.")
            dim = value
        elif alias == "keepdims":
            if keepdim:
                raise TypeError(f"{name}() got multiple values for argument 'keepdim' (also given as 'keepdims', "
                                "its NumPy spelling). Hint: pass only one of them.")
            keepdim = value
        else:
            raise TypeError(f"{name}() got an unexpected keyword argument '{alias}'")
    return dim, keepdim


def numpy_arg_names(cls):
    """Class decorator: every method of `cls` with a `dim` or `keepdim` parameter accepts the NumPy names."""
    for name, fn in list(vars(cls).items()):
        if inspect.isfunction(fn) and not name.startswith("__"):
            params = inspect.signature(fn).parameters
            takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
            if ("dim" in params or "keepdim" in params) and not takes_any:
                setattr(cls, name, accepting_numpy_names(fn, name))
    return cls
