"""Catalogue of wrong answers, chapter 02 (autograd): each realistic mistake fails with a message that names
it, the hint waits for a second failure, and the unsolved stub fails."""
import pytest

import tinygrad_course as tc

from .wrong_answers import assert_names_mistake, catalogue_tests, solution

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


def tanh_plus_out_squared(grad, out):
    return grad * (1 + out ** 2)


def tanh_negated(grad, out):
    return grad * (out ** 2 - 1)


def tanh_through_numpy(grad, out):
    return tc.tensor(grad.detach().numpy() * (1 - out.detach().numpy() ** 2))


def matmul_grad_b_transposed(grad, a, b):
    return grad @ b.T, grad.T @ a


def matmul_negated(grad, a, b):
    return -(grad @ b.T), -(a.T @ grad)


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


def ema_without_no_grad(target, online, decay):
    for p, q in zip(target, online):
        p.mul_(decay).add_((1 - decay) * q)


def ema_rebinding_names(target, online, decay):
    for p, q in zip(target, online):
        p = decay * p + (1 - decay) * q  # noqa: F841 (the mistake: a new tensor, bound to a name)


def ema_replacing_list_items(target, online, decay):
    with tc.no_grad():
        for i, q in enumerate(online):
            target[i] = decay * target[i] + (1 - decay) * q


def ema_decay_swapped(target, online, decay):
    with tc.no_grad():
        for p, q in zip(target, online):
            p.mul_(1 - decay).add_(decay * q)


def sigmoid_doubled_in_place(x):
    y = x.sigmoid()
    y.mul_(2)
    return y


def sigmoid_detached(x):
    return 2 * x.sigmoid().detach()


ema_update, scaled_sigmoid = solution("02", "ema_update", "scaled_sigmoid")


def _softplus_class(forward, backward):
    return type("Softplus", (tc.autograd.Function,),
                {"forward": staticmethod(forward), "backward": staticmethod(backward)})


def _save_and_softplus(ctx, x):
    ctx.save_for_backward(x)
    return (1 + x.exp()).log()


def _sigmoid_without_grad(ctx, grad):
    x, = ctx.saved_tensors
    return x.sigmoid()


def _sigmoid_of_minus_x(ctx, grad):
    x, = ctx.saved_tensors
    return grad * (-x).sigmoid()


def _exp_only(ctx, grad):
    x, = ctx.saved_tensors
    return grad * x.exp()


SoftplusWithoutGrad = _softplus_class(_save_and_softplus, _sigmoid_without_grad)
SoftplusSignFlipped = _softplus_class(_save_and_softplus, _sigmoid_of_minus_x)
SoftplusExpOnly = _softplus_class(_save_and_softplus, _exp_only)


def jacobian_transposed(f, x):
    v = x.detach().requires_grad_(True)
    out = f(v)
    return tc.stack([tc.autograd.grad(out[i], v, retain_graph=True)[0] for i in range(out.shape[0])]).T


def jacobian_accumulating(f, x):
    v = x.detach().requires_grad_(True)
    out = f(v)
    rows = []
    for i in range(out.shape[0]):
        out[i].backward(retain_graph=True)
        rows.append(v.grad.clone())
    return tc.stack(rows)


def jacobian_on_x_itself(f, x):
    x.requires_grad_(True)
    out = f(x)
    return tc.stack([tc.autograd.grad(out[i], x, retain_graph=True)[0] for i in range(out.shape[0])])


def hessian_without_create_graph(f, x):
    v = x.detach().requires_grad_(True)
    grad, = tc.autograd.grad(f(v), v)
    return tc.stack([tc.autograd.grad(grad[i], v, retain_graph=True)[0] for i in range(v.shape[0])])


def hessian_of_gradient_rows(f, x):
    v = x.detach().requires_grad_(True)
    grad, = tc.autograd.grad(f(v), v)
    return tc.stack([grad.detach()] * v.shape[0])


jacobian, hessian = solution("02", "jacobian", "hessian")

