"""Chapter 08 (debugging and profiling): checks for per-parameter gradient norms, a forward-hook search
for the first layer that produces NaN/Inf, op counting with the profiler, a scalar log with TensorBoard's
smoothing, measuring the memory gradient checkpointing saves, and naming the cause of common errors; the check of
08.7 (anomaly detection) is in ch08_anomaly.py, imported here.
"""
import math
import tracemalloc
import warnings

import numpy as np

import tinygrad_course as tc

from .. import mistakes
from ..registry import exercise
from . import ch08_anomaly  # noqa: F401  (registers 08.7)
from .ch03 import digits


def _deep_sigmoid(seed=0, depth=6):
    tc.manual_seed(seed)
    layers = []
    for i in range(depth):
        layers += [tc.nn.Linear(64 if i == 0 else 32, 32), tc.nn.Sigmoid()]
    return tc.nn.Sequential(*layers, tc.nn.Linear(32, 10))


@exercise("08.1", title="gradient norm per parameter", points=2)
def grad_norms_check(t, grad_norms):
    model = _deep_sigmoid()
    X, y = digits(0, 64)
    tc.nn.functional.cross_entropy(model(X), y).backward()
    got = grad_norms(model)
    expected = {s.name: s.norm for s in tc.debugging.grad_stats(model)}
    t.equal(sorted(got), sorted(expected), what="the names grad_norms returns",
            hint="one entry per model.named_parameters() name")
    names = sorted(expected)
    t.close([float(got[n]) for n in names], [expected[n] for n in names],
            what=f"the gradient norms of {', '.join(names)}", rtol=1e-4,
            given="a 6-layer sigmoid MLP (Linear(64, 32) ... Linear(32, 10)) after one backward pass of "
                  "cross_entropy on the first 64 digits",
            mistakes=[mistakes.custom(lambda g, e: np.allclose(g, e ** 2, rtol=1e-3),
                                      "every value is the square of the expected norm",
                                      "take the square root of the sum of squares"),
                      mistakes.custom(lambda g, e: np.all(g < e),
                                      "every value is smaller than the norm: the squares were averaged, not summed",
                                      "sum the squares of *all* entries, not the mean")])
    model.zero_grad()
    head = tc.nn.Linear(3, 1)
    unused = tc.nn.Linear(3, 1)
    both = tc.nn.ModuleDict({"head": head, "unused": unused})
    head(tc.ones(1, 3)).sum().backward()
    got = grad_norms(both)
    t.equal(sorted(got), ["head.bias", "head.weight"], what="names for a model with an unused layer",
            hint="skip parameters whose .grad is None")
    # using it: the first layer of a deep sigmoid network learns far more slowly than the last
    t.true(expected["0.weight"] < expected["12.weight"] / 10,
           "the first layer's gradient to be much smaller than the last one's (vanishing gradients)")


@exercise("08.2", title="find the first layer that produces NaN/Inf", points=3)
def nonfinite_check(t, first_nonfinite_module):
    class Log(tc.nn.Module):
        def forward(self, x):
            return x.log()

    tc.manual_seed(0)
    model = tc.nn.Sequential(tc.nn.Linear(4, 4), tc.nn.ReLU(), tc.nn.Linear(4, 4), Log(), tc.nn.Linear(4, 2))
    x = tc.randn(8, 4)
    with tc.no_grad():
        model[2].bias.fill_(-100.0)  # makes log() see negative numbers
    t.equal(first_nonfinite_module(model, x), "3", what="the first module with a non-finite output",
            hint="hooks run in execution order; remember the first name whose output is not finite")
    hooks_left = sum(len(m._forward_hooks) for m in model.modules())
    t.equal(hooks_left, 0, what="forward hooks left on the model afterwards",
            hint="keep the handles and call handle.remove() (also when forward raises: try/finally)")
    with tc.no_grad():
        model[2].bias.fill_(100.0)
    t.equal(first_nonfinite_module(model, x), None, what="the result for a model whose outputs are all finite")
    with tc.no_grad():
        model[0].weight.fill_(float("inf"))
    with warnings.catch_warnings():  # inf * 0 inside matmul: NumPy's "invalid value" warning is expected
        warnings.simplefilter("ignore", RuntimeWarning)
        first = first_nonfinite_module(model, x)
    t.equal(first, "0", what="the result when the first Linear produces inf",
            hint="check for Inf as well as NaN (tc.isfinite)")

    class Exp(tc.nn.Module):
        def forward(self, x):
            return x.exp()

    overflow = tc.nn.Sequential(tc.nn.Linear(4, 4), Exp(), tc.nn.Linear(4, 2))
    with tc.no_grad():
        overflow[0].bias.fill_(100.0)  # exp(100) overflows float32 to inf, with no NaN
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        first = first_nonfinite_module(overflow, x)
    t.equal(first, "1", what="the result for Sequential(Linear, Exp, Linear) whose Exp overflows to inf (no NaN)",
            why="an output of inf without any NaN was not noticed" if first != "1" else None,
            hint="check for Inf as well as NaN (tc.isfinite)", given={"x": x, "bias of layer 0": 100.0})


