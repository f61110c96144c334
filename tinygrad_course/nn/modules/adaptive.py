"""`torch.nn.modules.adaptive` defines `AdaptiveLogSoftmaxWithLoss`, which the framework does not implement: the name raises
UnsupportedError with what to use instead, so a program that imports this module fails where it uses it."""
from __future__ import annotations

from ..._unsupported import getattr_for

__all__: list[str] = []
__getattr__ = getattr_for("tc.nn", __name__)
