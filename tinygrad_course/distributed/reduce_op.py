"""`ReduceOp` (how `all_reduce`/`reduce` combine the ranks' values) and the errors of `tc.distributed`."""
from __future__ import annotations

import enum


class ReduceOp(enum.Enum):
    """Reduction applied element-wise across ranks, like `torch.distributed.ReduceOp`."""

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7


class DistError(RuntimeError):
    """Base error of the distributed package (as `torch.distributed.DistError`)."""


class DistBackendError(DistError):
    """A collective failed or timed out in the communication backend (MPI or NCCL)."""


# Tracebacks name them by their public home, as PyTorch's do (torch.distributed.DistBackendError).
for _cls in (ReduceOp, DistError, DistBackendError):
    _cls.__module__ = "tinygrad_course.distributed"
