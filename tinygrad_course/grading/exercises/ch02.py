"""Chapter 02 (autograd): checks for backward rules, the topological sort, accumulation, gradient checking.

The learner's backward rules are wrapped in ``tc.autograd.Function`` subclasses and compared with finite
differences and with the framework's own gradients; the learner's topological sort orders a real graph whose
nodes are then run in that order. The checks of 02.7-02.9 (no_grad, a custom Function, Jacobian and Hessian)
are in `ch02_autograd_tools`.
"""
import numpy as np

import tinygrad_course as tc

from .. import mistakes
from ..checker import CheckFailed
from ..registry import exercise
from . import ch02_autograd_tools  # noqa: F401  (registers 02.7-02.9)


# ---- shared helpers ----------------------------------------------------------------------------------------
def _numerical_grads(fn, inputs, weight, eps=1e-6):
    """Central-difference gradients of sum(fn(*inputs) * weight) w.r.t. each input (float64 NumPy arrays)."""
    arrays = [x.detach().numpy().astype(np.float64).copy() for x in inputs]

    def value(arrs):
        with tc.no_grad():
            out = fn(*(tc.tensor(a) for a in arrs))
        return float((out.numpy() * weight).sum())

    grads = []
    for a in arrays:
        g = np.zeros_like(a)
        flat, gflat = a.reshape(-1), g.reshape(-1)
        for k in range(flat.size):
            old = flat[k]
            flat[k] = old + eps
            plus = value(arrays)
            flat[k] = old - eps
            minus = value(arrays)
            flat[k] = old
            gflat[k] = (plus - minus) / (2 * eps)
        grads.append(g)
    return grads


def _as_pair(result, what, t):
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        t.fail(what, f"expected a pair (grad_a, grad_b), got {type(result).__name__}"
                     f"{'' if not isinstance(result, (tuple, list)) else f' of length {len(result)}'}")
    return result


def _tensor_result(t, value, what):
    t.true(isinstance(value, tc.Tensor), f"{what} to be a tc.Tensor (got {type(value).__name__})",
           hint="compute gradients with tensor operations (they must stay differentiable for double backward)")


def _rng_tensor(rng, *shape, requires_grad=True):
    return tc.tensor(rng.standard_normal(shape), dtype=tc.float64, requires_grad=requires_grad)


# ---- 02.1 -------------------------------------------------------------------------------------------------
@exercise("02.1", title="backward of multiplication", points=2)
def mul_backward_check(t, mul_backward):
    rng = np.random.default_rng(1)
    a, b = _rng_tensor(rng, 4, 3, requires_grad=False), _rng_tensor(rng, 4, 3, requires_grad=False)
    grad = tc.tensor(rng.standard_normal((4, 3)))
    ga, gb = _as_pair(mul_backward(grad, a, b), "mul_backward(grad, a, b)", t)
    _tensor_result(t, ga, "grad_a")
    swapped = "the gradients of a and b are swapped (this one was scaled by its own input)"
    swap_fix = "how much does a * b change when a changes? that factor belongs to a's gradient"
    forgot = mistakes.custom(lambda g, e: np.allclose(g, b.numpy()) or np.allclose(g, a.numpy()),
                             "the upstream gradient `grad` is missing from your result",
                             "the chain rule: multiply the local derivative by the gradient arriving from above")
    given = {"grad": grad, "a": a, "b": b}
    t.close(ga, (grad * b).numpy(), "grad_a for same-shape a and b", given=given,
            mistakes=[mistakes.custom(lambda g, e: np.allclose(g, (grad * a).numpy()), swapped, swap_fix), forgot])
    t.close(gb, (grad * a).numpy(), "grad_b for same-shape a and b", given=given,
            mistakes=[mistakes.custom(lambda g, e: np.allclose(g, (grad * b).numpy()), swapped, swap_fix), forgot])
    # broadcasting: b of shape (3,) was stretched over 4 rows, so its gradient must be summed back
    b_row = _rng_tensor(rng, 3, requires_grad=False)
    ga, gb = _as_pair(mul_backward(grad, a, b_row), "mul_backward(grad, a, b) with b of shape (3,)", t)
    given = {"grad": grad, "a": a, "b": b_row}
    t.close(ga, (grad * b_row).numpy(), "grad_a when b has shape (3,)", given=given)
    t.close(gb, (grad * a).numpy().sum(axis=0), "grad_b when b has shape (3,)", given=given,
            mistakes=[mistakes.missing_broadcast_sum(
                "grad_b still has the broadcast shape (4, 3): b was stretched over 4 rows and its gradient was not "
                "summed back", "use unbroadcast(..., b.shape) to sum it back to (3,)")])
    # plugged into the framework: a Function whose backward is the learner's rule, checked numerically
    mul = _function("LearnerMul", lambda ctx, x, y: x * y, lambda ctx, g, x, y: tuple(mul_backward(g, x, y)))
    a2, b2 = _rng_tensor(rng, 2, 3), _rng_tensor(rng, 1, 3)
    weight = rng.standard_normal((2, 3))
    (mul.apply(a2, b2) * tc.tensor(weight)).sum().backward()
    na, nb = _numerical_grads(lambda x, y: x * y, [a2, b2], weight)
    given = {"a": a2, "b": b2, "L": "(a * b * weight).sum()", "weight": weight}
    t.close(a2.grad, na, "a.grad from a backward pass through your rule (vs finite differences)", atol=1e-6,
            given=given)
    t.close(b2.grad, nb, "b.grad (shape (1, 3)) from a backward pass through your rule (vs finite differences)",
            atol=1e-6, given=given)


