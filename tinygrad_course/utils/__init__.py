"""Utilities, mirroring `torch.utils` (`tc.utils.data`: datasets, samplers, DataLoader)."""
from . import data

__all__ = ["data"]