@exercise("08.3", title="count the ops a function runs", points=2)
def count_ops_check(t, count_ops):
    a, b = tc.ones(3, 4), tc.ones(3, 4)
    got = count_ops(lambda: ((a * b + a) * 2).sum())
    t.true(isinstance(got, dict), "count_ops to return a dict")
    t.equal({k: got.get(k) for k in ("aten::mul", "aten::add", "aten::sum")},
            {"aten::mul": 2, "aten::add": 1, "aten::sum": 1}, what="the counts for ((a * b + a) * 2).sum()",
            why=("every op was counted once: one entry per distinct name, not its number of calls"
                 if {k: got.get(k) for k in ("aten::mul", "aten::add", "aten::sum")} == {"aten::mul": 1, "aten::add": 1,
                                                                                         "aten::sum": 1} else
                 "the values are not call counts" if any(not isinstance(got.get(k), int)
                                                          for k in ("aten::mul", "aten::add", "aten::sum")) else None),
            hint="use prof.key_averages(): each row has .key (the name) and .count")
    w = tc.randn(4, 4, requires_grad=True)

    def step():
        (w @ w).sum().backward()

    got = count_ops(step)
    t.equal(got.get("MmBackward0"), 1, what="count of MmBackward0 for one backward through w @ w",
            hint="run the function inside the profile block so backward is recorded too")
    t.true(math.isfinite(sum(got.values())), "every count to be a number")


def _smooth(values, weight):
    out, m = [], 0.0
    for step, v in enumerate(values, start=1):
        m = weight * m + (1 - weight) * v
        out.append(m / (1 - weight ** step))
    return out


@exercise("08.4", title="a scalar log with smoothing", points=2)
def scalar_log_check(t, ScalarLog):
    log = ScalarLog()
    w = tc.tensor([2.0], requires_grad=True)
    train = [3.0, 1.0, 2.0, 0.5, 0.25]
    for step, value in enumerate(train):
        loss = (w * value / 2).sum()  # a loss tensor that still holds its graph, as in a training loop
        log.add_scalar("loss/train", loss, step * 10)
        if step % 2 == 0:
            log.add_scalar("loss/val", value + 1, step * 10)
    steps, values = log.curve("loss/train")
    if len(steps) == 8:
        t.fail("curve('loss/train')", f"got the steps {list(steps)}: 5 values were logged as 'loss/train' and 3 as "
                                      f"'loss/val', interleaved with 'loss/train', and the curve mixes both tags",
               hint="keep one list of (step, value) per tag")
    t.equal(list(steps), [0, 10, 20, 30, 40], what="curve('loss/train') steps after 5 add_scalar calls at steps 0..40")
    kinds = sorted({type(v).__name__ for v in values})
    t.equal(kinds, ["float"], what="the types of the values curve('loss/train') returns after add_scalar(tag, loss "
                                   "tensor, step)", hint="store float(value): keeping the loss tensor keeps its whole "
                                                         "graph (every activation of that step) alive")
    t.close(values, train, what="curve('loss/train') values")
    steps, values = log.curve("loss/val")
    t.equal((list(steps), [float(v) for v in values]), ([0, 20, 40], [4.0, 3.0, 1.25]),
            what="curve('loss/val') (steps, values): logged at steps 0, 20, 40, interleaved with 'loss/train'",
            hint="keep one list of (step, value) per tag")
    for weight in (0.6, 0.9):
        expected = _smooth(train, weight)
        plain, m = [], 0.0
        for v in train:
            m = weight * m + (1 - weight) * v
            plain.append(m)
        swapped = _smooth(train, 1 - weight)
        t.close(log.smoothed("loss/train", weight), expected,
                what=f"smoothed('loss/train', weight={weight}) of the values {train}", rtol=1e-5, mistakes=[
                    mistakes.custom(lambda g, e, p=plain: np.allclose(g, p),
                                    f"the first smoothed value is {plain[0]:g}, (1 - weight) times the first value: "
                                    "the average started at 0 and is biased towards it",
                                    "divide the average after value t by 1 - weight**t (the debiasing of the lecture, "
                                    "section 6)"),
                    mistakes.custom(lambda g, e, sw=swapped: np.allclose(g, sw),
                                    f"these are the values smoothed with weight {1 - weight:g}, not {weight:g} "
                                    "(you swapped them)",
                                    "weight is the share of the previous average, 1 - weight the share of the new "
                                    "value")])