def _function(name, forward, backward):
    """A tc.autograd.Function whose forward/backward call the given functions on the saved inputs."""
    def fwd(ctx, *args):
        ctx.save_for_backward(*args)
        return forward(ctx, *args)

    def bwd(ctx, grad):
        return backward(ctx, grad, *ctx.saved_tensors)

    return type(name, (tc.autograd.Function,), {"forward": staticmethod(fwd), "backward": staticmethod(bwd)})


# ---- 02.2 -------------------------------------------------------------------------------------------------
@exercise("02.2", title="backward of tanh", points=2)
def tanh_backward_check(t, tanh_backward):
    rng = np.random.default_rng(2)
    x = _rng_tensor(rng, 5)
    out = x.detach().tanh()
    grad = tc.tensor(rng.standard_normal(5))
    got = tanh_backward(grad, out)
    _tensor_result(t, got, "tanh_backward(grad, out)")
    o, g = out.numpy(), grad.numpy()
    t.close(got, g * (1 - o ** 2), "tanh_backward(grad, out)", given={"grad": grad, "out": out}, mistakes=[
        mistakes.custom(lambda r, e: np.allclose(r, 1 - o ** 2), "the upstream gradient `grad` is missing from your result",
                        "the chain rule: multiply the local derivative by `grad`"),
        mistakes.custom(lambda r, e: np.allclose(r, g * (1 - np.tanh(o) ** 2)),
                        "tanh was applied a second time: `out` is already tanh(x)",
                        "write the derivative in terms of `out` itself"),
        mistakes.custom(lambda r, e: np.allclose(r, g * (1 - o)),
                        "your local derivative is 1 - tanh(x), which is not the derivative of tanh",
                        "d/dx tanh(x) = 1 - tanh(x)**2"),
        mistakes.custom(lambda r, e: np.allclose(r, g * (1 + o ** 2)),
                        "the sign inside the local derivative is flipped: your slope grows as |out| grows, but tanh "
                        "flattens out (its slope is 1 at 0 and falls towards 0)",
                        "d/dx tanh(x) = 1 - tanh(x)**2 = 1 - out**2"),
        mistakes.custom(lambda r, e: np.allclose(r, g * (o ** 2 - 1)),
                        "your local derivative has the opposite sign: tanh is increasing, so its slope is positive",
                        "d/dx tanh(x) = 1 - out**2, not out**2 - 1"),
    ])
    # plugged into the framework: first and second derivatives through the learner's rule
    tanh = _function("LearnerTanh", lambda ctx, v: v.tanh(), lambda ctx, g_, v: tanh_backward(g_, v.tanh()))
    weight = rng.standard_normal(5)
    (tanh.apply(x) * tc.tensor(weight)).sum().backward()
    t.close(x.grad, _numerical_grads(lambda v: v.tanh(), [x], weight)[0],
            "x.grad from a backward pass through your rule (vs finite differences)", atol=1e-6)
    x.grad = None
    first, = tc.autograd.grad(tanh.apply(x).sum(), x, create_graph=True)
    if not first.requires_grad:
        t.fail("second derivative", "the gradient your rule returns is not differentiable\n  hint: write it with "
                                    "tensor operations only (no .numpy(), .item(), .detach() or NumPy calls)")
    second, = tc.autograd.grad(first.sum(), x)
    th = np.tanh(x.detach().numpy())
    t.close(second, -2 * th * (1 - th ** 2), "the second derivative d2/dx2 tanh(x) through your rule",
            given={"x": x})


