"""`tc.cpu.amp`: the old spelling of CPU mixed precision (`torch.cpu.amp.autocast`, `torch.cpu.amp.GradScaler`).

Both still work as in PyTorch and, as there, warn with a FutureWarning that points to `tc.amp`.
"""
from __future__ import annotations

import functools
import warnings

from ..amp.autocast_mode import autocast as _autocast
from ..amp.grad_scaler import GradScaler as _GradScaler

__all__ = ["GradScaler", "autocast"]


class GradScaler(_GradScaler):
    """`torch.cpu.amp.GradScaler(args...)`: deprecated alias of `tc.amp.GradScaler("cpu", args...)`."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        warnings.warn("`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cpu', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)


class autocast(_autocast):
    """`torch.cpu.amp.autocast(args...)`: deprecated alias of `tc.amp.autocast("cpu", args...)`."""

    def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True):
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning, stacklevel=2)
        kwargs = {} if dtype is None else {"dtype": dtype}
        super().__init__("cpu", enabled=enabled, cache_enabled=cache_enabled, **kwargs)

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with _autocast("cpu", self.fast_dtype, self._enabled, self._cache_enabled):
                return func(*args, **kwargs)

        return wrapper
