"""A catalogue of wrong answers for exercises 07.4-09.6: each realistic mistake fails its check with a message
that names it, the stub fails as not implemented, and the reference solution passes."""
import io
import pickle
import pickletools

import numpy as np
import pytest

from tinygrad_course.grading import CheckFailed, check


def _fails(exercise_id, *objects):
    with pytest.raises(CheckFailed) as info:
        check(exercise_id, *objects)
    return str(info.value)


def _stub(*args, **kwargs):
    raise NotImplementedError("replace this line with your code")


# ---------------------------------------------------------------- 07.4 a safe loader with an allow-list

def _unpickler(allowed_test):
    class Restricted(pickle.Unpickler):
        def find_class(self, module, name):
            if allowed_test(module, name):
                return super().find_class(module, name)
            raise pickle.UnpicklingError(f"global '{module}.{name}' is forbidden")
    return Restricted


def safe_loads_right(data, allowed):
    return _unpickler(lambda m, n: f"{m}.{n}" in allowed)(io.BytesIO(data)).load()


def safe_loads_plain_pickle(data, allowed):
    return pickle.loads(data)


def safe_loads_module_only(data, allowed):
    modules = {a.rsplit(".", 1)[0] for a in allowed}
    return _unpickler(lambda m, n: m in modules)(io.BytesIO(data)).load()


def safe_loads_swallows(data, allowed):
    try:
        return safe_loads_right(data, allowed)
    except pickle.UnpicklingError:
        return None


def safe_loads_value_error(data, allowed):
    class Restricted(pickle.Unpickler):
        def find_class(self, module, name):
            if f"{module}.{name}" in allowed:
                return super().find_class(module, name)
            raise ValueError("not allowed")
    return Restricted(io.BytesIO(data)).load()


def test_07_4_reference_passes():
    check("07.4", safe_loads_right)


@pytest.mark.parametrize("wrong, phrase", [
    (safe_loads_plain_pickle, "the attack succeeded"),
    (safe_loads_module_only, "builtins.exec(...) (the attack succeeded)"),
    (safe_loads_swallows, "instead of raising pickle.UnpicklingError"),
    (safe_loads_value_error, "expected pickle.UnpicklingError"),
    (_stub, "not implemented yet"),
])
def test_07_4_wrong_answers_are_named(wrong, phrase):
    message = _fails("07.4", wrong)
    assert phrase in message, message
    assert "allowed=" in message or "not implemented" in message, message


# ---------------------------------------------------------------- 07.5 a forward pass without the framework

def _forward(arrays, x, relu_between=True, relu_last=False, transpose=True):
    positions = sorted({int(k.split(".")[0]) for k in arrays})
    h = x
    for n, i in enumerate(positions):
        w = arrays[f"{i}.weight"]
        h = h @ (w.T if transpose else w) + arrays[f"{i}.bias"]
        if (relu_between and n < len(positions) - 1) or relu_last and n == len(positions) - 1:
            h = np.maximum(h, 0)
    return h


def test_07_5_reference_passes():
    check("07.5", _forward)


@pytest.mark.parametrize("wrong, phrase", [
    (lambda a, x: _forward(a, x, relu_last=True), "no ReLU after the last Linear"),
    (lambda a, x: _forward(a, x, relu_between=False), "without the ReLU between the Linear layers"),
    (lambda a, x: _forward(a, x, transpose=False), "x of shape (8, 64)"),
    (_stub, "not implemented yet"),
])
def test_07_5_wrong_answers_are_named(wrong, phrase):
    message = _fails("07.5", wrong)
    assert phrase in message, message


def test_07_5_a_transposed_weight_reports_the_error_and_the_shapes():
    message = _fails("07.5", lambda a, x: _forward(a, x, transpose=False))
    assert "ValueError" in message and "'0.weight': (16, 64)" in message, message


# ---------------------------------------------------------------- 07.6 what would this pickle import?

def globals_right(data):
    return sorted({arg.replace(" ", ".") for op, arg, _ in pickletools.genops(data) if op.name == "GLOBAL"})


def globals_with_space(data):
    return sorted({arg for op, arg, _ in pickletools.genops(data) if op.name == "GLOBAL"})


def globals_in_file_order(data):
    return list(dict.fromkeys(arg.replace(" ", ".") for op, arg, _ in pickletools.genops(data) if op.name == "GLOBAL"))


def globals_by_loading(data):
    obj = pickle.loads(data)
    return [f"{type(obj).__module__}.{type(obj).__qualname__}"]


def test_07_6_reference_passes():
    check("07.6", globals_right)


