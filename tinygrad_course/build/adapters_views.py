"""Adapters of chapter 01's view geometry: the learner's functions have the framework's signatures; these
only refuse a result of the wrong form (so a component that breaks later is named and left out, and the
reference takes the call over). They never change a number the learner computed."""
from __future__ import annotations


def _ints(value, n, what):
    """`value` as a tuple of `n` ints, or RuntimeError naming what was expected."""
    try:
        out = tuple(int(v) for v in value)
    except TypeError:
        out = None
    if out is None or len(out) != n:
        raise RuntimeError(f"returned {value!r} as {what}, expected a tuple of {n} ints")
    return out


def view_strides(learner):
    """`view_strides(shape, strides, new_shape)` -> one stride per new dim, or None."""

    def run(shape, strides, new_shape):
        got = learner(shape, strides, new_shape)
        return None if got is None else _ints(got, len(new_shape), "the view's strides")

    return run


def permute_strides(learner):
    """`permute_strides(shape, strides, dims)` -> (shape, strides), one of each per dim."""

    def run(shape, strides, dims):
        got = learner(shape, strides, dims)
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise RuntimeError(f"returned {got!r}, expected (shape, strides)")
        return _ints(got[0], len(dims), "the shape"), _ints(got[1], len(dims), "the strides")

    return run


def expand_strides(learner):
    """`expand_strides(shape, strides, new_shape)` -> one stride per new dim."""

    def run(shape, strides, new_shape):
        return _ints(learner(shape, strides, new_shape), len(new_shape), "the expanded strides")

    return run


def index_view(learner):
    """`index_view(shape, strides, offset, index)` -> (shape, strides, offset)."""

    def run(shape, strides, offset, index):
        got = learner(shape, strides, offset, index)
        if not isinstance(got, (tuple, list)) or len(got) != 3 or not isinstance(got[0], (tuple, list)):
            raise RuntimeError(f"returned {got!r}, expected (shape, strides, offset)")
        new_shape = _ints(got[0], len(got[0]), "the shape")
        return new_shape, _ints(got[1], len(new_shape), "the strides"), int(got[2])

    return run


def storage_positions(learner):
    """`storage_positions(shape, strides, offset)` -> integer positions (a tensor or an array) of the view's shape."""

    def run(shape, strides, offset):
        got = learner(shape, strides, offset)
        if tuple(getattr(got, "shape", (None,))) != tuple(shape):
            raise RuntimeError(f"returned positions of shape {tuple(getattr(got, 'shape', ()))}, "
                               f"expected {tuple(shape)}")
        return got

    return run
