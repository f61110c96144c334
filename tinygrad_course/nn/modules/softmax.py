"""The softmax family of layers, like `torch.nn.Softmax`, `LogSoftmax`, `Softmin` and `Softmax2d`: each normalises
its input along one dimension (outputs positive and summing to 1 along it, or their logs)."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["Softmax", "LogSoftmax", "Softmin", "Softmax2d"]


class Softmax(Module):
    """Softmax along `dim` (outputs are positive and sum to 1 along it)."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        """`F.softmax` with this layer's settings."""
        return F.softmax(input, self.dim)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """log(softmax(x)) along `dim`, computed stably."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        """`F.log_softmax` with this layer's settings."""
        return F.log_softmax(input, self.dim)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"dim={self.dim}"


class Softmin(Module):
    """softmax(-x) along `dim`."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        """`F.softmin` with this layer's settings."""
        return F.softmin(input, self.dim)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"dim={self.dim}"


class Softmax2d(Module):
    """Softmax over the channels (dim -3) of a (C, H, W) or (N, C, H, W) input."""

    def forward(self, input):
        """Softmax over the channel dimension of a (N, C, H, W) or (C, H, W) input."""
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead")
        return F.softmax(input, -3)
