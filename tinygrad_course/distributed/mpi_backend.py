"""The "mpi" backend: collectives on NumPy arrays through mpi4py, for CPU processes.

Launch one process per worker with `mpirun -n N python train.py` (the venv's `mpiexec` comes with
the `mpich` package). Every collective is started non-blocking (`Iallreduce`, `Ibcast`, ...) and
then polled against the group's timeout, so a rank that died or got stuck makes the others raise a
`DistBackendError` instead of waiting forever. After such an error the communicator is in an
unknown state: the process aborts the whole MPI job when it exits (MPI's abort semantics), which
also stops the ranks that are still blocked.
"""
from __future__ import annotations

import atexit
import sys
import time

import numpy as np

from .reduce_op import DistBackendError, ReduceOp
from .work import Work

# dtypes MPI reduces natively; others (float16, bfloat16, bool) travel as float32
_NATIVE = {np.dtype(t) for t in ("float32", "float64", "int8", "int16", "int32", "int64", "uint8")}


class MPIBackend:
    """Collectives over `MPI.COMM_WORLD` (a private duplicate of it) with a timeout on each one."""

    name = "mpi"

    def __init__(self, timeout_s: float):
        from mpi4py import MPI  # importing initialises MPI, so it happens only here

        self.MPI = MPI
        self.comm = MPI.COMM_WORLD.Dup()
        self.rank = self.comm.Get_rank()
        self.world_size = self.comm.Get_size()
        self.timeout_s = timeout_s
        self.broken = None  # the message of the first failure, once one happened
        self._ops = {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
                     ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX, ReduceOp.BAND: MPI.BAND,
                     ReduceOp.BOR: MPI.BOR, ReduceOp.BXOR: MPI.BXOR}
        atexit.register(self._abort_if_broken)
        self._previous_excepthook = None
        if self.world_size > 1:
            # An uncaught error on one rank stops the whole job at once (like `python -m mpi4py`),
            # instead of leaving the other ranks to wait for it until their timeout.
            self._previous_excepthook = sys.excepthook
            sys.excepthook = self._abort_on_uncaught

    # ---- waiting with a deadline --------------------------------------------------------------
    def _wait(self, request, what: str):
        if self.broken:
            raise DistBackendError(self.broken)
        deadline = time.monotonic() + self.timeout_s
        spins, delay = 0, 0.0
        while not request.Test():
            spins += 1
            if spins > 100:  # after a short spin, sleep so that waiting ranks leave the CPU to others
                delay = min(2e-4, delay * 2 or 2e-6)
                time.sleep(delay)
            if time.monotonic() > deadline:
                self.broken = (
                    f"[Rank {self.rank}] {what} timed out after {self.timeout_s:g} seconds: this rank (of "
                    f"{self.world_size}) waited for the other processes, which have probably crashed, exited "
                    "early or are stuck. Hint: look at the other ranks' output for the first error; every rank "
                    "must call the same collectives in the same order. The process group is unusable now and "
                    "the MPI job is aborted when this process exits."
                )
                raise DistBackendError(self.broken)

    def _start(self, request, what: str, after=None) -> Work:
        def wait():
            self._wait(request, what)
            if after is not None:
                after()

        return Work(wait, lambda: bool(request.Test()))

    def _abort_on_uncaught(self, *exc_info):
        self._previous_excepthook(*exc_info)
        sys.stderr.write(f"[Rank {self.rank}] uncaught exception: aborting all {self.world_size} ranks "
                         "of the MPI job\n")
        sys.stdout.flush()
        sys.stderr.flush()
        self.comm.Abort(1)

    def _abort_if_broken(self):
        if self.broken:
            sys.stdout.flush()
            sys.stderr.flush()
            self.comm.Abort(1)

    # ---- collectives on contiguous arrays -----------------------------------------------------
    def all_reduce(self, arr, op: ReduceOp) -> Work:
        """Start reducing `arr` in place over all ranks; returns a `Work` to wait on."""
        buf, finish = _staging(arr)
        mpi_op = self._ops[op]
        if op is ReduceOp.AVG and buf.dtype.kind not in "fc":
            raise ValueError("ReduceOp.AVG needs a floating-point tensor (integers cannot hold the average)")
        req = self.comm.Iallreduce(self.MPI.IN_PLACE, buf, op=mpi_op)

        def after():
            if op is ReduceOp.AVG:
                buf[...] /= self.world_size
            finish()

        return self._start(req, "all_reduce", after)

    def reduce(self, arr, dst: int, op: ReduceOp) -> Work:
        """Start reducing `arr` onto rank `dst`; returns a `Work` to wait on."""
        buf, finish = _staging(arr)
        if self.rank == dst:
            req = self.comm.Ireduce(self.MPI.IN_PLACE, buf, op=self._ops[op], root=dst)
        else:
            req = self.comm.Ireduce(buf, None, op=self._ops[op], root=dst)

        def after():
            if self.rank == dst:
                if op is ReduceOp.AVG:
                    buf[...] /= self.world_size
                finish()

        return self._start(req, "reduce", after)

    def broadcast(self, arr, src: int) -> Work:
        """Start copying rank `src`'s `arr` to every rank; returns a `Work` to wait on."""
        buf, finish = _staging(arr)
        return self._start(self.comm.Ibcast(buf, root=src), "broadcast", finish)

    def all_gather(self, out, arr) -> Work:
        """Gather `arr` from every rank into `out` (shape `(world_size, *arr.shape)`)."""
        send, _ = _staging(arr)
        recv, finish = _staging(out)
        return self._start(self.comm.Iallgather(send, recv), "all_gather", finish)

    def barrier(self) -> Work:
        """Start a barrier (every rank must arrive); returns a `Work` to wait on."""
        return self._start(self.comm.Ibarrier(), "barrier")

    def close(self):
        """Free the communicator (at `destroy_process_group`)."""
        if self._previous_excepthook is not None and sys.excepthook == self._abort_on_uncaught:
            sys.excepthook = self._previous_excepthook
        if not self.broken:
            self.comm.Free()
        atexit.unregister(self._abort_if_broken)
        if self.broken:  # keep the abort: the job must not hang in MPI_Finalize
            atexit.register(self._abort_if_broken)


def _staging(arr):
    """A contiguous buffer MPI can use for `arr`, and a function that copies results back into `arr`."""
    if arr.dtype in _NATIVE and arr.flags.c_contiguous and arr.flags.writeable:
        return arr, lambda: None
    buf = np.ascontiguousarray(arr, dtype=arr.dtype if arr.dtype in _NATIVE else np.float32)

    def finish():
        arr[...] = buf.astype(arr.dtype, copy=False)

    return buf, finish
