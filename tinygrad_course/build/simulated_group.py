"""A simulated process group for the checks of chapter 09's components: this process plays one rank of a
world whose other ranks exist only as data.

The checks of `all_reduce` and `broadcast` must run them where the framework calls them (`tc.distributed`'s
collectives, which `DistributedDataParallel` calls), but the command-line status runs in one plain process:
in a world of one an all-reduce is the identity and would catch no mistake. `simulated_world(rank, world,
peers)` installs a backend in which every collective combines this rank's array with what the other ranks
contribute: `peers(r, array)` is rank r's array in a collective where this rank holds `array` (the default
gives each rank its own distinct values). The milestone then runs the same components over 2 real MPI
processes.
"""
from __future__ import annotations

import contextlib

import numpy as np

from ..distributed import process_group
from ..distributed.reduce_op import ReduceOp
from ..distributed.work import Work

_REDUCE = {ReduceOp.SUM: np.sum, ReduceOp.AVG: np.mean, ReduceOp.PRODUCT: np.prod, ReduceOp.MIN: np.min,
           ReduceOp.MAX: np.max}


def distinct_peers(r, array):
    """Rank r's array: this rank's values scaled by r + 2 and shifted by r + 1 (integers shifted only)."""
    if array.dtype.kind in "fc":
        return (array * (r + 2) + (r + 1)).astype(array.dtype)
    return (array + r + 1).astype(array.dtype)


def mirror_peers(r, array):
    """Every rank holds what this rank holds (a data-parallel step on identical batches)."""
    return array.copy()


def _done() -> Work:
    return Work(lambda: None, lambda: True)


class SimulatedGroup:
    """The backend interface of `MPIBackend` (all_reduce, reduce, broadcast, all_gather, barrier) for rank
    `rank` of `world_size` simulated ranks; every collective completes at once."""

    name = "simulated"

    def __init__(self, rank: int, world_size: int, peers=distinct_peers):
        self.rank, self.world_size, self.peers = rank, world_size, peers

    def _stack(self, arr):
        return np.stack([arr if r == self.rank else self.peers(r, arr) for r in range(self.world_size)])

    def all_reduce(self, arr, op) -> Work:
        """Reduce over this rank's `arr` and the simulated ranks' arrays, in place."""
        if op not in _REDUCE:
            raise ValueError(f"the simulated group does not reduce with {op}")
        arr[...] = _REDUCE[op](self._stack(arr), axis=0).astype(arr.dtype)
        return _done()

    def reduce(self, arr, dst, op) -> Work:
        """Reduce onto rank `dst` (only that rank's `arr` changes)."""
        if self.rank == dst:
            return self.all_reduce(arr, op)
        return _done()

    def broadcast(self, arr, src) -> Work:
        """Rank `src`'s array into `arr`."""
        arr[...] = self._stack(arr)[src]
        return _done()

    def all_gather(self, out, arr) -> Work:
        """Every rank's array, in rank order, into `out`."""
        out[...] = self._stack(arr)
        return _done()

    def barrier(self) -> Work:
        """Nothing to wait for."""
        return _done()

    def close(self):
        """Nothing to free."""


@contextlib.contextmanager
def simulated_world(rank: int = 1, world_size: int = 3, peers=distinct_peers):
    """Run `tc.distributed` as rank `rank` of a simulated world of `world_size` (the process group that was
    active before, if any, comes back after)."""
    previous = process_group._state.backend
    process_group._state.backend = SimulatedGroup(rank, world_size, peers)
    try:
        yield
    finally:
        process_group._state.backend = previous
