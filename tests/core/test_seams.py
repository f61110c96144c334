"""The build-mode seam (tinygrad_course/seams.py): an installed component runs in place of the reference,
inside the framework, until it is uninstalled."""
import numpy as np
import pytest

import tinygrad_course as tc
from tinygrad_course import seams


pytestmark = pytest.mark.usefixtures("clean_seams")


def test_an_installed_backward_rule_computes_the_gradients():
    def doubled_mul_backward(ctx, g):  # a deliberately different rule, so its use is visible
        a, b = ctx.saved_tensors
        return 2 * g * b, 2 * g * a

    x, w = tc.tensor([1.0, 2.0], requires_grad=True), tc.tensor([3.0, 4.0], requires_grad=True)
    seams.install("Mul.backward", doubled_mul_backward)
    (x * w).sum().backward()
    assert x.grad.tolist() == [6.0, 8.0] and w.grad.tolist() == [2.0, 4.0]
    assert seams.calls() == {"Mul.backward": 1}
    seams.uninstall("Mul.backward")
    x.grad = w.grad = None
    (x * w).sum().backward()
    assert x.grad.tolist() == [3.0, 4.0]


def test_an_installed_function_component_runs_inside_backward_and_is_counted():
    seen = []

    def my_sum_to_shape(g, shape):
        seen.append((tuple(g.shape), tuple(shape)))
        return seams.reference("sum_to_shape")(g, shape)

    x, b = tc.ones(2, 3, requires_grad=True), tc.ones(3, requires_grad=True)
    seams.install("sum_to_shape", my_sum_to_shape)
    (x + b).sum().backward()
    assert (2, 3) in [s for s, _ in seen] and np.allclose(b.grad.tolist(), [2.0, 2.0, 2.0])
    assert seams.calls()["sum_to_shape"] == len(seen)


def test_uninstalled_components_cost_nothing_and_are_not_counted():
    x = tc.ones(2, 3, requires_grad=True)
    (x * 2 + tc.ones(3)).sum().backward()
    assert seams.calls() == {} and seams.installed() == {}


def test_offered_components_and_their_references():
    assert {"sum_to_shape", "broadcast_shapes"} <= set(seams.offered())
    assert seams.reference("broadcast_shapes")((2, 1), (3,)) == (2, 3)
    assert tc.broadcast_shapes.component_name == "broadcast_shapes"


def test_install_refuses_what_cannot_be_called():
    with pytest.raises(TypeError, match="must be callable"):
        seams.install("sum_to_shape", 3)


def test_a_learners_topological_sort_decides_the_engines_order_and_is_checked():
    from tinygrad_course.autograd.topological_sort import topological_sort

    x = tc.tensor([1.0, 2.0], requires_grad=True)
    seen = []

    def mine(root):
        order = seams.reference("topological_sort")(root)
        seen.append([n.name() for n in order])
        return order

    seams.install("topological_sort", mine)
    ((x * x).tanh().sum()).backward()
    assert seen == [["SumBackward0", "TanhBackward0", "MulBackward0", "AccumulateGrad"]]
    assert np.allclose(x.grad.tolist(), 2 * np.array([1.0, 2.0]) * (1 - np.tanh([1.0, 4.0]) ** 2), atol=1e-5)
    assert topological_sort.component_name == "topological_sort"
    assert seams.calls()["topological_sort"] == 1
    seams.install("topological_sort", lambda root: seams.reference("topological_sort")(root)[::-1])
    with pytest.raises(RuntimeError, match="your topological_sort put AccumulateGrad before MulBackward0"):
        ((x * x).sum()).backward()
    seams.install("topological_sort", lambda root: seams.reference("topological_sort")(root)[:-1])
    with pytest.raises(RuntimeError, match="your topological_sort returned 2 nodes"):
        ((x * x).sum()).backward()
