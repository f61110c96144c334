"""Chapter 09 (data-parallel training): checks for gradient averaging across model replicas, the
DistributedSampler sharding rule, a simulated ring all-reduce, a small DDP wrapper, in-place collectives
over simulated ranks, and the throughput model of data-parallel training.

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
            given = {"replica 0's layer-0 gradient": local[0], "replica 1's layer-0 gradient": local[1]}
        average_gradients(replicas)
        if step == 0:
            t.close(replicas[0][0].weight.grad, (local[0] + local[1]) / 2,
                    what="replica 0's gradient for layer 0 after average_gradients(2 replicas)", given=given,
                    mistakes=[mistakes.custom(lambda g, e: np.allclose(g, 2 * e, rtol=1e-4),
                                              "that is the sum of the replicas' gradients, not their average",
                                              "divide the sum by the number of replicas")])
            t.close(replicas[1][0].weight.grad, replicas[0][0].weight.grad,
                    what="replica 1's gradient (must equal replica 0's)", atol=0, given=given,
                    mistakes=[mistakes.custom(lambda g, e: np.array_equal(g, local[1]),
                                              "replica 1 still holds its own gradient: only replica 0's was "
                                              "replaced by the average",
                                              "assign the average to p.grad of EVERY replica's parameter")])
        for o in opts:
            o.step()
        single_opt.zero_grad()
        tc.nn.functional.cross_entropy(single(xb), yb).backward()
        single_opt.step()
    run = ("2 replicas of Linear(64, 16), Tanh, Linear(16, 10), SGD(lr=0.1, momentum=0.9), 4 steps on batches of "
           "64 digits, each replica taking every other sample")
    t.close(_flat(replicas[1]), _flat(replicas[0]), what="the replicas' weights after 4 steps", atol=0, given=run)
    t.close(_flat(replicas[0]), _flat(single), what="weights vs one model trained on the combined batches",
            rtol=1e-4, atol=1e-5, given=run)
    three = [_model(seed=s) for s in range(3)]
    for i, m in enumerate(three):
        for p in m.parameters():
            p.grad = tc.full(tuple(p.shape), float(i))
    average_gradients(three)
    t.close(three[2][2].bias.grad, np.ones(10), what="replica 2's bias gradient after averaging three replicas",
            given="three replicas whose every gradient is filled with 0.0, 1.0 and 2.0 (replica 0, 1, 2)",
            mistakes=[mistakes.custom(lambda g, e: np.allclose(g, 3 * e), "that is the sum of the three gradients, "
                                      "not their average", "divide the sum by the number of replicas")])


@exercise("09.2", title="shard the dataset like DistributedSampler", points=2)
def shard_check(t, shard):
    first = list(shard(list(range(10)), 0, 2))
    t.equal(first, [0, 2, 4, 6, 8], what="shard(range(10), rank=0, world_size=2)",
            why="rank 0 got a contiguous block: DistributedSampler deals the indices out in turn (round robin)"
                if first == [0, 1, 2, 3, 4] else None)
    for n, world in [(10, 3), (7, 4), (3, 4), (12, 5)]:
        for rank in range(world):
            expected = list(DistributedSampler(range(n), num_replicas=world, rank=rank, shuffle=False))
            mine = list(shard(list(range(n)), rank, world))
            t.equal(mine, expected,
                    what=f"shard(range({n}), rank={rank}, world_size={world})",
                    why=("this rank got fewer indices than the others: the list was not padded to a multiple of "
                         "world_size" if len(mine) < len(expected) and mine == expected[:len(mine)] else None),
                    hint="pad by repeating indices from the start until the length is a multiple of "
                         "world_size, then take every world_size-th index starting at rank")
    given_list = list(shard([5, 9, 1, 7], 1, 2))
    t.equal(given_list, [9, 7], what="shard([5, 9, 1, 7], rank=1, world_size=2)",
            why="these are positions in the list, not its entries" if given_list == [1, 3] else None,
            hint="shard the given list (it may be shuffled), not range(len(...))")


def _only_own_chunk_complete(got, expected, rank, world) -> bool:
    """The result is right in exactly one of the `world` chunks (np.array_split's) and wrong in the others."""
    right = [np.allclose(g, e) for g, e in zip(np.array_split(got, world), np.array_split(expected, world))]
    return sum(right) == 1


@exercise("09.3", title="ring all-reduce, simulated", points=3)
def ring_check(t, ring_all_reduce):
    rng = np.random.default_rng(0)
    for world, n in [(2, 6), (3, 9), (4, 8), (3, 10)]:
        arrays = [rng.standard_normal(n) for _ in range(world)]
        originals = [a.copy() for a in arrays]
        given = {f"rank {r}'s array": a for r, a in enumerate(originals)}
        results, sent = ring_all_reduce(arrays)
        total = np.sum(originals, axis=0)
        t.equal(len(results), world, what=f"number of results for {world} ranks", given=given)
        for r in range(world):
            t.close(results[r], total, what=f"rank {r}'s result ({world} ranks, {n} values)", given=given,
                    mistakes=[mistakes.custom(
                        lambda g, e: _only_own_chunk_complete(g, e, r, world),
                        "only one chunk of the result holds the full sum: that is the end of the reduce-scatter; "
                        "the all-gather that passes the finished chunks round the ring is missing",
                        "after world - 1 reduce-scatter steps, run world - 1 more steps that copy the finished "
                        "chunks to the next rank")])
        if n % world == 0:
            t.equal([int(s) for s in sent], [2 * (world - 1) * n // world] * world,
                    what=f"values sent by each rank ({world} ranks, {n} values)", given=given,
                    why=("each step was counted as sending the whole vector instead of one chunk"
                         if [int(s) for s in sent] == [2 * (world - 1) * n] * world else None),
                    hint="each of the 2 * (world - 1) steps sends one chunk of n / world values")


@exercise("09.4", title="a small DDP wrapper", points=3)
def ddp_check(t, SimpleDDP):
    X, y = digits(0, 256)
    world = 2
    replicas = [_model(seed=r) for r in range(world)]  # every process initialises its own copy
    start = _flat(replicas[0])
    ddp = SimpleDDP(replicas)
    t.close(_flat(replicas[1]), start, atol=0,
            what="replica 1's weights after SimpleDDP(replicas) (replicas built with different seeds)",
            mistakes=[mistakes.custom(lambda g, e: True, "the copies start different: replica 1 kept its own "
                                                         "initial weights",
                                      "__init__ must copy replica 0's parameters into every other replica (the "
                                      "broadcast)")])
    t.close(_flat(replicas[0]), start, atol=0, what="replica 0's weights after SimpleDDP(replicas) (must not change)")
    single = _model(seed=0)
    opts = [tc.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) for m in replicas]
    single_opt = tc.optim.SGD(single.parameters(), lr=0.1, momentum=0.9)
    for step in range(3):
        xb, yb = X[step * 64:(step + 1) * 64], y[step * 64:(step + 1) * 64]
        outputs = ddp.forward(xb)
        t.equal(len(outputs), world, what=f"the number of outputs ddp.forward(x of shape {tuple(xb.shape)}) returns "
                                          f"for {world} replicas")
        for r in range(world):
            t.equal(tuple(outputs[r].shape), (64 // world, 10),
                    what=f"the shape of replica {r}'s output for x of shape {tuple(xb.shape)}",
                    hint="each replica sees only its shard: replica r gets x.chunk(len(replicas))[r]")
        with tc.no_grad():
            t.close(outputs[1], replicas[1](xb.chunk(world)[1]), what="replica 1's output (its shard: x.chunk(2)[1])")
        for o in opts:
            o.zero_grad()
        losses = [tc.nn.functional.cross_entropy(out, shard) for out, shard in zip(outputs, yb.chunk(world))]
        local = []
        ddp.backward(losses)
        if step == 0:
            check_model = _model(seed=0)
            for out_shard, label_shard in zip(xb.chunk(world), yb.chunk(world)):
                check_model.zero_grad()
                tc.nn.functional.cross_entropy(check_model(out_shard), label_shard).backward()
                local.append(check_model[0].weight.grad.numpy().copy())
            t.close(replicas[0][0].weight.grad, (local[0] + local[1]) / 2,
                    what="replica 0's gradient for layer 0 after ddp.backward(losses) on the first batch",
                    mistakes=[mistakes.custom(lambda g, e: np.allclose(g, 2 * e, rtol=1e-4),
                                              "that is the sum of the replicas' gradients, not their average",
                                              "divide the sum by the number of replicas"),
                              mistakes.custom(lambda g, e, lo=local[0]: np.allclose(g, lo, rtol=1e-4),
                                              "that is replica 0's own gradient: it was not averaged with the others",
                                              "average the gradients after every replica's backward")])
        for o in opts:
            o.step()
        single_opt.zero_grad()
        tc.nn.functional.cross_entropy(single(xb), yb).backward()
        single_opt.step()
    t.close(_flat(replicas[1]), _flat(replicas[0]), what="the replicas' weights after 3 steps", atol=0)
    t.close(_flat(replicas[0]), _flat(single), rtol=1e-4, atol=1e-5,
            what="weights after 3 steps vs one process trained on the whole batches")


def _ranks(values):
    return [tc.tensor(v, dtype=tc.float32) for v in values]


@exercise("09.5", title="collectives over simulated ranks", points=2)
def collectives_check(t, all_reduce, broadcast):
    values = [[1.0, -2.0, 3.0], [4.0, 5.0, -6.0], [0.5, 0.0, 9.0]]
    array = np.array(values)
    for op, expected in [("sum", array.sum(0)), ("avg", array.mean(0)), ("max", array.max(0))]:
        ranks = _ranks(values)
        objects = list(ranks)
        returned = all_reduce(ranks, op)
        t.equal([a is b for a, b in zip(ranks, objects)], [True] * 3,
                what=f"whether each entry of the list is still the same tensor object after all_reduce(ranks, {op!r}) "
                     f"(a collective changes the tensors in place)")
        for r in range(3):
            if r == 0 and np.allclose(ranks[0].numpy(), array[0]):
                t.fail(f"all_reduce(ranks with values {values}, {op!r})",
                       f"rank 0's tensor is unchanged ({values[0]}){' though you returned a result' if returned is not None else ''}",
                       hint="a collective changes every rank's tensor in place (copy_ under no_grad)")
            t.close(ranks[r], expected, what=f"rank {r}'s tensor after all_reduce(ranks with values {values}, {op!r})",
                    mistakes=[mistakes.custom(
                        lambda g, e, r=r: r > 0 and not np.allclose(g, e),
                        "rank 0 is right but a later rank is not: you reduced again after rank 0's tensor was "
                        "overwritten",
                        "compute the result once, from the original values, then copy it to every rank")])
    ranks = _ranks(values)
    broadcast(ranks, 1)
    for r in range(3):
        t.close(ranks[r], array[1], what=f"rank {r}'s tensor after broadcast(ranks with values {values}, src=1)",
                mistakes=[mistakes.custom(lambda g, e: np.allclose(g, array[0]),
                                          "that is rank 0's tensor, not the tensor of src=1",
                                          "broadcast from src, not from rank 0")])


def _throughput(batch_per_rank, compute_s, n_params, world, bandwidth, latency):
    comm = 0.0 if world == 1 else 2 * (world - 1) * latency + 2 * (world - 1) / world * n_params * 4 / bandwidth
    return world * batch_per_rank / (compute_s + comm)


@exercise("09.6", title="the throughput of data-parallel training", points=2)
def throughput_check(t, ddp_throughput):
    cases = [(64, 0.05, 1_000_000, 1, 1e9, 1e-4), (64, 0.05, 1_000_000, 2, 1e9, 1e-4),
             (32, 0.02, 25_000_000, 4, 10e9, 5e-5), (128, 0.2, 100_000, 8, 1e9, 1e-3)]
    for batch, compute, n, world, bandwidth, latency in cases:
        args = (batch, compute, n, world, bandwidth, latency)
        what = (f"ddp_throughput(batch_per_rank={batch}, compute_s={compute}, n_params={n:_}, world={world}, "
                f"bandwidth={bandwidth:g}, latency={latency:g})")
        try:
            got = ddp_throughput(*args)
        except NotImplementedError:
            raise
        except Exception as exc:
            t.fail(what, f"your code raised {type(exc).__name__}: {exc}")
        comm = 2 * (world - 1) / world * n * 4 / bandwidth
        alternatives = [
            (batch / (compute + comm + 2 * (world - 1) * latency),
             "that is one rank's throughput, not the throughput of all the ranks together",
             "all ranks together process world * batch_per_rank samples per step"),
            (world * batch / (compute + comm), "the latency term is missing",
             "every one of the 2 (W - 1) ring steps pays the latency once"),
            (world * batch / (compute + comm / 4 + 2 * (world - 1) * latency),
             "the communication time is 4 times too short: the data sent is counted in values, not bytes",
             "a float32 gradient is 4 bytes per value"),
            (world * batch / (compute + 2 * n * 4 / bandwidth + 2 * (world - 1) * latency) if world > 1 else None,
             "the communication time is W / (W - 1) times too long: every rank sent the whole gradient twice",
             "each rank sends 2 (W - 1) / W of the gradient in a ring all-reduce, not all of it twice"),
        ]
        t.close(float(got), _throughput(*args), what=what, rtol=1e-6, mistakes=[
            mistakes.custom(lambda g, e, a=a: a is not None and np.allclose(g, a, rtol=1e-6), name, fix)
            for a, name, fix in alternatives])
