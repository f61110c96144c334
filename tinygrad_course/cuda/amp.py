"""`tc.cuda.amp`: the old spelling of mixed precision (`torch.cuda.amp.GradScaler`, `torch.cuda.amp.autocast`).

Both still work as in PyTorch and, as there, warn with a FutureWarning that points to `tc.amp`.
"""
from __future__ import annotations

from ..amp.legacy import LegacyAutocast, LegacyGradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd"]


class GradScaler(LegacyGradScaler):
    """`torch.cuda.amp.GradScaler(args...)`: deprecated alias of `tc.amp.GradScaler("cuda", args...)`."""

    device = "cuda"


class autocast(LegacyAutocast):
    """`torch.cuda.amp.autocast(args...)`: deprecated alias of `tc.amp.autocast("cuda", args...)`."""

    device = "cuda"


def custom_fwd(fwd=None, *, cast_inputs=None):
    """`torch.cuda.amp.custom_fwd`: here the decorated forward runs unchanged."""
    if fwd is None:
        return lambda f: custom_fwd(f, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd):
    """`torch.cuda.amp.custom_bwd`: here the decorated backward runs unchanged."""
    return bwd
