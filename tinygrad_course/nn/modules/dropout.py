"""Dropout layers, like `torch.nn.Dropout`: element-wise, channel-wise (`Dropout1d/2d/3d`) and alpha dropout."""
from __future__ import annotations

from ...seams import component
from .. import functional as F
from .module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]


class Dropout(Module):
    """During training, zero each element with probability p and scale the rest by 1/(1-p)."""

    @component("Dropout.__init__")
    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    @component("Dropout.forward")
    def forward(self, input):
        """`F.dropout` with this layer's settings."""
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(Dropout):
    """During training, zero whole channels of (N, C, L) input with probability p and scale the rest by 1/(1-p)."""

    def forward(self, input):
        """`F.dropout1d` with this layer's settings."""
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(Dropout):
    """During training, zero whole channels of (N, C, H, W) input with probability p and scale the rest."""

    def forward(self, input):
        """`F.dropout2d` with this layer's settings."""
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(Dropout):
    """During training, zero whole channels of (N, C, D, H, W) input with probability p and scale the rest."""

    def forward(self, input):
        """`F.dropout3d` with this layer's settings."""
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(Dropout):
    """Dropout for SELU networks: keeps mean 0 and variance 1 (dropped units take SELU's saturation value)."""

    def forward(self, input):
        """`F.alpha_dropout` with this layer's settings."""
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(Dropout):
    """Alpha dropout of whole channels."""

    def forward(self, input):
        """`F.feature_alpha_dropout` with this layer's settings."""
        return F.feature_alpha_dropout(input, self.p, self.training)
