"""`ChannelShuffle`: split the channels into groups and interleave them, like `torch.nn.ChannelShuffle`."""
from __future__ import annotations

from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Rearrange the C channels of (N, C, *) input as (N, g, C/g, *) -> (N, C/g, g, *), keeping the shape."""

    def __init__(self, groups: int):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        n, c = input.shape[0], input.shape[1]
        if c % self.groups:
            raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and "
                               f"{self.groups} groups.")
        rest = tuple(input.shape[2:])
        return (input.reshape((n, self.groups, c // self.groups) + rest).transpose(1, 2)
                .reshape((n, c) + rest))

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"groups={self.groups}"
