"""Catalogue of wrong answers, chapter 02 (autograd): each realistic mistake fails with a message that names
it, the hint waits for a second failure, and the unsolved stub fails."""
import pytest

import tinygrad_course as tc

from .wrong_answers import assert_names_mistake, assert_stub_fails, solution, stub

unbroadcast, = solution("02", "unbroadcast")


def mul_swapped(grad, a, b):
    return unbroadcast(grad * a, a.shape), unbroadcast(grad * b, b.shape)


def mul_not_unbroadcast(grad, a, b):
    return grad * b, grad * a


def mul_without_grad(grad, a, b):
    return unbroadcast(b * tc.ones_like(grad), a.shape), unbroadcast(a * tc.ones_like(grad), b.shape)


def tanh_without_grad(grad, out):
    return 1 - out ** 2


def tanh_applied_twice(grad, out):
    return grad * (1 - out.tanh() ** 2)


def tanh_not_squared(grad, out):
    return grad * (1 - out)


def tanh_through_numpy(grad, out):
    return tc.tensor(grad.detach().numpy() * (1 - out.detach().numpy() ** 2))


def matmul_grad_b_transposed(grad, a, b):
    return grad @ b.T, grad.T @ a


def matmul_swapped(grad, a, b):
    return a.T @ grad, grad @ b.T


def topo_without_visited(root):
    order = []

    def visit(node):
        for nxt, _ in node.next_functions:
            if nxt is not None:
                visit(nxt)
        order.append(node)
    visit(root)
    return order[::-1]


def topo_not_reversed(root):
    order, seen = [], set()

    def visit(node):
        seen.add(node)
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in seen:
                visit(nxt)
        order.append(node)
    visit(root)
    return order


def topo_pre_order(root):
    order, seen = [], set()

    def visit(node):
        seen.add(node)
        order.append(node)
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in seen:
                visit(nxt)
    visit(root)
    return order


def topo_keeps_none(root):
    order, seen = [], set()

    def visit(node):
        seen.add(node)
        for nxt, _ in node.next_functions:
            if nxt not in seen:
                visit(nxt)
        order.append(node)
    visit(root)
    return order[::-1]


def accumulate_without_reset(w, x, y, chunk):
    n = x.shape[0]
    for start in range(0, n, chunk):
        xb, yb = x[start:start + chunk], y[start:start + chunk]
        (((xb @ w - yb) ** 2).mean() * (xb.shape[0] / n)).backward()
    return w.grad


def accumulate_unweighted(w, x, y, chunk):
    w.grad = None
    for start in range(0, x.shape[0], chunk):
        xb, yb = x[start:start + chunk], y[start:start + chunk]
        ((xb @ w - yb) ** 2).mean().backward()
    return w.grad


def accumulate_resetting_each_chunk(w, x, y, chunk):
    n = x.shape[0]
    for start in range(0, n, chunk):
        w.grad = None
        xb, yb = x[start:start + chunk], y[start:start + chunk]
        (((xb @ w - yb) ** 2).mean() * (xb.shape[0] / n)).backward()
    return w.grad


def _difference(f, x, eps, forward=False, restore=True):
    point = x.detach().clone() if restore else x.detach()
    grad = tc.zeros_like(point)
    flat, grad_flat = point.view(-1), grad.view(-1)
    base = f(point).item()
    for i in range(flat.numel()):
        original = flat[i].item()
        flat[i] = original + eps
        plus = f(point).item()
        if forward:
            grad_flat[i] = (plus - base) / eps
        else:
            flat[i] = original - eps
            grad_flat[i] = (plus - f(point).item()) / (2 * eps)
        if restore:
            flat[i] = original
    return grad


def forward_difference(f, x, eps=1e-6):
    return _difference(f, x, eps, forward=True)


def leaves_x_perturbed(f, x, eps=1e-6):
    return _difference(f, x, eps, restore=False)


def central_difference(f, x, eps=1e-6):
    return _difference(f, x, eps)


def check_exactly(f, x):
    analytical, = tc.autograd.grad(f(x), x)
    return bool((analytical == central_difference(f, x)).all())


def check_with_backward(f, x):
    f(x).backward()
    return bool(((x.grad - central_difference(f, x)).abs() <= 1e-5 + 1e-3 * x.grad.abs()).all())


numerical_grad, gradient_check = solution("02", "numerical_grad", "gradient_check")

CATALOGUE = [
    ("02.1", (mul_swapped,), ["gradients of a and b are swapped", "input: grad = "]),
    ("02.1", (mul_not_unbroadcast,), ["grad_b when b has shape (3,): shape mismatch: expected (3,), got (4, 3)",
                                      "its gradient was not summed back"]),
    ("02.1", (mul_without_grad,), ["the upstream gradient `grad` is missing"]),
    ("02.2", (tanh_without_grad,), ["the upstream gradient `grad` is missing"]),
    ("02.2", (tanh_applied_twice,), ["tanh was applied a second time", "input: grad = "]),
    ("02.2", (tanh_not_squared,), ["1 - tanh(x), which is not the derivative of tanh"]),
    ("02.2", (tanh_through_numpy,), ["the gradient your rule returns is not differentiable"]),
    ("02.3", (matmul_grad_b_transposed,), ["grad_b.shape", "expected (3, 2), got (2, 3)", "grad_b is transposed"]),
    ("02.3", (matmul_swapped,), ["grad_a.shape", "expected (4, 3), got (3, 2)"]),
    ("02.4", (topo_without_visited,), ["a node appears twice"]),
    ("02.4", (topo_not_reversed,), ["the order starts with AccumulateGrad, not with the output's node PowBackward0"]),
    ("02.4", (topo_pre_order,), ["comes before", "which sends it a gradient"]),
    ("02.4", (topo_keeps_none,), ["your code raised AttributeError"]),
    ("02.5", (accumulate_without_reset,), ["w.grad still held the old gradient (all 5.0)", "input: x of shape (12, 3)"]),
    ("02.5", (accumulate_unweighted,), ["3 times too large"]),
    ("02.5", (accumulate_resetting_each_chunk,), ["only the last chunk's gradient is there"]),
    ("02.6", (forward_difference, gradient_check), ["one-sided (forward) difference", "input: x = "]),
    ("02.6", (leaves_x_perturbed, gradient_check), ["x was changed by numerical_grad"]),
    ("02.6", (numerical_grad, check_exactly), ["gradient_check(sum(x**3), x) (a correct gradient): expected True, "
                                               "got False"]),
    ("02.6", (numerical_grad, check_with_backward), ["gradient_check to leave x.grad untouched"]),
]


@pytest.mark.parametrize("exercise, wrong, phrases", CATALOGUE,
                         ids=[f"{e}-{'-'.join(w.__name__ for w in ws)}" for e, ws, _ in CATALOGUE])
def test_a_wrong_answer_fails_naming_its_mistake(exercise, wrong, phrases):
    assert_names_mistake(exercise, wrong, *phrases)


NAMES = {"02.1": ("mul_backward",), "02.2": ("tanh_backward",), "02.3": ("matmul_backward",), "02.4": ("topo_sort",),
         "02.5": ("accumulated_grad",), "02.6": ("numerical_grad", "gradient_check")}


@pytest.mark.parametrize("exercise", sorted(NAMES))
def test_the_stub_fails(exercise):
    assert_stub_fails(exercise, *stub("02", *NAMES[exercise]))


def test_every_exercise_has_two_wrong_answers():
    counts = {e: sum(1 for x, _, _ in CATALOGUE if x == e) for e in NAMES}
    assert min(counts.values()) >= 2, counts
