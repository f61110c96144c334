"""Collective operations on tensors: all_reduce, broadcast, reduce, all_gather, barrier.

Each one is called by every rank, in the same order, and works in place on the tensor's storage
like `torch.distributed`: `all_reduce(t)` leaves the sum over all ranks in `t` on every rank.
With `async_op=True` it returns a `Work` handle to `wait()` on; otherwise it returns None when done.

`all_reduce` and `broadcast` are build-mode components (`seams.component`): a learner's version from
chapter 09 runs in their place when it is installed, so `DistributedDataParallel`, which calls them, runs
on it too.
"""
from __future__ import annotations

from ..seams import component
from ..tensor import Tensor
from .process_group import _backend, _check_group
from .reduce_op import ReduceOp
from .work import Work, _Chain


def _target(tensor, what):
    """The tensor's array (contiguous, writeable) and a function finishing the in-place update."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{what}(): argument 'tensor' must be Tensor, not {type(tensor).__name__}")
    data = tensor._data
    if not data.flags.writeable:
        raise RuntimeError(f"{what}(): the tensor's storage is read-only (an expanded view?); clone() it first.")
    xp = tensor._xp
    buf = data if data.flags.c_contiguous else xp.ascontiguousarray(data)

    def finish():
        if buf is not data:
            data[...] = buf
        tensor._version[0] += 1

    return buf, finish


def _run(work: Work, finish, async_op):
    work = _Chain(work, finish)
    if async_op:
        return work
    work.wait()
    return None


@component("all_reduce")
def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Combine `tensor` across all ranks with `op` (default: sum) and store the result in it on every rank."""
    _check_group(group)
    buf, finish = _target(tensor, "all_reduce")
    return _run(_backend().all_reduce(buf, op), finish, async_op)


def reduce(tensor, dst, op=ReduceOp.SUM, group=None, async_op=False):
    """Combine `tensor` across ranks with `op`; only rank `dst` receives the result."""
    _check_group(group)
    buf, finish = _target(tensor, "reduce")
    return _run(_backend().reduce(buf, dst, op), finish, async_op)


@component("broadcast")
def broadcast(tensor, src, group=None, async_op=False):
    """Copy rank `src`'s `tensor` into `tensor` on every other rank."""
    _check_group(group)
    backend = _backend()
    if not 0 <= src < backend.world_size:
        raise ValueError(f"Invalid src rank {src}: the world has {backend.world_size} ranks")
    buf, finish = _target(tensor, "broadcast")
    return _run(backend.broadcast(buf, src), finish, async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Fill `tensor_list[r]` with rank r's `tensor`, on every rank."""
    _check_group(group)
    backend = _backend()
    if len(tensor_list) != backend.world_size:
        raise ValueError(f"all_gather(): tensor_list has {len(tensor_list)} tensors but the world has "
                         f"{backend.world_size} ranks")
    for t in tensor_list:
        if tuple(t.shape) != tuple(tensor.shape) or t.dtype != tensor.dtype:
            raise ValueError("all_gather(): every tensor in tensor_list must have the input's shape and dtype")
    xp = tensor._xp
    out = xp.empty((backend.world_size,) + tuple(tensor.shape), dtype=tensor._data.dtype)

    def finish():
        for r, t in enumerate(tensor_list):
            t._data[...] = out[r]
            t._version[0] += 1

    return _run(backend.all_gather(out, xp.ascontiguousarray(tensor._data)), finish, async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Concatenate every rank's `input_tensor` along dim 0 into `output_tensor`."""
    _check_group(group)
    backend = _backend()
    expected = (backend.world_size * input_tensor.shape[0],) + tuple(input_tensor.shape[1:]) \
        if input_tensor.ndim else (backend.world_size,)
    if tuple(output_tensor.shape) != expected:
        raise ValueError(f"all_gather_into_tensor(): output shape {list(output_tensor.shape)} should be "
                         f"{list(expected)}")
    buf, finish = _target(output_tensor, "all_gather_into_tensor")
    out = buf.reshape((backend.world_size,) + tuple(input_tensor.shape))
    src = input_tensor._xp.ascontiguousarray(input_tensor._data)
    return _run(backend.all_gather(out, src), finish, async_op)


def barrier(group=None, async_op=False, device_ids=None):
    """Wait until every rank has reached this point."""
    _check_group(group)
    work = _backend().barrier()
    if async_op:
        return work
    work.wait()
    return None
