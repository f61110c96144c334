"""`tc.multiprocessing`: Python's multiprocessing with tensors that can share memory, like
`torch.multiprocessing`.

    model.share_memory()                       # parameters move into shared memory
    procs = [tc.multiprocessing.Process(target=train, args=(model,)) for _ in range(4)]

Every process then updates the same parameters (Hogwild). Tensors put on a `Queue` or passed to a
`Process` travel by reference when they are shared (`share_memory_()`) and by value otherwise.
`spawn(fn, args, nprocs)` starts `nprocs` processes running `fn(i, *args)` and waits for them.
"""
from __future__ import annotations

import multiprocessing as _mp
from multiprocessing import *

from .reductions import init_reductions
from .spawn import ProcessContext, ProcessExitedException, ProcessRaisedException, spawn, start_processes

init_reductions()

__all__ = list(_mp.__all__) + ["spawn", "start_processes", "ProcessContext", "ProcessRaisedException",
                               "ProcessExitedException", "get_sharing_strategy", "set_sharing_strategy",
                               "get_all_sharing_strategies"]

_strategy = ["file_system"]


def get_all_sharing_strategies() -> set:
    """The ways tensors can be shared: here always through files in shared memory."""
    return {"file_system"}


def get_sharing_strategy() -> str:
    """The current sharing strategy ('file_system')."""
    return _strategy[0]


def set_sharing_strategy(new_strategy: str) -> None:
    """Choose how tensors are shared; only 'file_system' exists here ('file_descriptor' is accepted too)."""
    if new_strategy not in ("file_system", "file_descriptor"):
        raise ValueError(f"Invalid sharing strategy: {new_strategy}")
    _strategy[0] = "file_system"
