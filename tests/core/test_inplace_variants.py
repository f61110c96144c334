"""The in-place twins of element-wise methods (`x.cos_()`, `x.ge_(0)`, ...) against PyTorch: values, dtype,
identity of the returned tensor, version bump and gradients through them."""
import numpy as np
import pytest
import torch

import tinygrad_course as tc
from core_helpers import to_tc, to_torch

A = np.array([[0.5, -1.5, 2.25], [3.0, 0.0, -0.75]], dtype=np.float32)
MASK = np.array([[1, 0, 1], [0, 0, 1]], dtype=np.float32)
ARGS = {"clamp_max": (1.0,), "clamp_min": (0.0,), "cumsum": (1,), "divide": (2.0,), "floor_divide": (2.0,),
        "multiply": (3.0,), "remainder": (1.5,), "subtract": (1.0,), "true_divide": (4.0,), "tril": (),
        "logical_and": (MASK,), "logical_or": (MASK,), "logical_xor": (MASK,)}
COMPARISONS = "eq ne lt le gt ge greater greater_equal less less_equal not_equal".split()
NAMES = ("absolute ceil clamp_max clamp_min cos cumsum divide expm1 floor floor_divide log10 log1p log2 multiply "
         "negative reciprocal remainder round rsqrt sign sin square subtract tril triu true_divide trunc logical_and "
         "logical_not logical_or logical_xor").split() + COMPARISONS


def _args(name, lib):
    args = (0.5,) if name in COMPARISONS else ARGS.get(name, ())
    return tuple(lib.tensor(a) if isinstance(a, np.ndarray) else a for a in args)


@pytest.mark.parametrize("name", NAMES)
def test_inplace_twin_matches_torch(name):
    theirs = torch.tensor(A)
    ours = tc.tensor(A)
    version = ours._version[0]
    returned = getattr(ours, name + "_")(*_args(name, tc))
    getattr(theirs, name + "_")(*_args(name, torch))
    assert returned is ours and ours._version[0] > version
    assert ours.dtype is tc.float32
    np.testing.assert_allclose(ours.cpu().numpy(), theirs.numpy(), rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name", [n for n in NAMES if n not in ("floor_divide", "remainder")])
def test_gradient_through_inplace_twin_matches_torch(name):
    theirs = torch.tensor(A, requires_grad=True)
    ours = to_tc(theirs)
    t_mid, o_mid = theirs * 2, ours * 2
    getattr(t_mid, name + "_")(*_args(name, torch))
    getattr(o_mid, name + "_")(*_args(name, tc))
    weights = torch.arange(6.0).reshape(2, 3)
    (t_mid * weights).sum().backward()
    (o_mid * to_tc(weights)).sum().backward()
    # expm1's gradient is result + 1, which cancels where the result is near -1: one unit in the last place of
    # NumPy's expm1 against PyTorch's grows to a few there
    np.testing.assert_allclose(ours.grad.cpu().numpy(), theirs.grad.numpy(), rtol=1e-5 if name == "expm1" else 1e-6)


def test_bitwise_inplace_twins_on_integers():
    a = np.array([5, 3, 12], dtype=np.int64)
    for name, other in [("bitwise_and", 6), ("bitwise_or", 6), ("bitwise_xor", 6), ("bitwise_not", None)]:
        ours, theirs = tc.tensor(a), torch.tensor(a)
        args = () if other is None else (other,)
        getattr(ours, name + "_")(*args)
        getattr(theirs, name + "_")(*args)
        assert ours.tolist() == theirs.tolist() and ours.dtype is tc.int64


def test_inplace_twin_refuses_a_result_it_cannot_hold():
    ours, theirs = tc.tensor([1, 2, 3]), torch.tensor([1, 2, 3])
    with pytest.raises(RuntimeError) as expected:
        theirs.true_divide_(2)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        ours.true_divide_(2)
    assert "can't be cast" in str(expected.value)
    assert ours.tolist() == [1, 2, 3]


def test_inplace_twin_on_a_leaf_that_requires_grad_raises_like_torch():
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        tc.ones(2, requires_grad=True).cos_()
    assert to_torch(tc.ones(2)).cos_().shape == (2,)
