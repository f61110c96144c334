"""PyTorch's alias and one-line functions (ravel, vdot, addr, diagflat, split_with_sizes, fix, det, inverse,
hardshrink, prelu) and the `tc.<op>_` in-place functions, against PyTorch."""
import numpy as np
import pytest
import torch

import tinygrad_course as tc
from core_helpers import to_tc
from tinygrad_course.methods.aliases import INPLACE_FUNCTIONS

M = np.array([[2.0, 1.0, 0.5], [0.3, 3.0, -1.0], [1.0, -0.5, 4.0]])
V = np.array([1.0, -2.0, 0.5])
CALLS = {
    "ravel": lambda m, a, v: m.ravel(a.t()),
    "vdot": lambda m, a, v: m.vdot(v, v * 2),
    "addr": lambda m, a, v: m.addr(a, v, v.flip(0), beta=2, alpha=0.5),
    "diagflat": lambda m, a, v: m.diagflat(a[:2], -1),
    "split_with_sizes": lambda m, a, v: m.cat(a.split_with_sizes([1, 2], 1)[::-1], 1),
    "fix": lambda m, a, v: m.fix(a * 1.7),
    "det": lambda m, a, v: m.det(a),
    "inverse": lambda m, a, v: a.inverse(),
    "hardshrink": lambda m, a, v: m.hardshrink(a, 1.0),
    "prelu": lambda m, a, v: m.prelu(a, m.tensor([0.25], dtype=a.dtype)),
    "adjoint": lambda m, a, v: m.adjoint(a),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_alias_matches_torch_in_value_and_gradient(name):
    theirs_a, theirs_v = torch.tensor(M, requires_grad=True), torch.tensor(V, requires_grad=True)
    ours_a, ours_v = to_tc(theirs_a), to_tc(theirs_v)
    theirs, ours = CALLS[name](torch, theirs_a, theirs_v), CALLS[name](tc, ours_a, ours_v)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().cpu().numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-12)
    if theirs.requires_grad:
        weights = np.random.default_rng(0).normal(size=tuple(theirs.shape))
        (theirs * torch.tensor(weights)).sum().backward()
        (ours * tc.tensor(weights)).sum().backward()
        for t, o in ((theirs_a, ours_a), (theirs_v, ours_v)):
            if t.grad is None:
                assert o.grad is None or not o.grad.cpu().numpy().any()
            else:
                np.testing.assert_allclose(o.grad.cpu().numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_vdot_refuses_matrices_like_torch():
    with pytest.raises(RuntimeError, match="1D tensors expected, but got 2D and 2D tensors"):
        torch.vdot(torch.ones(2, 2), torch.ones(2, 2))
    with pytest.raises(RuntimeError, match="1D tensors expected, but got 2D and 2D tensors"):
        tc.vdot(tc.ones(2, 2), tc.ones(2, 2))


@pytest.mark.parametrize("name", INPLACE_FUNCTIONS)
def test_inplace_function_is_the_inplace_method(name):
    assert hasattr(torch, name), f"torch has no {name}"
    args = {"clamp_": (-0.5, 0.5), "clip_": (-0.5, 0.5), "clamp_max_": (0.5,), "clamp_min_": (0.5,), "fill_": (3.0,),
            "addmv_": (tc.ones(3, 3, dtype=tc.float64), tc.ones(3, dtype=tc.float64)), "xlogy_": (2.0,)}.get(name, ())
    data = np.array([0.25, -0.5, 0.75]) if name not in ("acosh_", "arccosh_") else np.array([1.5, 2.0, 3.0])
    via_function, via_method = tc.tensor(data), tc.tensor(data)
    assert getattr(tc, name)(via_function, *args) is via_function
    getattr(via_method, name)(*args)
    np.testing.assert_array_equal(via_function.cpu().numpy(), via_method.cpu().numpy())