def _stack(depth=8, width=128):
    tc.manual_seed(0)
    return tc.nn.Sequential(*[tc.nn.Sequential(tc.nn.Linear(width, width), tc.nn.ReLU()) for _ in range(depth)])


class _Checkpoint(tc.autograd.Function):
    """Run a segment without recording; in backward run it again with recording (the lecture's version)."""

    @staticmethod
    def forward(ctx, segment, x, *params):
        ctx.segment, ctx.params = segment, params
        ctx.save_for_backward(x)
        with tc.no_grad():
            return segment(x)

    @staticmethod
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        x = x.detach().requires_grad_(True)
        with tc.enable_grad():
            out = ctx.segment(x)
        return (None,) + tuple(tc.autograd.grad(out, (x,) + ctx.params, grad_out))


def _forward(stack, x, checkpointed):
    if not checkpointed:
        return stack(x).sum()
    h = x
    blocks = list(stack)
    for i in range(0, len(blocks), 4):
        segment = tc.nn.Sequential(*blocks[i:i + 4])
        h = _Checkpoint.apply(segment, h, *segment.parameters())
    return h.sum()


def _held(fn):
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    result = fn()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return result, held


def _mib(n):
    return f"{n / 2 ** 20:.2f} MiB"


@exercise("08.5", title="measure the memory checkpointing saves", points=2)
def held_memory_check(t, held_memory):
    mib = 2 ** 20
    t.equal(tracemalloc.is_tracing(), False, what="tracemalloc running before the check started")
    out = held_memory(lambda: np.ones(mib // 4, dtype=np.float32))
    t.true(isinstance(out, tuple) and len(out) == 2, f"held_memory(fn) to return (result, bytes), got {out!r:.80}")
    result, held = out
    t.true(isinstance(result, np.ndarray) and result.shape == (mib // 4,),
           "held_memory(fn)'s first value to be what fn() returned (here a float32 array of 262144 ones)")
    if held < mib / 2:
        t.fail("held_memory(lambda: np.ones(262144, dtype=np.float32))",
               f"measured {_mib(held)} for a result of 1.00 MiB: the result was freed before you measured",
               hint="keep result = fn() alive until after reading the traced memory")
    t.close(held / mib, 1.0, what="MiB held by held_memory(lambda: np.ones(262144, dtype=np.float32)) (1 MiB)",
            rtol=0.05)
    t.equal(tracemalloc.is_tracing(), False, what="tracemalloc still running after held_memory returned",
            hint="call tracemalloc.stop() before returning")

    def temporary_then_small():
        big = np.ones(4 * mib // 4, dtype=np.float32)  # 4 MiB, freed before returning
        return big[: mib // 4].copy()

    _, held = held_memory(temporary_then_small)
    if held > 3 * mib:
        t.fail("held_memory(a function that makes a 4 MiB temporary and returns 1 MiB)",
               f"measured {_mib(held)}: that is the peak, which counts the 4 MiB temporary freed inside fn",
               hint="what stays held is the current size (get_traced_memory()[0]) after fn() minus before; the peak "
                    "is get_traced_memory()[1]")
    t.close(held / mib, 1.0, what="MiB held after a function that makes a 4 MiB temporary and returns 1 MiB",
            rtol=0.05)
    # using it: the graph of 8 Linear(128, 128) + ReLU blocks on a batch of 512, plain and checkpointed
    x = tc.randn(512, 128)
    for checkpointed in (False, True):
        stack = _stack()
        _, expected = _held(lambda s=stack, c=checkpointed: _forward(s, x, c))
        stack = _stack()
        loss, held = held_memory(lambda s=stack, c=checkpointed: _forward(s, x, c))
        loss.backward()
        t.close(held / mib, expected / mib, rtol=0.1, atol=0.05,
                what=f"MiB your held_memory measures for the {'checkpointed' if checkpointed else 'plain'} forward "
                     f"pass of 8 blocks (the check measured {_mib(expected)})")


def _matmul_shapes():
    tc.nn.Linear(784, 10)(tc.ones(64, 64))


def _float_labels():
    tc.nn.functional.cross_entropy(tc.ones(4, 3), tc.tensor([0.0, 1.0, 2.0, 1.0]))


def _non_scalar_backward():
    (tc.ones(3, requires_grad=True) * 2).backward()


def _backward_twice():
    x = tc.ones(3, requires_grad=True)
    loss = (x * x).sum()
    loss.backward()
    loss.backward()


def _in_place():
    x = tc.ones(3, requires_grad=True)
    y = x.sigmoid()
    y.mul_(2)
    y.sum().backward()


def _under_no_grad():
    x = tc.ones(3, requires_grad=True)
    with tc.no_grad():
        loss = (x * 2).sum()
    loss.backward()


def _fine():
    x = tc.ones(3, requires_grad=True)
    (x * 2).sum().backward()


def _key_error():
    return {}["missing"]


# (the broken code as the learner would read it, the function, the expected cause)
_CASES = [
    ("nn.Linear(784, 10)(tc.ones(64, 64))", _matmul_shapes, "shape"),
    ("F.cross_entropy(logits, tc.tensor([0.0, 1.0, 2.0, 1.0]))", _float_labels, "dtype"),
    ("(tc.ones(3, requires_grad=True) * 2).backward()", _non_scalar_backward, "non-scalar"),
    ("loss.backward(); loss.backward()", _backward_twice, "backward-twice"),
    ("y = x.sigmoid(); y.mul_(2); y.sum().backward()", _in_place, "in-place"),
    ("with tc.no_grad(): loss = (x * 2).sum()\nloss.backward()", _under_no_grad, "no-grad"),
    ("(x * 2).sum().backward()  # nothing wrong", _fine, None),
    ("{}['missing']  # not one of the table's errors", _key_error, "unknown"),
]


@exercise("08.6", title="name the cause of a common error", points=2)
def diagnose_check(t, diagnose):
    for source, fn, cause in _CASES:
        try:
            got = diagnose(fn)
        except NotImplementedError:
            raise
        except Exception as exc:
            t.fail(f"diagnose(fn) for fn = {source!r}",
                   f"diagnose itself raised {type(exc).__name__}: {str(exc)[:80]} (the exception fn raises escaped)",
                   hint="catch the exception fn raises (try/except) and return its cause")
        if got != cause and cause not in (None, "unknown"):
            message = ""
            try:
                fn()
            except Exception as exc:
                message = f"{type(exc).__name__}: {str(exc)[:70]}"
            same_type = sorted({c for s, f, c in _CASES if c not in (None, "unknown")} - {cause})
            t.fail(f"diagnose(fn) for fn = {source!r}, which raises {message!r}",
                   f"expected {cause!r}, got {got!r}" + (
                       f"; every one of {same_type + [cause]} is a RuntimeError, and this one was taken for another"
                       if got in same_type else ""),
                   hint="tell them apart by the message (str(exc)), not by the exception's type"
                   if got in same_type else None)
        t.equal(got, cause, what=f"diagnose(fn) for fn = {source!r}")
