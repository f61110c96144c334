"""Indexing with Python sequences (range, tuple, list) and every documented overload of the factory
functions, with PyTorch's words when an argument is missing or of the wrong type."""

import numpy as np
import pytest
import torch

import tinygrad_course as tc


def _ns_free(msg: str) -> str:
    return msg.replace("torch.", "NS.").replace("tc.", "NS.")


@pytest.mark.parametrize("index", [
    "range(2)", "(range(0, 3, 2), 1)", "[0, 2]", "((0, 2),)", "(slice(None), range(1, 3))", "[True, False, True]",
    "(Ellipsis, [0, 1])", "(None, 0)", "[]", "([0, 1], [2, 3])", "(range(3), range(3))", "[[0, 1], [1, 2]]",
])
def test_sequence_indices_match_pytorch(index):
    x, tx = tc.arange(12).reshape(3, 4), torch.arange(12).reshape(3, 4)
    idx = eval(index)
    a, b = x[idx], tx[idx]
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_setitem_with_range_and_grad_through_it():
    x, tx = tc.zeros(4, 3), torch.zeros(4, 3)
    x[range(1, 3)] = 1.0
    tx[range(1, 3)] = 1.0
    np.testing.assert_array_equal(x.numpy(), tx.numpy())
    w, tw = tc.ones(4, requires_grad=True), torch.ones(4, requires_grad=True)
    w[range(0, 4, 2)].sum().backward()
    tw[range(0, 4, 2)].sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), tw.grad.numpy())


SHAPE_CALLS = [
    "ns.randint(5, size=(2, 3))", "ns.randint(2, 5, (2,))", "ns.randint(low=1, high=3, size=(4,))",
    "ns.randint(3, (2,))", "ns.randint(high=3, size=(2,))", "ns.randint(1, 3, size=(2,))",
    "ns.empty(size=(2, 3))", "ns.empty(2, 3)", "ns.empty((2, 3))", "ns.empty([2, 3])", "ns.empty(ns.Size([2]))",
    "ns.zeros(size=(2, 3))", "ns.zeros(2)", "ns.zeros(())", "ns.ones(size=[2])", "ns.ones(2, 1)",
    "ns.rand(size=(2,))", "ns.rand(2, 3)", "ns.rand((2, 3))", "ns.randn(size=(1, 2))", "ns.randn([3])",
    "ns.full((2, 2), 3.)", "ns.full(size=(2,), fill_value=1)", "ns.full([2], True)", "ns.arange(5)",
    "ns.arange(1, 4)", "ns.arange(0, 1, 0.25)", "ns.arange(end=3)", "ns.arange(start=1, end=3)", "ns.arange(5.)",
    "ns.arange(1, 10, step=3)", "ns.tensor(range(3))", "ns.randperm(n=3)", "ns.eye(n=2)", "ns.eye(2, 3)",
    "ns.linspace(0, 1, 5)", "ns.linspace(0, 1, steps=3)", "ns.linspace(start=-1, end=1, steps=4)",
    "ns.logspace(0, 2, 3)", "ns.logspace(0, 2, steps=3, base=2)", "ns.linspace(ns.tensor(0.0), 1, 3)",
    "ns.randint(5, (2,), dtype=ns.int32)", "ns.zeros(2, 3, dtype=ns.int64)", "ns.arange(ns.tensor(4))",
]


@pytest.mark.parametrize("call", SHAPE_CALLS)
def test_factory_overloads_match_pytorch(call):
    a, b = eval(call, {"ns": tc}), eval(call, {"ns": torch})
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1]
    if "space" in call:  # float32 rounding of the interior points may differ by one unit
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    elif not any(w in call for w in ("rand", "empty")):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


ERROR_CALLS = [
    "ns.randint()", "ns.randint(5)", "ns.randint(1, 2, 3, 4)", "ns.empty()", "ns.zeros()", "ns.ones()",
    "ns.full((2,))", "ns.arange()", "ns.randn()", "ns.rand()", "ns.ones(2, size=(2,))", "ns.zeros('a')",
    "ns.full(2, 3)", "ns.zeros(2.5)", "ns.randint(5, size=3)", "ns.randn(2, 'a')", "ns.randint(2.5, (2,))",
    "ns.randint(3, 3, (2,))", "ns.zeros((2, 2.5))", "ns.randint(size=(3,))", "ns.randint(1, 2, (3,), 4)",
    "ns.linspace(0, 1)", "ns.linspace(0)", "ns.linspace()", "ns.linspace(start=0, end=1)", "ns.linspace(0, 1, steps=2.5)",
    "ns.logspace(0, 1)", "ns.tensor()", "ns.arange(1, 2, 3, 4)",
]


@pytest.mark.parametrize("call", ERROR_CALLS)
def test_factory_errors_say_what_was_given_like_pytorch(call):
    with pytest.raises(Exception) as theirs:
        eval(call, {"ns": torch})
    with pytest.raises(type(theirs.value)) as ours:
        eval(call, {"ns": tc})
    assert _ns_free(str(ours.value)).strip() == _ns_free(str(theirs.value)).strip()
