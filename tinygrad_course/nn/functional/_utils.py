"""Argument helpers shared by the `tc.nn.functional` parts: int-or-tuple sizes, PyTorch's spelling of a
shape in error messages, and the optional batch dim of convolution and pooling inputs."""
from __future__ import annotations


def _pair(v, name="kernel_size"):
    """An int or a 1- or 2-sequence as a pair of ints (what PyTorch's `_pair` accepts)."""
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return (int(v[0]),) * 2
        return (int(v[0]), int(v[1]))
    return (int(v), int(v))


def _single(v):
    """An int or a sequence's first item as an int (1-d layers' sizes)."""
    if isinstance(v, (tuple, list)):
        return int(v[0])
    return int(v)


def _shape_str(shape):
    """A shape as PyTorch's messages print it: [2, 3]."""
    return "[" + ", ".join(map(str, shape)) + "]"


def _batched(input, name, spatial=2):
    """(N, C, *spatial) input (an unbatched (C, *spatial) one gets a batch dim) and whether it was unbatched."""
    if input.ndim == spatial + 1:
        return input.unsqueeze(0), True
    if input.ndim != spatial + 2:
        raise RuntimeError(
            f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input to {name}, "
            f"but got input of size: {_shape_str(input.shape)}"
        )
    return input, False
