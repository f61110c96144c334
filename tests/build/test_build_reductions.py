"""Chapter 02's reductions as build-mode components (exercise 02.3). The solution's `Max` computes x.max(),
x.max(dim, keepdim) and argmax with PyTorch's values, indices (the first largest on a tie) and gradients
(max(dim)'s to the chosen element, x.max()'s shared among ties), recorded as MaxBackward0/MaxBackward1; the
calls it does not cover stay the reference's, and a wrong result is an error naming Max. The solution's `Sum`
also counts a bool or integer tensor in int64."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import tinygrad_course as tc
from tinygrad_course import seams
from tinygrad_course.autograd import engine
from tinygrad_course.build import session
from tinygrad_course.build.components import BY_NAME
from tinygrad_course.grading.learner_op import runner

from build_helpers import solution_cell
from test_build_engine import _solution

TIES = [[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 1.0, 2.0], [-1.0, 0.5, -2.0, 0.25]]


def _cell():
    namespace = {"tc": tc, "np": np, "Op": engine.Op}
    exec(solution_cell("02_autograd.ipynb", "ex02_3"), namespace)
    return namespace


MAX, SUM = _cell()["Max"], _cell()["Sum"]


@pytest.fixture
def learner_max():
    seams.uninstall()
    seams.install("Max", runner(MAX, "Max"))
    seams.reset_calls()
    yield
    seams.uninstall()
    seams.reset_calls()


def _pair(data, dtype=np.float64):
    return tc.tensor(np.array(data, dtype=dtype), requires_grad=True), torch.tensor(np.array(data, dtype=dtype),
                                                                                    requires_grad=True)


@pytest.mark.parametrize("dim, keepdim", [(1, False), (0, True), (-1, True), (-2, False)])
def test_max_dim_matches_torch_on_ties_values_indices_and_gradient(learner_max, dim, keepdim):
    x, t = _pair(TIES)
    got, want = x.max(dim, keepdim), t.max(dim, keepdim)
    assert type(got).__name__ == "max" and got.values.grad_fn.name() == want.values.grad_fn.name() == "MaxBackward0"
    assert got.values.grad_fn._learner_backward is not None and seams.calls() == {"Max": 1}
    np.testing.assert_array_equal(got.values.detach().numpy(), want.values.detach().numpy())
    np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
    assert got.indices.dtype == tc.int64 and not got.indices.requires_grad
    weight = np.arange(1.0, 1.0 + got.values.numel()).reshape(tuple(got.values.shape))
    (got.values * tc.tensor(weight)).sum().backward()
    (want.values * torch.tensor(weight)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


def test_full_max_shares_the_gradient_among_ties_as_torch(learner_max):
    for data in (TIES, [[5.0, 1.0], [5.0, 5.0]], [[0.5, -1.0, 2.0]]):
        x, t = _pair(data)
        top, want = x.max(), t.max()
        assert top.grad_fn.name() == "MaxBackward1" and top.grad_fn._learner_backward is not None
        top.backward(tc.tensor(3.0, dtype=tc.float64))
        want.backward(torch.tensor(3.0, dtype=torch.float64))
        assert top.item() == want.item()
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-15)


def test_argmax_is_the_indices_of_the_learners_max(learner_max):
    x, t = _pair(TIES, np.float32)
    for args in ((1,), (0, True), (-1, False), ()):
        seams.reset_calls()
        got = x.argmax(*args)
        assert seams.calls() == {"Max": 1} and got.dtype == tc.int64 and got.grad_fn is None
        np.testing.assert_array_equal(got.numpy(), t.argmax(*args).numpy())


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), seed=st.integers(0, 2 ** 16),
       data=st.data())
def test_max_matches_torch_for_shapes_and_small_integer_values(shape, seed, data):
    """Small integers make ties common; every dim and keepdim, float32, values, indices and gradients."""
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    keepdim = data.draw(st.booleans())
    values = np.random.default_rng(seed).integers(-2, 3, shape).astype(np.float32)
    with seams.replaced({"Max": runner(MAX, "Max")}):
        x, t = _pair(values, np.float32)
        got, want = x.max(dim, keepdim), t.max(dim, keepdim)
        np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
        (got.values.sum() + x.max()).backward()
    (want.values.sum() + t.max()).backward()
    assert got.values.dtype == tc.float32 and x.grad.dtype == tc.float32
    np.testing.assert_array_equal(got.values.detach().numpy(), want.values.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-6)


def test_gradcheck_and_gradgradcheck_through_the_learners_max(learner_max):
    x = tc.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)  # no ties
    for fn in (lambda v: v.max(1).values, lambda v: v.max(0, keepdim=True)[0] ** 2, lambda v: v.max() * v):
        assert tc.autograd.gradcheck(fn, (x,))
        assert tc.autograd.gradgradcheck(fn, (x,))


def test_calls_the_exercise_does_not_cover_stay_the_references(learner_max):
    x = tc.tensor(TIES)
    assert x.min(1).indices.tolist() == [3, 2, 2] and x.min().item() == -2.0 and x.amax(1).tolist() == [3, 2, 0.5]
    assert tc.tensor([[1, 5], [7, 2]]).max(1).indices.tolist() == [1, 0]  # integers
    assert tc.tensor(2.5).max(0).indices.item() == 0  # a 0-d x with a dim
    assert x.argmin(1).tolist() == [3, 2, 2] and x.argmax(keepdim=True).tolist() == [[1]]
    assert seams.calls() == {}
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):  # PyTorch's errors
        tc.ones(0).max()
    with pytest.raises(IndexError, match="Expected reduction dim 1 to have non-zero size"):
        tc.ones(2, 0).max(1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.max(2)


def test_a_wrong_max_is_an_error_naming_it():
    values_only = type("Max", (MAX,), {"forward": staticmethod(lambda ctx, x, dim=None, keepdim=False: x.max(dim))})
    with seams.replaced({"Max": runner(values_only, "Max")}):
        with pytest.raises(TypeError, match=r"your Max.forward returned ndarray for a dim, expected a pair \(values, "):
            tc.tensor(TIES).max(1)
    int32 = type("Max", (MAX,), {"forward": staticmethod(
        lambda ctx, x, dim=None, keepdim=False: (x.max(dim), x.argmax(dim).astype(np.int32)))})
    with seams.replaced({"Max": runner(int32, "Max")}):
        with pytest.raises(RuntimeError, match=r"indices of shape \(3,\) and dtype int32 .* expected shape \(3,\) and "
                                               "dtype int64"):
            tc.tensor(TIES).argmax(1)


def test_the_learners_engine_records_full_max_and_the_reference_max_dim(monkeypatch):
    """x.max() goes through the learner's Function.apply; max(dim) (two outputs) and argmax are recorded (or
    not) by the reference engine, each computed by the learner's Max."""
    seams.uninstall()
    try:
        seams.install("Max", session._guarded(runner(MAX, "Max"), "Max", "a test", seams.reference("Max")))
        for name, obj in _solution().items():
            seams.install(name, session._guarded(BY_NAME[name].adapt(obj), name, "a test", seams.reference(name)))
        recorded = []
        real = engine._record
        monkeypatch.setattr(engine, "_record", lambda ctx, *args: recorded.append(ctx.name()) or real(ctx, *args))
        x, t = _pair(TIES)
        top = x.max()
        assert recorded == [] and top.grad_fn.name() == "MaxBackward1"
        values = x.max(1, keepdim=True).values
        assert recorded == ["MaxBackward0"] and x.argmax(0).tolist() == [1, 0, 0, 1]
        (top * values).sum().backward()
        (t.max() * t.max(1, keepdim=True).values).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())
        assert seams.calls()["Max"] == 3
    finally:
        seams.uninstall()


def test_the_learners_sum_counts_bools_and_signed_integers_in_int64():
    flags = np.array([[True, False, True], [True, True, False]])
    with seams.replaced({"Sum": runner(SUM, "Sum")}):
        got = [tc.tensor(flags).sum(), tc.tensor(flags).sum(1, keepdim=True), tc.tensor(flags.astype(np.int32)).sum(0),
               tc.tensor([[1, -2], [3, 4]]).sum((0, 1))]
        assert seams.calls() == {"Sum": 4}
        assert tc.tensor(flags.astype(np.uint8)).sum().item() == 4 and seams.calls() == {"Sum": 4}  # the reference's
    want = [torch.tensor(flags).sum(), torch.tensor(flags).sum(1, keepdim=True), torch.tensor(flags).int().sum(0),
            torch.tensor([[1, -2], [3, 4]]).sum((0, 1))]
    for g, w in zip(got, want):
        assert g.dtype == tc.int64 and w.dtype == torch.int64 and g.tolist() == w.tolist()
