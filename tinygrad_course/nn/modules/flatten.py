"""`Flatten` and `Unflatten`: reshape a range of dimensions into one and back, like `torch.nn.Flatten`."""
from __future__ import annotations

from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Flattens dims start_dim..end_dim into one (by default all but the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        """`input.flatten(start_dim, end_dim)`."""
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Expands dim `dim` into the shape `unflattened_size`."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        self.dim = dim
        self.unflattened_size = tuple(unflattened_size)

    def forward(self, input):
        """`input.unflatten(dim, unflattened_size)`."""
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
