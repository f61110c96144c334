"""`parameters_to_vector` / `vector_to_parameters`: all parameters as one flat vector and back."""
from __future__ import annotations

from ...factories import cat
from ...tensor import Tensor


def parameters_to_vector(parameters):
    """One 1-D tensor with every parameter's values, in order (differentiable, like PyTorch's)."""
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters) -> None:
    """Copy consecutive slices of the 1-D `vec` into the parameters (their shapes are kept)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    offset = 0
    for p in parameters:
        n = p.numel()
        p.data = vec[offset:offset + n].view_as(p).data
        offset += n
