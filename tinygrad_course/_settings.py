"""Process-wide switches PyTorch programs set on their first lines, recorded with PyTorch's defaults:
`tc.set_float32_matmul_precision("high")`, `tc.use_deterministic_algorithms(True)`, and the memory-format
markers (`tc.contiguous_format`, `tc.channels_last`, ...) that `.to(memory_format=...)` and the factory
functions accept. The framework computes float32 matmuls in full precision and deterministically on the CPU,
and keeps every tensor in one (row-major) layout, so none of these changes a result."""
from __future__ import annotations

import math

from ._namespace import namespace

__all__ = ["are_deterministic_algorithms_enabled", "channels_last", "channels_last_3d", "contiguous_format", "e",
           "get_float32_matmul_precision", "inf", "is_deterministic_algorithms_warn_only_enabled", "memory_format",
           "nan", "newaxis", "pi", "preserve_format", "set_float32_matmul_precision", "use_deterministic_algorithms"]

pi = math.pi
e = math.e
inf = math.inf
nan = math.nan
newaxis = None

_state = {"matmul_precision": "highest", "deterministic": False, "warn_only": False}


def set_float32_matmul_precision(precision: str) -> None:
    """Records "highest", "high" or "medium" (float32 matmuls here always run in full precision)."""
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid precision {precision!r}: expected one of 'highest', 'high', 'medium'")
    _state["matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    """The precision last set ("highest" by default, as in PyTorch)."""
    return _state["matmul_precision"]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Records the switch; the framework's CPU ops are deterministic already."""
    _state["deterministic"], _state["warn_only"] = bool(mode), bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _state["warn_only"]


class memory_format:  # noqa: N801  (PyTorch's class name)
    """A memory-layout marker, like `torch.memory_format`."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return f"{namespace()}.{self.name}"

    def __reduce__(self):
        return self.name


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
