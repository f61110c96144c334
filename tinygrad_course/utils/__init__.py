"""Utilities, mirroring `torch.utils` (`tc.utils.data`: datasets, samplers, DataLoader)."""
from . import checkpoint, data
from .._unsupported import missing as _missing

__all__ = ["checkpoint", "data"]


def __getattr__(name):
    raise _missing("tc.utils", name, f"module '{__name__}' has no attribute '{name}'")
