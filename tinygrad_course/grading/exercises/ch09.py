"""Chapter 09 (data-parallel training): checks for gradient averaging across model replicas, the
DistributedSampler sharding rule, and a simulated ring all-reduce.

The averaging is used for real: two simulated workers train on their own shards of the digits and must
stay identical to each other and to one model trained on the combined batches.
"""
import numpy as np

import tinygrad_course as tc
from tinygrad_course.utils.data import DistributedSampler

from .. import mistakes
from ..registry import exercise
from .ch03 import digits


def _model(seed=0):
    tc.manual_seed(seed)
    return tc.nn.Sequential(tc.nn.Linear(64, 16), tc.nn.Tanh(), tc.nn.Linear(16, 10))


def _flat(model):
    return np.concatenate([p.detach().numpy().ravel() for p in model.parameters()])


@exercise("09.1", title="average gradients across replicas", points=3)
def average_check(t, average_gradients):
    X, y = digits(0, 256)
    workers = 2
    replicas = [_model() for _ in range(workers)]
    opts = [tc.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) for m in replicas]
    single = _model()
    single_opt = tc.optim.SGD(single.parameters(), lr=0.1, momentum=0.9)
    for step in range(4):
        batch = slice(step * 64, (step + 1) * 64)
        xb, yb = X[batch], y[batch]
        for r, (m, o) in enumerate(zip(replicas, opts)):
            o.zero_grad()
            tc.nn.functional.cross_entropy(m(xb[r::workers]), yb[r::workers]).backward()
        if step == 0:
            local = [m[0].weight.grad.numpy().copy() for m in replicas]
        average_gradients(replicas)
        if step == 0:
            t.close(replicas[0][0].weight.grad, (local[0] + local[1]) / 2,
                    what="replica 0's gradient for layer 0 after averaging",
                    mistakes=[mistakes.custom(lambda g, e: np.allclose(g, 2 * e, rtol=1e-4),
                                              "that is the sum: divide by the number of replicas")])
            t.close(replicas[1][0].weight.grad, replicas[0][0].weight.grad,
                    what="replica 1's gradient (must equal replica 0's)", atol=0)
        for o in opts:
            o.step()
        single_opt.zero_grad()
        tc.nn.functional.cross_entropy(single(xb), yb).backward()
        single_opt.step()
    t.close(_flat(replicas[1]), _flat(replicas[0]), what="the replicas' weights after 4 steps", atol=0)
    t.close(_flat(replicas[0]), _flat(single), what="weights vs one model trained on the combined batches",
            rtol=1e-4, atol=1e-5)
    three = [_model(seed=s) for s in range(3)]
    for i, m in enumerate(three):
        for p in m.parameters():
            p.grad = tc.full(tuple(p.shape), float(i))
    average_gradients(three)
    t.close(three[2][2].bias.grad, np.ones(10), what="the average of gradients 0, 1 and 2 (three replicas)")


@exercise("09.2", title="shard the dataset like DistributedSampler", points=2)
def shard_check(t, shard):
    t.equal(list(shard(list(range(10)), 0, 2)), [0, 2, 4, 6, 8], what="shard(range(10), rank=0, world_size=2)")
    for n, world in [(10, 3), (7, 4), (3, 4), (12, 5)]:
        for rank in range(world):
            expected = list(DistributedSampler(range(n), num_replicas=world, rank=rank, shuffle=False))
            t.equal(list(shard(list(range(n)), rank, world)), expected,
                    what=f"shard(range({n}), rank={rank}, world_size={world})",
                    hint="pad by repeating indices from the start until the length is a multiple of "
                         "world_size, then take every world_size-th index starting at rank")
    t.equal(list(shard([5, 9, 1, 7], 1, 2)), [9, 7], what="shard([5, 9, 1, 7], rank=1, world_size=2)",
            hint="shard the given list (it may be shuffled), not range(len(...))")


@exercise("09.3", title="ring all-reduce, simulated", points=3)
def ring_check(t, ring_all_reduce):
    rng = np.random.default_rng(0)
    for world, n in [(2, 6), (3, 9), (4, 8), (3, 10)]:
        arrays = [rng.standard_normal(n) for _ in range(world)]
        originals = [a.copy() for a in arrays]
        results, sent = ring_all_reduce(arrays)
        total = np.sum(originals, axis=0)
        t.equal(len(results), world, what=f"number of results for {world} ranks")
        for r in range(world):
            t.close(results[r], total, what=f"rank {r}'s result ({world} ranks, {n} values)")
        if n % world == 0:
            t.equal([int(s) for s in sent], [2 * (world - 1) * n // world] * world,
                    what=f"values sent by each rank ({world} ranks, {n} values)",
                    hint="each of the 2 * (world - 1) steps sends one chunk of n / world values")