CATALOGUE = [
    ("02.1", (mul_swapped,), ["gradients of a and b are swapped", "input: grad = "]),
    ("02.1", (mul_not_unbroadcast,), ["grad_b when b has shape (3,): shape mismatch: expected (3,), got (4, 3)",
                                      "its gradient was not summed back"]),
    ("02.1", (mul_without_grad,), ["the upstream gradient `grad` is missing"]),
    ("02.2", (tanh_without_grad,), ["the upstream gradient `grad` is missing"]),
    ("02.2", (tanh_applied_twice,), ["tanh was applied a second time", "input: grad = "]),
    ("02.2", (tanh_not_squared,), ["1 - tanh(x), which is not the derivative of tanh"]),
    ("02.2", (tanh_through_numpy,), ["the gradient your rule returns is not differentiable"]),
    ("02.2", (tanh_plus_out_squared,), ["the sign inside the local derivative is flipped"]),
    ("02.2", (tanh_negated,), ["your local derivative has the opposite sign"]),
    ("02.3", (matmul_grad_b_transposed,), ["grad_b.shape", "expected (3, 2), got (2, 3)", "grad_b is transposed"]),
    ("02.3", (matmul_swapped,), ["grad_a.shape", "expected (4, 3), got (3, 2)", "the two gradients are swapped"]),
    ("02.3", (matmul_negated,), ["grad_a", "what went wrong: your result has the opposite sign"]),
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
    ("02.7", (ema_without_no_grad, scaled_sigmoid), ["a leaf Variable that requires grad is being used in an in-place "
                                                     "operation", "ema_update(target, online, decay=0.75)"]),
    ("02.7", (ema_rebinding_names, scaled_sigmoid), ["the target tensors did not change", "decay = 0.75"]),
    ("02.7", (ema_replacing_list_items, scaled_sigmoid), ["new tensors were put into the list"]),
    ("02.7", (ema_decay_swapped, scaled_sigmoid), ["decay weighs the online tensor instead of the target"]),
    ("02.7", (ema_update, sigmoid_doubled_in_place), ["modified by an inplace operation", "input: x = "]),
    ("02.7", (ema_update, sigmoid_detached), ["without recording a graph"]),
    ("02.8", (SoftplusWithoutGrad,), ["the upstream gradient is missing", "upstream gradient = "]),
    ("02.8", (SoftplusSignFlipped,), ["the sign inside the sigmoid is flipped", "input: x = "]),
    ("02.8", (SoftplusExpOnly,), ["the derivative of the log was left out"]),
    ("02.9", (jacobian_transposed, hessian), ["rows and columns are swapped", "input: f(v) = "]),
    ("02.9", (jacobian_accumulating, hessian), ["x.grad kept accumulating"]),
    ("02.9", (jacobian_on_x_itself, hessian), ["jacobian(f, x) to leave x as it was"]),
    ("02.9", (jacobian, hessian_without_create_graph), ["cannot be differentiated a second time"]),
    ("02.9", (jacobian, hessian_of_gradient_rows), ["every row (or column) is the gradient itself"]),
]


@pytest.mark.parametrize("exercise, wrong, phrases", CATALOGUE,
                         ids=[f"{e}-{'-'.join(w.__name__ for w in ws)}" for e, ws, _ in CATALOGUE])
def test_a_wrong_answer_fails_naming_its_mistake(exercise, wrong, phrases):
    assert_names_mistake(exercise, wrong, *phrases)


NAMES = {"02.1": ("mul_backward",), "02.2": ("tanh_backward",), "02.3": ("matmul_backward",), "02.4": ("topo_sort",),
         "02.5": ("accumulated_grad",), "02.6": ("numerical_grad", "gradient_check"),
         "02.7": ("ema_update", "scaled_sigmoid"), "02.8": ("Softplus",), "02.9": ("jacobian", "hessian")}


test_the_stub_fails, test_every_exercise_has_two_wrong_answers = catalogue_tests(NAMES, CATALOGUE, "02")
