"""The one place where operators and methods are attached to `Tensor`.

`tensor.py` defines the bare object (storage, shape, dtype, device, printing) and imports no math. The
method families live above it -- the autograd entry points in `autograd/tensor_autograd.py`, everything
else in `methods/` -- and this module, which sits above all of them, binds their attributes onto the one
`Tensor` class. Importing `tinygrad_course` runs it once, before anything can use a tensor.

Precedence: an attribute the core defines is never replaced; among families the first one listed wins.
"""
from __future__ import annotations

from .autograd.tensor_autograd import AutogradMethods
from .methods import METHOD_FAMILIES
from .tensor import Tensor

# class machinery that must not be copied from a family onto Tensor
_NOT_METHODS = frozenset({"__module__", "__qualname__", "__doc__", "__slots__", "__dict__", "__weakref__",
                          "__firstlineno__", "__static_attributes__", "__annotations__"})


def bind_methods(cls, families):
    """Copy every method, property and operator of `families` onto `cls`; return the names bound."""
    bound = []
    for family in families:
        for name, attr in vars(family).items():
            if name in _NOT_METHODS or name in vars(cls):
                continue
            setattr(cls, name, attr)
            bound.append(name)
    return bound


BOUND = tuple(bind_methods(Tensor, (AutogradMethods,) + METHOD_FAMILIES))
