"""`tc.cpu.amp`: the old spelling of CPU mixed precision (`torch.cpu.amp.autocast`, `torch.cpu.amp.GradScaler`).

Both still work as in PyTorch and, as there, warn with a FutureWarning that points to `tc.amp`.
"""
from __future__ import annotations

from ..amp.legacy import LegacyAutocast, LegacyGradScaler

__all__ = ["GradScaler", "autocast"]


class GradScaler(LegacyGradScaler):
    """`torch.cpu.amp.GradScaler(args...)`: deprecated alias of `tc.amp.GradScaler("cpu", args...)`."""

    device = "cpu"


class autocast(LegacyAutocast):
    """`torch.cpu.amp.autocast(args...)`: deprecated alias of `tc.amp.autocast("cpu", args...)`."""

    device = "cpu"
