"""Regression guard for per-op overhead: the number of Python function calls one op costs, forward and
backward, on small CPU tensors.

Counting calls (with `sys.setprofile`) is deterministic where timing is not: a change that adds a
function call to the hot path (graph recording, dtype promotion, the engine's loop) shows up here even
on a loaded machine. Each limit is the count measured when the guard was written; lower counts pass.
When a change lowers a count for good, lower its limit too. If a change must add calls, raise the limit
in the same commit and say why. (NumPy helpers written in Python, such as `np.broadcast_to`, are
counted too, so a different NumPy version may shift a count by a few.)
"""
import gc
import sys

import numpy as np
import pytest

import tinygrad_course as tc
import tinygrad_course.nn.functional as F

# case -> the most Python calls one forward + backward may make. Backward formulas are framework ops; where an op
# gives a fused_backward (element-wise math, products, fused kernels) the engine runs it when no graph is recorded.
LIMITS = {
    "mul": 87,
    "add_scalar": 68,
    "tanh": 74,
    "sigmoid": 75,
    "relu": 73,
    "exp_div": 106,  # the quotient rule with framework ops (grad / b; b's gradient only when b needs one)
    "matmul": 104,  # the products' fused_backward works on arrays
    "chain_of_8": 257,
    "linear_cross_entropy": 145,  # transposes call the array's swapaxes (no NumPy wrapper)
    "linear_module": 142,  # nn.Linear called: Module.__call__, the Linear.forward seam, weight/bias via __getattr__
    "sequential_tanh": 167,  # build mode's Module seams add no call while nothing is installed
}


def _leaf(rng, *shape):
    return tc.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True, device="cpu")


def _cases():
    rng = np.random.default_rng(0)
    x, w, b = _leaf(rng, 100), _leaf(rng, 100), _leaf(rng, 100)
    m, v = _leaf(rng, 8, 16), _leaf(rng, 16, 4)
    weight, bias = _leaf(rng, 10, 16), _leaf(rng, 10)
    target = tc.tensor(rng.integers(0, 10, 8), device="cpu")
    layer = tc.nn.Linear(16, 10, device="cpu")
    stack = tc.nn.Sequential(tc.nn.Linear(16, 10, device="cpu"), tc.nn.Tanh())
    leaves = (x, w, b, m, v, weight, bias, *layer.parameters(), *stack.parameters())
    cases = {
        "mul": lambda: (x * w).sum().backward(),
        "add_scalar": lambda: (x + 2.0).sum().backward(),
        "tanh": lambda: x.tanh().sum().backward(),
        "sigmoid": lambda: x.sigmoid().sum().backward(),
        "relu": lambda: x.relu().sum().backward(),
        "exp_div": lambda: (x.exp() / 2.0).sum().backward(),
        "matmul": lambda: (m @ v).sum().backward(),
        "chain_of_8": lambda: _chain(x, w, b),
        "linear_cross_entropy": lambda: F.cross_entropy(F.linear(m, weight, bias), target).backward(),
        "linear_module": lambda: layer(m).sum().backward(),
        "sequential_tanh": lambda: stack(m).sum().backward(),
    }
    return cases, leaves


def _chain(x, w, b):
    """bench/op_overhead.py's loop: mul, add, tanh, mul, sub, exp, div, sigmoid, sum, then backward."""
    a = (x * w + b).tanh()
    ((a * a - x).exp() / 2.0).sigmoid().sum().backward()


def count_calls(fn):
    """Python function calls made while `fn()` runs (C functions are not counted)."""
    calls = 0

    def profile(frame, event, arg):
        nonlocal calls
        if event == "call":
            calls += 1

    # a garbage collection inside the measured call would run finalizers of objects that earlier tests left
    # behind (Python calls that are not the op's): collect first and keep the collector off while counting
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(previous)
        if enabled:
            gc.enable()
    return calls


@pytest.mark.parametrize("name", list(LIMITS))
def test_python_calls_per_op_do_not_grow(name):
    cases, leaves = _cases()
    fn = cases[name]
    fn()  # warm-up: first calls may import or cache
    for t in leaves:
        t.grad = None  # the first backward of a step (a fresh .grad), as in training after zero_grad
    calls = count_calls(fn)
    assert calls <= LIMITS[name], (
        f"{name}: {calls} Python calls forward + backward, more than the limit {LIMITS[name]}; "
        "something on the hot path got slower (see the module docstring)"
    )


def test_the_counter_counts():
    def three():
        def inner():
            pass
        inner()
        inner()

    assert count_calls(three) == 3