# ---- 02.3 -------------------------------------------------------------------------------------------------
@exercise("02.3", title="backward of matrix multiplication", points=2)
def matmul_backward_check(t, matmul_backward):
    rng = np.random.default_rng(3)
    a, b = _rng_tensor(rng, 4, 3, requires_grad=False), _rng_tensor(rng, 3, 2, requires_grad=False)
    grad = tc.tensor(rng.standard_normal((4, 2)))
    ga, gb = _as_pair(matmul_backward(grad, a, b), "matmul_backward(grad, a, b)", t)
    _tensor_result(t, ga, "grad_a")
    _tensor_result(t, gb, "grad_b")
    shapes = {"grad_a": (4, 3), "grad_b": (3, 2)}
    for name, got, shape, rule in [("grad_a", ga, (4, 3), "grad @ b.T: (4, 2) @ (2, 3)"),
                                   ("grad_b", gb, (3, 2), "a.T @ grad: (3, 4) @ (4, 2)")]:
        other = "grad_b" if name == "grad_a" else "grad_a"
        why = (f"{name} is transposed" if tuple(got.shape) == shape[::-1] else
               f"{name} has {other}'s shape {shapes[other]}: the two gradients are swapped"
               if tuple(got.shape) == shapes[other] else None)
        t.equal(tuple(got.shape), shape, f"{name}.shape (it must match the input's shape {shape})", why=why,
                hint=f"only one product of grad (4, 2) with the other input has the shape {shape}: {name} = {rule}")
    given = {"grad": grad, "a": a, "b": b}
    t.close(ga, (grad @ b.T).numpy(), "grad_a", given=given, mistakes=[mistakes.custom(
        lambda g, e: np.allclose(g, (grad @ b.T).numpy()[::-1, ::-1]), "the factors are in the wrong order",
        "grad_a = grad @ b.T")])
    t.close(gb, (a.T @ grad).numpy(), "grad_b", given=given)
    # plugged into the framework: fit a linear model by gradient descent using only the learner's rule
    matmul = _function("LearnerMatmul", lambda ctx, x, w: x @ w, lambda ctx, g, x, w: tuple(matmul_backward(g, x, w)))
    x = tc.tensor(rng.standard_normal((32, 3)))
    w_true = tc.tensor([[1.0], [-2.0], [0.5]], dtype=tc.float64)
    y = x @ w_true
    w = tc.zeros(3, 1, dtype=tc.float64, requires_grad=True)
    for _ in range(200):
        loss = ((matmul.apply(x, w) - y) ** 2).mean()
        w.grad = None
        loss.backward()
        with tc.no_grad():
            w -= 0.1 * w.grad
    t.close(w, w_true.numpy(), "weights learned in 200 gradient-descent steps with your matmul backward", atol=1e-4)


# ---- 02.4 -------------------------------------------------------------------------------------------------
def _reachable(root):
    seen, stack = {root}, [root]
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def _run_in_order(root_tensor, order):
    """Backpropagate through the graph running the nodes in `order`; the gradient each leaf receives."""
    pending = {root_tensor.grad_fn: tc.ones_like(root_tensor)}
    leaf_grads = {}
    with tc.no_grad():
        for node in order:
            grad = pending.pop(node, None)
            if grad is None:
                continue  # nothing has arrived (yet): a wrong order loses this contribution
            if node.name() == "AccumulateGrad":
                leaf_grads[id(node.variable)] = grad
                continue
            for (nxt, _), g in zip(node.next_functions, node(grad)):
                if nxt is not None and g is not None:
                    pending[nxt] = pending[nxt] + g if nxt in pending else g
    return leaf_grads


