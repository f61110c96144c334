"""Chapter 02d's root gradient as the learner's (exercise 02d.1): every `backward()` from one output starts from the
learner's `root_gradient(output, gradient)`; several outputs and a gradient given as a number stay the reference's,
PyTorch's errors reach the caller, and a wrong result is named and left out, never repaired."""
import numpy as np
import pytest

import tinygrad_course as tc
from tinygrad_course import seams
from tinygrad_course.build import session
from tinygrad_course.build.components import BY_NAME
from tinygrad_course.build.probes_engine import root_gradient_probe

from build_helpers import solution_cell


def _solution():
    namespace = {"tc": tc, "np": np}
    exec(solution_cell("02d_engine.ipynb", "ex02d_1"), namespace)
    return namespace["root_gradient"]


def _install(learner):
    """Install `learner` as build mode does (guarded, the reference taking over a call it raised on)."""
    component = BY_NAME["root_gradient"]
    seams.install("root_gradient", session._guarded(component.adapt(learner), "root_gradient", "a test",
                                                    seams.reference("root_gradient")))


@pytest.fixture
def clean():
    seams.uninstall()
    seams.reset_calls()
    yield
    seams.uninstall()
    seams.reset_calls()


def test_every_backward_from_one_output_starts_from_the_learners_root_gradient(clean):
    seen = []
    mine = _solution()
    _install(lambda output, gradient=None: seen.append(tuple(output.shape)) or mine(output, gradient))
    w = tc.tensor([1.0, -2.0, 0.5], requires_grad=True)
    (w * w).sum().backward()
    (w * 2.0).sum(0, keepdim=True).reshape(1, 1).backward()  # one element, not 0-d
    (w * 3.0).backward(tc.tensor([1.0, 10.0, 100.0], dtype=tc.float64))  # cast to float32 by the engine
    assert seen == [(), (1, 1), (3,)]
    assert np.allclose(w.grad.numpy(), 2 * np.array([1.0, -2.0, 0.5]) + 2.0 + np.array([3.0, 30.0, 300.0]))
    assert w.grad.dtype == tc.float32
    tc.autograd.backward([w.sum(), (w * w).sum()])  # several outputs: the reference's
    w.sum().backward(tc.tensor(2.0).item())  # a number as the gradient: the reference's
    assert len(seen) == 3 and seams.calls()["root_gradient"] == 3


def test_pytorchs_errors_reach_the_caller_and_the_learners_root_gradient_stays(clean):
    _install(_solution())
    w = tc.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (w * 2.0).backward()
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of"):
        (w * 2.0).backward(tc.ones(3))
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        tc.tensor(2.0).backward()
    assert "root_gradient" in seams.installed() and "root_gradient" not in session.left_out()
    (w * w).sum().backward()
    assert w.grad.tolist() == [2.0, 4.0]


def test_a_root_gradient_of_the_wrong_shape_is_named_and_the_reference_takes_over(clean):
    _install(lambda output, gradient=None: tc.tensor(1.0) if gradient is None else gradient)  # 0-d, always
    w = tc.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()  # a 0-d output: right
    with pytest.warns(UserWarning, match=r"your root_gradient \(a test\) raised RuntimeError: returned a gradient "
                                         r"of shape \(\) for an output of shape \(1, 1\), expected \(1, 1\)"):
        (w * 3.0).sum(0, keepdim=True).reshape(1, 1).backward()
    assert w.grad.tolist() == [5.0, 7.0] and "root_gradient" not in seams.installed()


def test_the_probe_sees_the_learners_root_gradient(clean):
    want = root_gradient_probe()
    _install(_solution())
    got = root_gradient_probe()
    assert seams.calls()["root_gradient"] >= 4
    for key, value in want.items():
        assert np.array_equal(got[key], value), key
