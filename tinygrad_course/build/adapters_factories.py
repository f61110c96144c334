"""Adapters of chapter 01's tensor creation (exercise 01.1): the learner's `tensor`, `zeros`, `ones`, `full`,
`empty`, `zeros_like`, `ones_like`, `full_like` and `arange` have PyTorch's signatures, so each adapter only routes: the
calls the exercise covers (CPU tensors from numbers, nested lists or NumPy arrays; sizes of ints; a framework
dtype) go to the learner's function, every other option (another device, pinned memory, `out=`, `layout=`, a
tensor as data, `size=` by keyword, ...) to the reference. Nothing here touches a result.
"""
from __future__ import annotations

import numpy as np

from .._backend import CPU, requested_device
from ..dtypes import dtype as _dtype
from ..seams import reference
from ..tensor_base import TensorBase

_PLAIN = (list, tuple, bool, int, float)


def _on_cpu(device) -> bool:
    """True when a factory asked for `device` makes a CPU tensor (None: the default device, the CPU unless set)."""
    return requested_device(device) in (None, CPU)


def _covered_dtype(dtype) -> bool:
    return dtype is None or isinstance(dtype, _dtype)


def _int_sizes(size) -> bool:
    """`size` is what the exercise covers: ints, or one tuple or list of ints."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    return all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in size)


def tensor(learner):
    """`tc.tensor(data, ...)` runs the learner's `tensor(data, *, dtype, device, requires_grad)` for numbers,
    nested lists and NumPy arrays made on the CPU; a tensor, a NumPy scalar, a GPU array, another device or
    pinned memory stay the reference's."""
    original = reference("tensor")

    def run(*args, dtype=None, device=None, requires_grad=False, pin_memory=False):
        if (len(args) != 1 or pin_memory or not _covered_dtype(dtype) or not _on_cpu(device)
                or not (type(args[0]) in _PLAIN or type(args[0]) is np.ndarray)):
            return original(*args, dtype=dtype, device=device, requires_grad=requires_grad, pin_memory=pin_memory)
        return learner(args[0], dtype=dtype, device=device, requires_grad=requires_grad)

    return run


def sized(name: str):
    """An adapter for `zeros`, `ones` or `empty` (`name`): sizes of ints and the CPU run the learner's
    `name(*size, dtype, device, requires_grad)`; `out=`, `layout=`, `pin_memory`, `size=`, `memory_format=` or
    another device the reference's."""

    def adapt(learner):
        original = reference(name)

        def run(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False, **kw):
            if (out is not None or layout is not None or pin_memory or kw or not size or not _int_sizes(size)
                    or not _covered_dtype(dtype) or not _on_cpu(device)):
                return original(*size, out=out, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad,
                                pin_memory=pin_memory, **kw)
            return learner(*size, dtype=dtype, device=device, requires_grad=requires_grad)

        return run

    adapt.__name__ = f"sized_{name}"
    return adapt


def full(learner):
    """`tc.full(size, fill_value, ...)` runs the learner's `full(size, fill_value, *, dtype, device,
    requires_grad)` for a tuple or list of ints and a Python number on the CPU; the rest stays the reference's."""
    original = reference("full")

    def run(size=None, fill_value=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
            pin_memory=False):
        if (out is not None or layout is not None or pin_memory or not isinstance(size, (tuple, list))
                or not _int_sizes((size,)) or type(fill_value) not in (bool, int, float) or not _covered_dtype(dtype)
                or not _on_cpu(device)):
            return original(size, fill_value, out=out, dtype=dtype, layout=layout, device=device,
                            requires_grad=requires_grad, pin_memory=pin_memory)
        return learner(size, fill_value, dtype=dtype, device=device, requires_grad=requires_grad)

    return run


def like(name: str):
    """An adapter for `zeros_like`, `ones_like` or `full_like` (`name`): a CPU tensor made on the CPU runs the
    learner's `name(input, [fill_value,] *, dtype, device, requires_grad)`; other devices the reference's."""

    def adapt(learner):
        original = reference(name)

        def run(input, *args, dtype=None, device=None, requires_grad=False, **kw):
            if (kw or not isinstance(input, TensorBase) or input.device.type != "cpu" or not _covered_dtype(dtype)
                    or (device is not None and not _on_cpu(device))
                    or (args and type(args[0]) not in (bool, int, float))):
                return original(input, *args, dtype=dtype, device=device, requires_grad=requires_grad, **kw)
            return learner(input, *args, dtype=dtype, device=device, requires_grad=requires_grad)

        return run

    adapt.__name__ = f"like_{name}"
    return adapt


def arange(learner):
    """`tc.arange(end)`, `tc.arange(start, end)` and `tc.arange(start, end, step)` of Python numbers on the CPU run
    the learner's `arange(start, end=None, step=1, *, dtype, device, requires_grad)`; bounds given by keyword or as
    tensors, `out=`, `layout=`, pinned memory and other devices stay the reference's."""
    original = reference("arange")

    def run(*args, start=None, end=None, step=None, out=None, dtype=None, layout=None, device=None,
            requires_grad=False, pin_memory=False):
        if (not 1 <= len(args) <= 3 or start is not None or end is not None or step is not None or out is not None
                or layout is not None or pin_memory or any(type(a) not in (int, float) for a in args)
                or not _covered_dtype(dtype) or not _on_cpu(device)):
            return original(*args, start=start, end=end, step=step, out=out, dtype=dtype, layout=layout,
                            device=device, requires_grad=requires_grad, pin_memory=pin_memory)
        return learner(*args, dtype=dtype, device=device, requires_grad=requires_grad)

    return run
