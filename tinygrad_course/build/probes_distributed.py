"""Probes of chapter 09's components, run through the framework: `tc.distributed`'s collectives in a
simulated group (this process as one rank of three, the others as data; see simulated_group.py), one
`DistributedDataParallel` step in a simulated world of two, and `DistributedSampler`'s shards.

Each returns plain data (a dict of NumPy arrays), compared with the reference's run by `probes.compare`.
"""
from __future__ import annotations

import numpy as np

from .. import distributed as dist
from .. import nn
from ..factories import arange, randn, tensor
from ..generator import manual_seed
from ..nn.parallel import DistributedDataParallel
from ..utils.data import DistributedSampler
from .simulated_group import distinct_peers, mirror_peers, simulated_world


def _values():
    return tensor([[1.0, -2.0, 3.5], [0.25, 4.0, -1.0]])


def _ddp_step():
    """One DDP step as rank 0 of two simulated ranks holding the same batch: construction broadcasts the
    weights, backward all-reduces one bucket (async) and divides by two."""
    manual_seed(11)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    x = randn(5, 3)
    with simulated_world(0, 2, mirror_peers):
        ddp = DistributedDataParallel(model)
        try:
            ((ddp(x) - 1.0) ** 2).mean().backward()
        except RuntimeError:  # e.g. DDP's bucket check when the sums are wrong: the other keys say where
            return np.full(sum(p.numel() for p in model.parameters()), np.nan)
    return np.concatenate([p.grad.numpy().ravel() for p in model.parameters()]).astype(np.float64)


def all_reduce():
    """dist.all_reduce with SUM, AVG, MAX (the learner's) and MIN (the reference's), async and on a
    transposed view, as rank 1 of 3; then DDP's gradient all-reduce."""
    out = {}
    with simulated_world(1, 3):
        for op in (dist.ReduceOp.SUM, dist.ReduceOp.AVG, dist.ReduceOp.MAX, dist.ReduceOp.MIN):
            t = _values()
            dist.all_reduce(t, op=op)
            out[op.name.lower()] = t.numpy()
        t = _values()
        dist.all_reduce(t, async_op=True).wait()
        out["async"] = t.numpy()
        base = arange(6.0).reshape(2, 3)
        view = base.t()
        dist.all_reduce(view)
        out["view"] = base.numpy()
    out["ddp_grads"] = _ddp_step()
    return out


def broadcast():
    """dist.broadcast from every rank of a simulated world of 3 (this process is rank 1); then DDP's
    construction, which broadcasts rank 0's weights."""
    out = {}
    with simulated_world(1, 3):
        for src in range(3):
            t = _values()
            dist.broadcast(t, src=src)
            out[f"src{src}"] = t.numpy()
        t = arange(4.0)
        dist.broadcast(t, 2, async_op=True).wait()
        out["async"] = t.numpy()
    manual_seed(12)
    model = nn.Linear(3, 2)
    with simulated_world(1, 2, _other_weights):
        DistributedDataParallel(model)
    out["ddp_weight"] = model.weight.detach().numpy()
    return out


def _other_weights(r, array):
    """Rank r holds other float32 weights, but the same float64 model signature (DDP compares it first)."""
    return array.copy() if array.dtype == np.float64 else distinct_peers(r, array)


def shard():
    """Every rank's indices from DistributedSampler for several dataset sizes and worlds (padding included;
    drop_last stays the reference's)."""
    out = {}
    for n, world, shuffle in ((10, 3, False), (10, 3, True), (4, 4, False), (2, 5, False), (16, 2, True)):
        data = list(range(n))
        shards = []
        for rank in range(world):
            sampler = DistributedSampler(data, num_replicas=world, rank=rank, shuffle=shuffle, seed=5)
            shards.append(list(sampler))
        out[f"n{n}_w{world}_{'shuffled' if shuffle else 'ordered'}"] = np.array(shards, dtype=np.float64)
    return out


PROBES = {"all_reduce": all_reduce, "broadcast": broadcast, "shard": shard}
