"""PyTorch's NumPy spellings of two argument names: `axis=` for `dim=` and `keepdims=` for `keepdim=`.

PyTorch's argument parser accepts them wherever a native function takes `dim` or `keepdim`
(`P.sum(1, keepdims=True)`, `x.mean(axis=0)`, `torch.cat(ts, axis=1)`). `numpy_arg_names` wraps the methods
of a family class that take `dim` or `keepdim`; `accepting_numpy_names` wraps one function."""
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


def numpy_arg_names(cls):
    """Class decorator: every method of `cls` with a `dim` or `keepdim` parameter accepts the NumPy names."""
    for name, fn in list(vars(cls).items()):
        if inspect.isfunction(fn) and not name.startswith("__"):
            params = inspect.signature(fn).parameters
            if "dim" in params or "keepdim" in params:
                setattr(cls, name, accepting_numpy_names(fn, name))
    return cls
