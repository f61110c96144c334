"""Adapters of chapter 01b's tensor methods: the learner's method (a property's getter) becomes TensorBase's own,
as it is. The calls the exercise does not cover stay the reference's: `item()` and `tolist()` of a tensor on a
GPU or of a 16-bit float dtype (NumPy's own numbers there are not PyTorch's), `numpy()` of a GPU tensor (PyTorch's
TypeError) and `numpy(force=True)`; `repr()` of those, of a tensor printed with `...` (over 1000 elements) or with
print options changed."""
from __future__ import annotations

import functools

from .. import dtypes
from .._backend import CPU
from .._printing import PRINT_OPTS
from ..seams import reference

_HALF = (dtypes.bfloat16, dtypes.float16)


def _learner_function(learner_class, attr: str):
    for klass in learner_class.__mro__[:-1]:
        found = None if klass.__module__.startswith("tinygrad_course") else vars(klass).get(attr)
        if found is not None:
            return found.fget if isinstance(found, property) else getattr(found, "__func__", found)
    raise AttributeError(f"your {learner_class.__name__} defines no {attr}")


def _default_printing(numel: int) -> bool:
    """Whether a tensor of `numel` elements prints with the options the exercise covers (no summary with `...`)."""
    o = PRINT_OPTS
    return (o.precision, o.linewidth, o.sci_mode) == (4, 80, None) and numel <= o.threshold


def base_method(attr: str):
    """An adapter: the method `attr` of the learner's class becomes TensorBase's (see the module)."""

    def adapt(learner_class):
        mine = _learner_function(learner_class, attr)
        if attr not in ("item", "tolist", "numpy", "__repr__"):
            return mine
        original = reference(f"Tensor.{attr}")
        if attr == "__repr__":
            @functools.wraps(mine)
            def printed(self):
                if self._device is not CPU or self.dtype in _HALF or not _default_printing(self._data.size):
                    return original(self)
                return mine(self)
            return printed

        if attr == "numpy":
            @functools.wraps(mine)
            def numpy(self, *, force=False):
                if force or self._device is not CPU:
                    return original(self, force=force)
                return mine(self)
            return numpy

        @functools.wraps(mine)
        def run(self):
            if self._device is not CPU or self.dtype in _HALF:
                return original(self)
            return mine(self)
        return run

    adapt.__name__ = f"base_method_{attr}"
    return adapt
