"""`tc.cuda.amp`: the old spelling of mixed precision (`torch.cuda.amp.GradScaler`, `torch.cuda.amp.autocast`).

Both still work as in PyTorch and, as there, warn with a FutureWarning that points to `tc.amp`.
"""
from __future__ import annotations

import functools
import warnings

from ..amp.autocast_mode import autocast as _autocast
from ..amp.grad_scaler import GradScaler as _GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd"]


class GradScaler(_GradScaler):
    """`torch.cuda.amp.GradScaler(args...)`: deprecated alias of `tc.amp.GradScaler("cuda", args...)`."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)


class autocast(_autocast):
    """`torch.cuda.amp.autocast(args...)`: deprecated alias of `tc.amp.autocast("cuda", args...)`."""

    def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with _autocast("cuda", self.fast_dtype, self._enabled, self._cache_enabled):
                return func(*args, **kwargs)

        return wrapper


def custom_fwd(fwd=None, *, cast_inputs=None):
    """`torch.cuda.amp.custom_fwd`: here the decorated forward runs unchanged."""
    if fwd is None:
        return lambda f: custom_fwd(f, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd):
    """`torch.cuda.amp.custom_bwd`: here the decorated backward runs unchanged."""
    return bwd
