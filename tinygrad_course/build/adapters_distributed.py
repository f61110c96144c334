"""Adapters for chapter 09's components: from the exercise's simulated ranks (a list holding every rank's
tensor, changed in place) to `tc.distributed`'s collectives (each process holds its own rank's tensor).

The learner's `all_reduce(ranks, op)` and `broadcast(ranks, src)` take the whole world's tensors at once.
Inside the framework each process has only its own, so the adapted version first gathers every rank's
tensor with the reference `all_gather`, runs the learner's function on that list, as every rank does, and
keeps its own rank's entry. The result is the learner's arithmetic on real ranks' data; what the exercise
does not cover (other reduce ops, other groups, arguments that are not tensors) stays the reference's.
"""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..distributed import collectives
from ..distributed.process_group import get_rank, get_world_size, group as _group
from ..distributed.reduce_op import ReduceOp
from ..distributed.work import Work
from ..seams import reference
from ..tensor import Tensor

_OPS = {ReduceOp.SUM: "sum", ReduceOp.AVG: "avg", ReduceOp.MAX: "max"}  # the ops the exercise implements


def _gathered(tensor) -> list:
    """Every rank's copy of `tensor`, in rank order (the reference all_gather)."""
    ranks = [tensor.detach().clone() for _ in range(get_world_size())]
    collectives.all_gather(ranks, tensor.detach())
    return ranks


def _keep_own(tensor, ranks, what: str) -> None:
    """Copy this rank's entry of the learner's result into `tensor` (in place, as the collective does)."""
    mine = ranks[get_rank()]
    if not isinstance(mine, Tensor) or tuple(mine.shape) != tuple(tensor.shape):
        got = tuple(mine.shape) if isinstance(mine, Tensor) else type(mine).__name__
        raise RuntimeError(f"{what} left rank {get_rank()}'s entry as {got}, expected a tensor of shape "
                           f"{tuple(tensor.shape)}")
    with no_grad():
        tensor.copy_(mine)


def _over_ranks(tensor, run, what: str, async_op):
    """Gather every rank's `tensor`, let the learner's `run(ranks)` change the list in place, keep this rank's
    entry; a finished Work for `async_op` (the result is already there)."""
    ranks = _gathered(tensor)
    run(ranks)
    _keep_own(tensor, ranks, what)
    return Work(lambda: None, lambda: True) if async_op else None


def _is_default(group) -> bool:
    return group is None or group is _group.WORLD


def all_reduce(learner):
    """tc.distributed.all_reduce with SUM, AVG or MAX runs the learner's all_reduce(ranks, "sum"/"avg"/"max")
    over every rank's tensor; other ops (MIN, PRODUCT, bitwise) and an integer AVG stay the reference's."""
    original = reference("all_reduce")

    def run(tensor, op=ReduceOp.SUM, group=None, async_op=False):
        name = _OPS.get(op)
        if (name is None or not isinstance(tensor, Tensor) or not _is_default(group)
                or (op is ReduceOp.AVG and not tensor.is_floating_point())):
            return original(tensor, op, group, async_op)
        return _over_ranks(tensor, lambda ranks: learner(ranks, name), "your all_reduce", async_op)

    return run


def broadcast(learner):
    """tc.distributed.broadcast runs the learner's broadcast(ranks, src) over every rank's tensor (a src out of
    range, another group or a non-tensor get the reference's error)."""
    original = reference("broadcast")

    def run(tensor, src, group=None, async_op=False):
        if not isinstance(tensor, Tensor) or not _is_default(group) or not 0 <= src < get_world_size():
            return original(tensor, src, group, async_op)
        return _over_ranks(tensor, lambda ranks: learner(ranks, src), "your broadcast", async_op)

    return run