def _check_order(t, order, root_tensor, what):
    root = root_tensor.grad_fn
    if order is None:
        t.fail(what, "your topo_sort returned None: did you forget a `return` statement?")
    order = list(order)
    nodes = _reachable(root)
    if any(n is None for n in order):
        t.fail(what, "the order contains None\n  hint: next_functions holds (None, 0) for inputs that need no "
                     "gradient: skip them")
    if len(set(map(id, order))) != len(order):
        t.fail(what, "a node appears twice\n  hint: a node reached along two paths (like `a` in c=a*b; d=c+a) "
                     "must be listed once: keep a set of visited nodes")
    missing = [n.name() for n in nodes if n not in set(order)]
    if missing:
        t.fail(what, f"{len(missing)} node(s) of the graph are missing, e.g. {missing[0]}\n  hint: follow "
                     "next_functions all the way down to the AccumulateGrad nodes of the leaves")
    extra = [n for n in order if n not in nodes]
    if extra:
        t.fail(what, f"{extra[0]!r} is not part of this graph")
    if order[0] is not root:
        t.fail(what, f"the order starts with {order[0].name()}, not with the output's node {root.name()}\n  hint: "
                     "backward starts at the output: reverse a post-order of the graph")
    position = {n: i for i, n in enumerate(order)}
    for node in order:
        for nxt, _ in node.next_functions:
            if nxt is not None and position[nxt] < position[node]:
                t.fail(what, f"{nxt.name()} comes before {node.name()}, which sends it a gradient\n  hint: a node "
                             "may run only after every node that uses its output; record a node after all its "
                             "inputs (post-order) and reverse the list")
    t.count += 1
    return order


@exercise("02.4", title="topological sort of the backward graph", points=3)
def topo_sort_check(t, topo_sort):
    # the tape example: a fans out (it feeds both c = a*b and d = c + a)
    a = tc.tensor(2.0, requires_grad=True)
    b = tc.tensor(3.0, requires_grad=True)
    c = a * b
    d = c + a
    loss = d ** 2
    _check_order(t, topo_sort(loss.grad_fn), loss, "topo_sort(L.grad_fn) for c=a*b; d=c+a; L=d**2")
    # a graph where a depth-first PRE-order is wrong: e is used twice, once through f
    x = tc.tensor([0.5, -1.0], requires_grad=True)
    w = tc.tensor([2.0, 3.0])  # needs no gradient: a None in next_functions
    e = (x * w).exp()
    f = e * 2.0
    g = (e + f).sum()
    try:
        order = topo_sort(g.grad_fn)
    except AttributeError as exc:
        raise CheckFailed(f"your code raised AttributeError: {exc}\n  hint: next_functions holds (None, 0) for "
                          "inputs that need no gradient: skip the None entries") from None
    order = _check_order(t, order, g, "topo_sort(g.grad_fn) for e = exp(x * w); g = sum(e + 2 * e)")
    # plugged into a real backward pass: run the graph's nodes in the learner's order
    grads = _run_in_order(g, order)
    g.backward()
    t.close(grads.get(id(x)), x.grad, "x's gradient from running the nodes in your order vs g.backward()",
            given={"x": x, "w": w, "g": "(e + 2 * e).sum() with e = exp(x * w)"})


# ---- 02.5 -------------------------------------------------------------------------------------------------
@exercise("02.5", title="gradient accumulation over chunks", points=2)
def accumulate_check(t, accumulated_grad):
    rng = np.random.default_rng(5)
    x = tc.tensor(rng.standard_normal((12, 3)), dtype=tc.float32)
    y = tc.tensor(rng.standard_normal((12, 1)), dtype=tc.float32)
    w = tc.tensor(rng.standard_normal((3, 1)), dtype=tc.float32, requires_grad=True)
    stale = tc.full((3, 1), 5.0)
    expected = 2 * x.numpy().T @ (x.numpy() @ w.detach().numpy() - y.numpy()) / 12
    last = 2 * x.numpy()[8:].T @ (x.numpy()[8:] @ w.detach().numpy() - y.numpy()[8:]) / 12
    hints = [
        mistakes.custom(lambda g, e: np.allclose(g, e + stale.numpy(), atol=1e-5),
                        "w.grad still held the old gradient (all 5.0) it had before your function ran",
                        "reset it (w.grad = None) once, before the first chunk"),
        mistakes.custom(lambda g, e: np.allclose(g, 3 * e, atol=1e-5),
                        "your gradient is 3 times too large: the 3 chunks' mean losses were simply added",
                        "each chunk's mean loss must be weighted by len(chunk) / N so that the chunks add up to the "
                        "mean over all N rows"),
        mistakes.custom(lambda g, e: np.allclose(g, last, atol=1e-5) or np.allclose(g, 3 * last, atol=1e-5),
                        "only the last chunk's gradient is there: the earlier chunks' gradients were lost",
                        "call backward on every chunk and let the gradients add up in w.grad (do not reset between "
                        "chunks)"),
    ]
    w.grad = stale.clone()
    got = accumulated_grad(w, x, y, 4)
    t.true(got is w.grad or got is None or isinstance(got, tc.Tensor),
           "accumulated_grad to return w.grad (a tensor)")
    t.close(w.grad, expected, "w.grad after accumulated_grad(w, x, y, chunk=4)", atol=1e-5, mistakes=hints,
            given="x of shape (12, 3), y of shape (12, 1), w of shape (3, 1) whose .grad held 5.0 everywhere")
    w.grad = None
    accumulated_grad(w, x, y, 12)
    t.close(w.grad, expected, "w.grad with a single chunk of 12 rows", atol=1e-5)
    # used for real: training with accumulation follows the same path as full-batch training
    w_acc = tc.zeros(3, 1, requires_grad=True)
    w_full = tc.zeros(3, 1, requires_grad=True)
    for _ in range(20):
        accumulated_grad(w_acc, x, y, 4)
        w_full.grad = None
        ((x @ w_full - y) ** 2).mean().backward()
        with tc.no_grad():
            w_acc -= 0.1 * w_acc.grad
            w_full -= 0.1 * w_full.grad
    t.close(w_acc, w_full, "weights after 20 steps with your accumulation vs full-batch steps", atol=1e-5)


