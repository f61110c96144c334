"""The functions of a PyTorch device module (`torch.mps`, `torch.xpu`) for a device the framework does not
have: `is_available()` is False and `device_count()` 0, as PyTorch reports on a machine without one; seeding
and cache calls do nothing. `tc.mps` and `tc.xpu` are this module under their PyTorch names."""
from __future__ import annotations

__all__ = ["device_count", "empty_cache", "is_available", "manual_seed", "manual_seed_all", "seed", "synchronize"]


def is_available() -> bool:
    """False: the framework has no such device."""
    return False


def device_count() -> int:
    """0: the framework has no such device."""
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
