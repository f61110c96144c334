"""A learner's op class computing the framework's op of the same name (build mode, chapter 02;
`grading/learner_op.py`): forward on the operands' arrays, backward with tensor ops on the same node; the calls
the exercise does not cover stay the reference's, and a wrong result is an error naming the op."""
import numpy as np
import pytest

import tinygrad_course as tc
from tinygrad_course import seams
from tinygrad_course.grading.exercises.ch02d_engine import Mul, Tanh  # ops in the exercises' shape
from tinygrad_course.grading.learner_op import runner


pytestmark = pytest.mark.usefixtures("clean_seams")


def test_the_learners_op_computes_forward_and_backward_on_the_frameworks_node():
    seams.install("Mul", runner(Mul))
    a, b = tc.tensor([[1.0, 2.0]], requires_grad=True), tc.tensor([[3.0], [4.0]], requires_grad=True)
    out = a * b
    assert out.grad_fn.name() == "MulBackward0" and out.grad_fn._learner_backward is not None
    assert out.tolist() == [[3.0, 6.0], [4.0, 8.0]] and seams.calls() == {"Mul": 1}
    out.sum().backward()  # broadcast gradients summed back by the engine
    assert a.grad.tolist() == [[7.0, 7.0]] and b.grad.tolist() == [[3.0], [3.0]]
    assert seams.calls() == {"Mul": 3}  # the backward's grad * b and grad * a ran through it too
    # second derivatives go through the learner's backward (recorded with tensor ops)
    x = tc.tensor([2.0], dtype=tc.float64, requires_grad=True)
    g, = tc.autograd.grad((x * x * x).sum(), x, create_graph=True)
    assert g.tolist() == [12.0] and tc.autograd.grad(g.sum(), x)[0].tolist() == [12.0]


def test_calls_the_exercise_does_not_cover_stay_the_references():
    seams.install("Mul", runner(Mul))
    assert (tc.tensor([2, 3]) * tc.tensor([4, 5])).tolist() == [8, 15]  # integers
    assert (tc.tensor([2.0]) * tc.tensor([4.0], dtype=tc.float64)).tolist() == [8.0]  # mixed dtypes
    assert (tc.tensor([2.0]) * True).tolist() == [2.0]  # a bool operand
    seams.reset_calls()
    assert (tc.tensor([2.0]) * 4.0).tolist() == [8.0] and seams.calls() == {"Mul": 1}  # a Python number: covered
    with pytest.raises(RuntimeError, match="must match the size"):  # the reference's broadcasting error
        tc.ones(2, 3) * tc.ones(4)
    seams.install("Tanh", runner(Tanh))
    assert tc.tanh(tc.tensor([1, 2])).dtype == tc.float32  # an integer tensor: the reference's promotion


def test_a_wrong_result_is_an_error_naming_the_op_never_repaired():
    class WrongDtype(Tanh):
        @staticmethod
        def forward(ctx, x):
            return np.tanh(x).astype(np.float64)

    seams.install("Tanh", runner(WrongDtype, "Tanh"))
    with pytest.raises(RuntimeError, match=r"your Tanh.forward returned an array of shape \(2,\) and dtype float64 "
                                           r"for operands of shapes \[\(2,\)\], expected shape \(2,\) and dtype float32"):
        tc.tensor([0.5, 1.0]).tanh()

    class NoGradient(Tanh):
        @staticmethod
        def backward(ctx, grad):
            return None

    seams.install("Tanh", runner(NoGradient, "Tanh"))
    x = tc.tensor([0.5, 1.0], requires_grad=True)
    with pytest.raises(TypeError, match="your Tanh.backward returned NoneType as the gradient of input 0"):
        x.tanh().sum().backward()


def test_nothing_is_looked_up_when_nothing_is_installed():
    out = tc.tensor([1.0], requires_grad=True) * 2.0
    assert out.grad_fn._learner_backward is None and seams.calls() == {}


def _simple_pass(ran):
    def backward_pass(root, grad, retain_graph=False):  # a learner's loop: depth-first order, sums what reaches each node
        order, seen = [], set()

        def visit(node):
            if node is not None and node not in seen:
                seen.add(node)
                for nxt, _ in node.next_functions:
                    visit(nxt)
                order.append(node)
        visit(root)
        ran.append(root.name())
        waiting = {root: grad}
        for node in reversed(order):
            g = waiting.pop(node, None)
            if g is not None:
                for (nxt, _), gi in zip(node.next_functions, node(g)):
                    if nxt is not None and gi is not None:
                        waiting[nxt] = waiting[nxt] + gi if nxt in waiting else gi
                if not retain_graph:
                    node.release_variables()
    return backward_pass


def test_the_learners_backward_pass_runs_plain_backward_calls_and_frees_the_graph():
    ran = []
    seams.install("backward_pass", _simple_pass(ran))
    w = tc.tensor([1.0, -2.0], requires_grad=True)
    y = (w * w).sum() * (w + 1).sum()
    y.backward()
    assert ran == ["MulBackward0"] and seams.calls() == {"backward_pass": 1}
    assert w.grad.tolist() == [2 * 1.0 * 1.0 + 5.0, 2 * -2.0 * 1.0 + 5.0]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
    # what it does not cover stays the engine's: create_graph, hooks, retain_grad, autograd.grad
    h = w * 3
    h.retain_grad()
    h.sum().backward()
    g, = tc.autograd.grad((w * w).sum(), w)
    (w ** 3).sum().backward(create_graph=True)
    assert ran == ["MulBackward0"] * 2 and h.grad.tolist() == [1.0, 1.0] and g.tolist() == [2.0, -4.0]
