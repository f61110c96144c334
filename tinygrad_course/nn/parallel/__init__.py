"""`tc.nn.parallel`: data-parallel training across processes (`DistributedDataParallel`)."""
from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
