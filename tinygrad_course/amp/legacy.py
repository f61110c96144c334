"""PyTorch's old per-device spellings of mixed precision (`torch.cuda.amp.GradScaler`, `torch.cpu.amp.autocast`,
...): the same classes as `tc.amp`'s with the device fixed, warning with PyTorch's FutureWarning. `tc.cuda.amp`
and `tc.cpu.amp` subclass them with their device."""
from __future__ import annotations

import functools
import warnings

from .autocast_mode import autocast as _autocast
from .grad_scaler import GradScaler as _GradScaler


class LegacyGradScaler(_GradScaler):
    """`torch.<device>.amp.GradScaler(args...)`: deprecated alias of `tc.amp.GradScaler("<device>", args...)`."""

    device = "cuda"

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        warnings.warn(f"`torch.{self.device}.amp.GradScaler(args...)` is deprecated. Please use "
                      f"`torch.amp.GradScaler('{self.device}', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__(self.device, init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)


class LegacyAutocast(_autocast):
    """`torch.<device>.amp.autocast(args...)`: deprecated alias of `tc.amp.autocast("<device>", args...)`, also
    usable as a decorator."""

    device = "cuda"

    def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True):
        warnings.warn(f"`torch.{self.device}.amp.autocast(args...)` is deprecated. Please use "
                      f"`torch.amp.autocast('{self.device}', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__(self.device, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with _autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return func(*args, **kwargs)

        return wrapper