@pytest.mark.parametrize("wrong, phrase", [
    (globals_with_space, "'module name' with a space"),
    (globals_in_file_order, "return a sorted list"),
    (globals_by_loading, "it must only read, never load"),
    (_stub, "not implemented yet"),
])
def test_07_6_wrong_answers_are_named(wrong, phrase):
    message = _fails("07.6", wrong)
    assert phrase in message, message


# ---------------------------------------------------------------- 08.4 a scalar log with smoothing

class ScalarLogRight:
    debias, swap, keep_tensor, one_list = True, False, False, False

    def __init__(self):
        self.records = {}

    def add_scalar(self, tag, value, global_step):
        key = "all" if self.one_list else tag
        self.records.setdefault(key, []).append((global_step, value if self.keep_tensor else float(value)))

    def curve(self, tag):
        records = self.records.get("all" if self.one_list else tag, [])
        return [s for s, _ in records], [v for _, v in records]

    def smoothed(self, tag, weight=0.9):
        w = 1 - weight if self.swap else weight
        out, m = [], 0.0
        for t, v in enumerate(self.curve(tag)[1], start=1):
            m = w * m + (1 - w) * v
            out.append(m / (1 - w ** t) if self.debias else m)
        return out


def _variant(**flags):
    return type("ScalarLog", (ScalarLogRight,), flags)


def test_08_4_reference_passes():
    check("08.4", ScalarLogRight)


@pytest.mark.parametrize("wrong, phrase", [
    (_variant(debias=False), "the average started at 0 and is biased towards it"),
    (_variant(swap=True), "you swapped them"),
    (_variant(keep_tensor=True), "keeps its whole graph"),
    (_variant(one_list=True), "interleaved with 'loss/train'"),
    (_stub, "not implemented yet"),
])
def test_08_4_wrong_answers_are_named(wrong, phrase):
    message = _fails("08.4", wrong)
    assert phrase in message, message


# ---------------------------------------------------------------- 08.5 measure the memory checkpointing saves

import tracemalloc  # noqa: E402


def held_right(fn):
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    result = fn()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return result, held


def held_peak(fn):
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    result = fn()
    held = tracemalloc.get_traced_memory()[1] - before
    tracemalloc.stop()
    return result, held


def held_after_freeing(fn):
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    fn()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return fn(), held


def held_never_stopped(fn):
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    result = fn()
    return result, tracemalloc.get_traced_memory()[0] - before


def test_08_5_reference_passes():
    check("08.5", held_right)


@pytest.mark.parametrize("wrong, phrase", [
    (held_peak, "that is the peak"),
    (held_after_freeing, "the result was freed before you measured"),
    (held_never_stopped, "tracemalloc still running"),
    (_stub, "not implemented yet"),
])
def test_08_5_wrong_answers_are_named(wrong, phrase):
    try:
        message = _fails("08.5", wrong)
    finally:
        tracemalloc.stop()
    assert phrase in message, message


# ---------------------------------------------------------------- 08.6 name the cause of a common error

_CAUSES = {"shapes cannot be multiplied": "shape", "expected scalar type": "dtype", "only for scalar outputs": "non-scalar",
           "backward through the graph a second time": "backward-twice", "modified by an inplace operation": "in-place",
           "does not require grad": "no-grad"}


def diagnose_right(fn):
    try:
        fn()
    except Exception as exc:
        return next((c for p, c in _CAUSES.items() if p in str(exc)), "unknown")
    return None


def diagnose_by_type(fn):
    try:
        fn()
    except RuntimeError:
        return "shape"
    except Exception:
        return "unknown"
    return None


def diagnose_grad_first(fn):
    try:
        fn()
    except Exception as exc:
        if "grad" in str(exc):
            return "no-grad"
        return next((c for p, c in _CAUSES.items() if p in str(exc)), "unknown")
    return None


def diagnose_does_not_catch(fn):
    fn()
    return None


def test_08_6_reference_passes():
    check("08.6", diagnose_right)


@pytest.mark.parametrize("wrong, phrase", [
    (diagnose_by_type, "tell them apart by the message"),
    (diagnose_grad_first, "expected 'non-scalar', got 'no-grad'"),
    (diagnose_does_not_catch, "catch the exception fn raises"),
    (_stub, "not implemented yet"),
])
def test_08_6_wrong_answers_are_named(wrong, phrase):
    message = _fails("08.6", wrong)
    assert phrase in message, message
    assert "fn = " in message or "not implemented" in message, message


# ---------------------------------------------------------------- 09.4 a small DDP wrapper

import tinygrad_course as tc  # noqa: E402


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
