"""Chapter 08 (debugging and profiling): checks for per-parameter gradient norms, a forward-hook search
for the first layer that produces NaN/Inf, and op counting with the profiler.
"""
import math
import warnings

import numpy as np

import tinygrad_course as tc

from .. import mistakes
from ..registry import exercise
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
    t.close([float(got[n]) for n in names], [expected[n] for n in names], what="the gradient norms",
            rtol=1e-4, mistakes=[mistakes.custom(lambda g, e: np.allclose(g, e ** 2, rtol=1e-3),
                                                 "that is the squared norm: take the square root"),
                                 mistakes.custom(lambda g, e: np.all(g < e),
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


@exercise("08.3", title="count the ops a function runs", points=2)
def count_ops_check(t, count_ops):
    a, b = tc.ones(3, 4), tc.ones(3, 4)
    got = count_ops(lambda: ((a * b + a) * 2).sum())
    t.true(isinstance(got, dict), "count_ops to return a dict")
    t.equal({k: got.get(k) for k in ("aten::mul", "aten::add", "aten::sum")},
            {"aten::mul": 2, "aten::add": 1, "aten::sum": 1}, what="the counts for ((a * b + a) * 2).sum()",
            hint="use prof.key_averages(): each row has .key (the name) and .count")
    w = tc.randn(4, 4, requires_grad=True)

    def step():
        (w @ w).sum().backward()

    got = count_ops(step)
    t.equal(got.get("MmBackward0"), 1, what="count of MmBackward0 for one backward through w @ w",
            hint="run the function inside the profile block so backward is recorded too")
    t.true(math.isfinite(sum(got.values())), "every count to be a number")
