"""Mixed precision, like `torch.amp`: `autocast` (float16/bfloat16 compute where it is safe) and
`GradScaler` (loss scaling so float16 gradients do not underflow)."""
from .autocast_mode import (autocast, autocast_args, float32_inputs, get_autocast_dtype, is_autocast_available,
                            is_autocast_enabled, set_autocast_dtype)
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "autocast_args", "is_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype",
           "is_autocast_available", "float32_inputs"]