# ---- 02.6 -------------------------------------------------------------------------------------------------
class _WrongCube(tc.autograd.Function):
    """x**3 with a deliberately wrong backward (2x**2 instead of 3x**2)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * 2 * x ** 2


@exercise("02.6", title="a gradient checker", points=3, forbidden=["tinygrad_course.autograd.gradcheck"])
def gradient_checker_check(t, numerical_grad, gradient_check):
    x = tc.tensor([[1.0, 2.0], [-1.5, 0.5]], dtype=tc.float64, requires_grad=True)
    before = x.detach().numpy().copy()

    def cube_sum(v):
        return (v ** 3).sum()

    got = numerical_grad(cube_sum, x, 1e-4)
    t.true(isinstance(got, tc.Tensor), f"numerical_grad to return a tc.Tensor (got {type(got).__name__})")
    t.equal(tuple(got.shape), (2, 2), "numerical_grad(f, x).shape", hint="one partial derivative per element of x")
    xs, eps = before, 1e-4
    forward_diff = ((xs + eps) ** 3 - xs ** 3) / eps
    t.close(got, 3 * xs ** 2, "numerical_grad(sum(x**3), x, eps=1e-4)", atol=1e-6, given={"x": x}, mistakes=[
        mistakes.custom(lambda g, e: np.allclose(g, forward_diff, atol=1e-6),
                        "this is a one-sided (forward) difference, whose error is about eps * f''(x)",
                        "use the central difference (f(x+eps) - f(x-eps)) / (2*eps), whose error shrinks like eps**2"),
        mistakes.custom(lambda g, e: np.allclose(g, 2 * e, rtol=1e-3),
                        "twice the derivative: the central difference spans 2*eps", "divide by 2*eps, not eps"),
    ])
    t.close(x.detach(), before, "x after numerical_grad", atol=0,
            mistakes=[mistakes.custom(lambda g, e: True, "x was changed by numerical_grad: a perturbation stayed in x",
                                      "put each perturbed element back to its original value")])
    t.true(x.grad is None, "numerical_grad to leave x.grad untouched (it should not call backward)")
    # the checker: it must accept a correct gradient and catch a wrong backward rule
    t.equal(bool(gradient_check(cube_sum, x)), True, "gradient_check(sum(x**3), x) (a correct gradient)",
            hint="compare with a tolerance (atol=1e-5, rtol=1e-3), not with ==")
    t.equal(bool(gradient_check(lambda v: _WrongCube.apply(v).sum(), x)), False,
            "gradient_check on x**3 whose backward returns 2*x**2 (a wrong gradient)",
            hint="compare autograd's gradient with numerical_grad and return False when they differ")
    t.true(x.grad is None, "gradient_check to leave x.grad untouched",
           hint="use tc.autograd.grad(f(x), x) instead of .backward(), which adds into x.grad")


# ---- 02.7 -------------------------------------------------------------------------------------------------
