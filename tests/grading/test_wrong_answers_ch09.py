"""A catalogue of wrong answers for exercises 09.4-09.6 (a DDP wrapper, collectives over simulated ranks, the throughput model): each realistic mistake fails its check with a
message that names it, the stub fails as not implemented, and the reference solution passes."""
import pytest

import tinygrad_course as tc
from tinygrad_course.grading import check

from .wrong_answers import both_failures, unwritten_stub

_fails = both_failures  # the mistake named first, the hint from the second failure on
_stub = unwritten_stub


# ---------------------------------------------------------------- 09.4 a small DDP wrapper

class DDPRight:
    broadcast, divide, average, shard = True, True, True, True

    def __init__(self, replicas):
        self.replicas = replicas
        if self.broadcast:
            with tc.no_grad():
                for group in zip(*(list(m.parameters()) for m in replicas)):
                    for p in group[1:]:
                        p.copy_(group[0])

    def forward(self, x):
        shards = x.chunk(len(self.replicas)) if self.shard else [x] * len(self.replicas)
        return [m(s) for m, s in zip(self.replicas, shards)]

    def backward(self, losses):
        for loss in losses:
            loss.backward()
        if not self.average:
            return
        for group in zip(*(list(m.parameters()) for m in self.replicas)):
            total = sum(p.grad for p in group)
            mean = total / len(group) if self.divide else total
            for p in group:
                p.grad = mean.clone()


def _ddp(**flags):
    return type("SimpleDDP", (DDPRight,), flags)


def test_09_4_reference_passes():
    check("09.4", DDPRight)


@pytest.mark.parametrize("wrong, phrase", [
    (_ddp(broadcast=False), "must copy replica 0's parameters into every other replica"),
    (_ddp(divide=False), "that is the sum of the replicas' gradients"),
    (_ddp(average=False), "that is replica 0's own gradient"),
    (_ddp(shard=False), "replica r gets x.chunk(len(replicas))[r]"),
    (_stub, "not implemented yet"),
])
def test_09_4_wrong_answers_are_named(wrong, phrase):
    message = _fails("09.4", wrong)
    assert phrase in message, message


# ---------------------------------------------------------------- 09.5 collectives over simulated ranks

def _reduce(stacked, op):
    return {"sum": stacked.sum(0), "avg": stacked.mean(0), "max": stacked.max(0).values}[op]


def all_reduce_right(ranks, op="sum"):
    result = _reduce(tc.stack([t.detach() for t in ranks]), op)
    with tc.no_grad():
        for t in ranks:
            t.copy_(result)


def broadcast_right(ranks, src):
    source = ranks[src].detach().clone()
    with tc.no_grad():
        for t in ranks:
            t.copy_(source)


def all_reduce_returns_new(ranks, op="sum"):
    return [_reduce(tc.stack(ranks), op).clone() for _ in ranks]


def all_reduce_recomputes(ranks, op="sum"):
    with tc.no_grad():
        for t in ranks:
            t.copy_(_reduce(tc.stack([r.detach() for r in ranks]), op))


def broadcast_from_zero(ranks, src):
    broadcast_right(ranks, 0)


def test_09_5_reference_passes():
    check("09.5", all_reduce_right, broadcast_right)


@pytest.mark.parametrize("reduce, bcast, phrase", [
    (all_reduce_returns_new, broadcast_right, "rank 0's tensor is unchanged"),
    (all_reduce_recomputes, broadcast_right, "you reduced again after rank 0's tensor was overwritten"),
    (all_reduce_right, broadcast_from_zero, "broadcast from src, not from rank 0"),
    (_stub, _stub, "not implemented yet"),
])
def test_09_5_wrong_answers_are_named(reduce, bcast, phrase):
    message = _fails("09.5", reduce, bcast)
    assert phrase in message, message
    assert "ranks with values" in message or "not implemented" in message, message


# ---------------------------------------------------------------- 09.6 the throughput of data-parallel training

def throughput(batch, compute, n, world, bandwidth, latency, per_rank=False, no_latency=False, values=False,
               whole_gradient=False):
    steps = 2 * (world - 1)
    fraction = (2 if world > 1 else 0) if whole_gradient else 2 * (world - 1) / world
    sent = fraction * n * (1 if values else 4)
    comm = (0 if no_latency else steps * latency) + sent / bandwidth
    return (1 if per_rank else world) * batch / (compute + comm)


def test_09_6_reference_passes():
    check("09.6", throughput)


@pytest.mark.parametrize("flag, phrase", [
    ("per_rank", "that is one rank's throughput"),
    ("no_latency", "the latency term is missing"),
    ("values", "counted in values, not bytes"),
    ("whole_gradient", "not all of it twice"),
])
def test_09_6_wrong_answers_are_named(flag, phrase):
    message = _fails("09.6", lambda *args: throughput(*args, **{flag: True}))
    assert phrase in message, message
    assert "ddp_throughput(batch_per_rank=" in message, message


def test_09_6_stub_fails():
    assert "not implemented yet" in _fails("09.6", _stub)
