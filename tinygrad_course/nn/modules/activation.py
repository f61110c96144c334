"""Activation layers: `ReLU`, `LeakyReLU`, `Sigmoid`, `Tanh`, `GELU`, `SiLU`, `Softmax`, `LogSoftmax`."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["ReLU", "LeakyReLU", "Sigmoid", "Tanh", "GELU", "SiLU", "Softmax", "LogSoftmax"]


class ReLU(Module):
    """max(x, 0) element-wise."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """x for x > 0, negative_slope * x otherwise."""

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class Sigmoid(Module):
    """1 / (1 + exp(-x)) element-wise."""

    def forward(self, input):
        return input.sigmoid()


class Tanh(Module):
    """tanh(x) element-wise."""

    def forward(self, input):
        return input.tanh()


class GELU(Module):
    """Gaussian error linear unit (approximate='none' exact, or 'tanh')."""

    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """x * sigmoid(x)."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Softmax(Module):
    """Softmax along `dim` (outputs are positive and sum to 1 along it)."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """log(softmax(x)) along `dim`, computed stably."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.log_softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
