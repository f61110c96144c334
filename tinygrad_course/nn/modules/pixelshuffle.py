"""`PixelShuffle` and `PixelUnshuffle`."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    """Rearrange (*, C*r*r, H, W) into (*, C, H*r, W*r) (r = upscale_factor)."""

    def __init__(self, upscale_factor: int):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        """`F.pixel_shuffle` with this layer's settings."""
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """Rearrange (*, C, H*r, W*r) into (*, C*r*r, H, W) (r = downscale_factor)."""

    def __init__(self, downscale_factor: int):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        """`F.pixel_unshuffle` with this layer's settings."""
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"downscale_factor={self.downscale_factor}"
