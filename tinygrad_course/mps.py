"""`tc.mps`: PyTorch's `torch.mps` device module. The framework has no Apple MPS device, so
`is_available()` is False and `device_count()` 0, as PyTorch reports on a machine without one; seeding and
cache calls do nothing."""
from __future__ import annotations

__all__ = ["device_count", "empty_cache", "is_available", "manual_seed", "manual_seed_all", "seed", "synchronize"]


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def synchronize(device=None) -> None:
    """Does nothing (there is no such device)."""


def empty_cache() -> None:
    """Does nothing (there is no such device)."""


def manual_seed(seed) -> None:
    """Does nothing (there is no such device; tc.manual_seed seeds the CPU)."""


manual_seed_all = manual_seed


def seed() -> None:
    """Does nothing (there is no such device)."""
