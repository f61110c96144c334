"""The "nccl" backend: collectives on CuPy arrays through NCCL (`cupy.cuda.nccl`), one GPU per process.

Processes are still launched with `mpirun -n N python train.py`; MPI is used only to start up
(rank, world size, which GPU this process gets, and handing NCCL's unique id from rank 0 to the
others). Tensors must be on "cuda". Each collective is queued on the current CUDA stream; waiting
polls a CUDA event against the group's timeout and aborts the NCCL communicator if it expires, so
a dead rank produces a `DistBackendError` rather than a hang.
"""
from __future__ import annotations

import importlib
import time

from .._backend import cupy_module
from .reduce_op import DistBackendError, ReduceOp
from .work import Work


def nccl_available() -> bool:
    """True if CuPy with NCCL support and at least one GPU are present."""
    if cupy_module() is None:
        return False
    try:
        return importlib.import_module("cupy.cuda.nccl").available
    except Exception:
        return False


class NCCLBackend:
    """NCCL communicator spanning the MPI job; one GPU per process (local rank modulo GPU count)."""

    name = "nccl"

    def __init__(self, timeout_s: float, device_id=None):
        cp = cupy_module()
        if cp is None or not nccl_available():
            raise RuntimeError(
                "Distributed package doesn't have NCCL built in. Hint: the nccl backend needs CuPy with NCCL "
                "and NVIDIA GPUs; on CPU processes use init_process_group(backend=\"mpi\")."
            )
        from mpi4py import MPI  # importing initialises MPI, so it happens only here

        nccl = importlib.import_module("cupy.cuda.nccl")
        self.cp, self.nccl = cp, nccl
        world = MPI.COMM_WORLD
        self.rank, self.world_size = world.Get_rank(), world.Get_size()
        local = world.Split_type(MPI.COMM_TYPE_SHARED)
        local_rank = local.Get_rank()
        local.Free()
        if device_id is None:
            device_id = local_rank % cp.cuda.runtime.getDeviceCount()
        self.device = cp.cuda.Device(getattr(device_id, "index", device_id) or 0)
        self.device.use()
        uid = nccl.get_unique_id() if self.rank == 0 else None
        uid = world.bcast(uid, root=0)
        self.comm = nccl.NcclCommunicator(self.world_size, uid, self.rank)
        self.timeout_s = timeout_s
        self.broken = None
        self._ops = {ReduceOp.SUM: nccl.NCCL_SUM, ReduceOp.PRODUCT: nccl.NCCL_PROD,
                     ReduceOp.MIN: nccl.NCCL_MIN, ReduceOp.MAX: nccl.NCCL_MAX}
        if hasattr(nccl, "NCCL_AVG"):
            self._ops[ReduceOp.AVG] = nccl.NCCL_AVG

    def _dtype(self, arr):
        nccl = self.nccl
        table = {"float16": nccl.NCCL_FLOAT16, "float32": nccl.NCCL_FLOAT32, "float64": nccl.NCCL_FLOAT64,
                 "int8": nccl.NCCL_INT8, "uint8": nccl.NCCL_UINT8, "int32": nccl.NCCL_INT32,
                 "int64": nccl.NCCL_INT64}
        if str(arr.dtype) not in table:
            raise TypeError(f"the nccl backend cannot reduce dtype {arr.dtype}")
        return table[str(arr.dtype)]

    def _op(self, op):
        if op not in self._ops:
            raise ValueError(f"ReduceOp.{op.name} is not supported by the nccl backend")
        return self._ops[op]

    def _check(self, arr):
        if not isinstance(arr, self.cp.ndarray):
            raise RuntimeError("No backend type associated with device type cpu. Hint: with backend=\"nccl\" "
                               "tensors must be on the GPU (tensor.to(\"cuda\")); use backend=\"mpi\" for CPU.")
        if not arr.flags.c_contiguous:
            raise ValueError("Tensors must be contiguous")

    def _queued(self, what, after=None) -> Work:
        stream = self.cp.cuda.get_current_stream()
        event = self.cp.cuda.Event(disable_timing=True)
        event.record(stream)

        def wait():
            if self.broken:
                raise DistBackendError(self.broken)
            deadline = time.monotonic() + self.timeout_s
            while not event.done:
                if time.monotonic() > deadline:
                    self.broken = (f"[Rank {self.rank}] {what} timed out after {self.timeout_s:g} seconds waiting "
                                   "for the other GPUs' processes (crashed, exited early or stuck?). The NCCL "
                                   "communicator was aborted.")
                    self.comm.abort()
                    raise DistBackendError(self.broken)
                time.sleep(1e-4)
            if after is not None:
                after()

        return Work(wait, lambda: event.done)

    def all_reduce(self, arr, op) -> Work:
        """Queue an in-place all-reduce of `arr` on the current stream; returns a `Work`."""
        self._check(arr)
        stream = self.cp.cuda.get_current_stream().ptr
        self.comm.allReduce(arr.data.ptr, arr.data.ptr, arr.size, self._dtype(arr), self._op(op), stream)
        return self._queued("all_reduce")

    def reduce(self, arr, dst, op) -> Work:
        """Queue an in-place reduce of `arr` onto rank `dst`; returns a `Work`."""
        self._check(arr)
        stream = self.cp.cuda.get_current_stream().ptr
        self.comm.reduce(arr.data.ptr, arr.data.ptr, arr.size, self._dtype(arr), self._op(op), dst, stream)
        return self._queued("reduce")

    def broadcast(self, arr, src) -> Work:
        """Queue a copy of rank `src`'s `arr` to every rank; returns a `Work`."""
        self._check(arr)
        stream = self.cp.cuda.get_current_stream().ptr
        self.comm.broadcast(arr.data.ptr, arr.data.ptr, arr.size, self._dtype(arr), src, stream)
        return self._queued("broadcast")

    def all_gather(self, out, arr) -> Work:
        """Queue gathering every rank's array into `out`; returns a `Work`."""
        self._check(arr)
        self._check(out)
        stream = self.cp.cuda.get_current_stream().ptr
        self.comm.allGather(arr.data.ptr, out.data.ptr, arr.size, self._dtype(arr), stream)
        return self._queued("all_gather")

    def barrier(self) -> Work:
        """A barrier: an all-reduce of one element that every rank must join; returns a `Work`."""
        token = self.cp.zeros(1, dtype=self.cp.float32)
        return self.all_reduce(token, ReduceOp.SUM)

    def close(self):
        """Destroy the NCCL communicator (at `destroy_process_group`)."""
        if not self.broken:
            self.comm.destroy()
