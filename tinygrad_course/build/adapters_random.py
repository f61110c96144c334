"""Adapters of chapter 04's random draws (exercise 04.10): the learner's `Generator` methods `uniform`, `normal`
and `permutation` become `tc.Generator`'s own (method slots, `generator.LEARNER_METHODS`). The exercise covers
float32 and float64 values; draws of another dtype (float16, bfloat16: PyTorch draws them in float32 and
rounds) stay the reference's, and so does a call for which the learner's method returns NotImplemented. The
learner's values are returned as they are."""
from __future__ import annotations

import functools

import numpy as np

from ..generator import Generator
from ..seams import reference
from .adapters import as_method_of

_COVERED = (np.dtype(np.float32), np.dtype(np.float64))


def generator_method(attr: str):
    """An adapter: the method `attr` of the learner's `Generator` subclass as tc.Generator's, run for the dtypes
    the exercise covers (`permutation` always), the reference otherwise."""

    def adapt(learner_class):
        mine = as_method_of(learner_class, attr, Generator)
        original = reference(f"Generator.{attr}")
        if attr == "permutation":
            @functools.wraps(mine)
            def permutation(self, n):
                result = mine(self, n)
                return original(self, n) if result is NotImplemented else result
            return permutation
        if attr == "uniform":
            @functools.wraps(mine)
            def uniform(self, a, b, shape, dtype=np.float32):
                result = mine(self, a, b, shape, dtype) if np.dtype(dtype) in _COVERED else NotImplemented
                return original(self, a, b, shape, dtype) if result is NotImplemented else result
            return uniform

        @functools.wraps(mine)
        def normal(self, mean, std, shape, dtype=np.float32, contiguous=True):
            covered = np.dtype(dtype) in _COVERED
            result = mine(self, mean, std, shape, dtype, contiguous) if covered else NotImplemented
            return original(self, mean, std, shape, dtype, contiguous) if result is NotImplemented else result
        return normal

    adapt.__name__ = f"generator_{attr}"
    return adapt


def multinomial(learner_function):
    """An adapter: the learner's `multinomial(input, num_samples, replacement=False, *, generator=None)` (exercise
    10.11) becomes tc.multinomial (and `Tensor.multinomial`) for the draws the exercise covers -- one sample, or
    several without replacement (PyTorch's exponential race) -- while several draws with replacement (a binary
    search of the running sum) stay the reference's. The learner's indices are returned as they are."""
    original = reference("multinomial")

    @functools.wraps(learner_function)
    def draw(input, num_samples, replacement=False, *, generator=None):
        if replacement and num_samples != 1:
            return original(input, num_samples, replacement, generator=generator)
        return learner_function(input, num_samples, replacement, generator=generator)
    return draw
