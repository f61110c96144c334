"""Checks of chapter 02's exercises on autograd's tools: no_grad and in-place updates (02.5), a custom
autograd.Function (02.6), a Jacobian and a Hessian (02.7). `ch02` imports this module, so they register with
the chapter's other checks."""
from __future__ import annotations

import numpy as np

import tinygrad_course as tc

from .. import mistakes
from ..checker import CheckFailed
from ..registry import exercise


def _without_framework_hint(exc) -> str:
    """The framework's error message without its own 'Hint: ...' sentence (the check's hint comes later)."""
    return str(exc).split(" Hint:")[0]


@exercise("02.5", title="no_grad, detach and in-place updates", points=2)
def no_grad_inplace_check(t, ema_update, scaled_sigmoid):
    target = [tc.tensor([1.0, 2.0], requires_grad=True), tc.tensor([[0.0, -4.0]], requires_grad=True)]
    online = [tc.tensor([3.0, 0.0], requires_grad=True), tc.tensor([[1.0, 4.0]], requires_grad=True)]
    originals = list(target)
    before = [p.detach().numpy().copy() for p in target]
    given = {"target": [p.detach() for p in target], "online": [p.detach() for p in online], "decay": 0.75}
    t.context = "ema_update(target, online, decay=0.75)"
    ema_update(target, online, 0.75)
    t.context = None
    t.true(all(a is b for a, b in zip(originals, target)),
           "the list `target` to hold the same tensor objects after ema_update",
           why="new tensors were put into the list: a model's parameters would not have changed",
           hint="change each tensor itself, in place (with tc.no_grad(): p.mul_(...).add_(...) or p.copy_(...))",
           given=given)
    for i, (p, b, o) in enumerate(zip(originals, before, online)):
        o = o.detach().numpy()
        t.close(p, 0.75 * b + 0.25 * o, f"target[{i}] after ema_update(target, online, decay=0.75)", given=given,
                mistakes=[
                    mistakes.custom(lambda g, e, b=b: np.allclose(g, b),
                                    "the target tensors did not change: assigning to a name (p = ...) makes a new "
                                    "tensor and leaves the one in the list as it was",
                                    "update in place under tc.no_grad(): p.mul_(decay).add_((1 - decay) * q)"),
                    mistakes.custom(lambda g, e, b=b, o=o: np.allclose(g, 0.25 * b + 0.75 * o),
                                    "decay weighs the online tensor instead of the target: the target moved 75% of "
                                    "the way instead of 25%", "the target keeps the fraction `decay` of itself")])
        t.true(p.grad_fn is None and p.requires_grad,
               f"target[{i}] to stay a leaf that requires grad after ema_update",
               why="the update was recorded in the graph" if p.grad_fn is not None
               else "requires_grad was switched off",
               hint="run the update inside `with tc.no_grad():`, which records nothing and leaves requires_grad as it "
                    "was", given=given)
    t.true(all(o.grad is None for o in online), "ema_update to leave the online tensors' .grad alone", given=given)

    x = tc.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    s = 1 / (1 + np.exp(-x.detach().numpy()))
    given = {"x": x}
    y = scaled_sigmoid(x)
    t.close(y, 2 * s, "scaled_sigmoid(x)", given=given)
    t.true(y.requires_grad, "scaled_sigmoid(x) to be part of the graph (requires_grad=True)",
           why="the result was computed without recording a graph (no_grad or detach): no gradient can reach x",
           hint="no_grad and detach are for values you do not differentiate; here keep the graph", given=given)
    try:
        y.sum().backward()
    except RuntimeError as exc:
        t.fail("scaled_sigmoid(x).sum().backward()", f"raised RuntimeError: {_without_framework_hint(exc)}",
               hint="sigmoid's backward needs its own output; multiplying that output in place (y *= 2, y.mul_) "
                    "changes it. Build a new tensor: 2 * x.sigmoid()", given=given)
    t.close(x.grad, 2 * s * (1 - s), "x.grad after scaled_sigmoid(x).sum().backward()", given=given)


# ---- 02.6 -------------------------------------------------------------------------------------------------
def _softplus(a):
    return np.logaddexp(0.0, a)


def _sigmoid(a):
    return 1 / (1 + np.exp(-a))


@exercise("02.6", title="a custom autograd.Function, end to end", points=3,
          forbidden=["tinygrad_course.nn.functional.softplus"])
def custom_function_check(t, Softplus):
    t.true(isinstance(Softplus, type) and issubclass(Softplus, tc.autograd.Function),
           f"Softplus to be a subclass of tc.autograd.Function (got {Softplus!r})")
    x = tc.tensor([-2.0, 0.0, 1.5], dtype=tc.float64, requires_grad=True)
    xs = x.detach().numpy()
    given = {"x": x}
    t.context = "Softplus.apply(x)"
    y = Softplus.apply(x)
    t.context = None
    t.true(isinstance(y, tc.Tensor), f"Softplus.apply(x) to return a tc.Tensor (got {type(y).__name__})", given=given)
    t.close(y, _softplus(xs), "Softplus.apply(x)", given=given)
    t.true(y.grad_fn is not None, "Softplus.apply(x) to have a grad_fn (the result of a recorded operation)",
           why="the output is not connected to x", given=given,
           hint="call the class's apply (Softplus.apply(x)); forward itself must only compute the value")
    g = tc.tensor([1.0, 2.0, -1.0], dtype=tc.float64)
    given = {"x": x, "upstream gradient": g}
    t.context = "Softplus.apply(x).backward(upstream gradient)"
    y.backward(g)
    t.context = None
    gs = g.numpy()
    t.true(x.grad is not None, "x.grad to be set after backward", given=given)
    t.close(x.grad, gs * _sigmoid(xs), "x.grad after Softplus.apply(x).backward(upstream gradient)", given=given,
            mistakes=[
                mistakes.custom(lambda r, e: np.allclose(r, _sigmoid(xs)),
                                "the upstream gradient is missing from your result: it is softplus' own derivative",
                                "backward returns grad times the local derivative"),
                mistakes.custom(lambda r, e: np.allclose(r, gs * _sigmoid(-xs)),
                                "that is the derivative at -x: the sign inside the sigmoid is flipped",
                                "the derivative of log(1 + exp(x)) is exp(x) / (1 + exp(x))"),
                mistakes.custom(lambda r, e: np.allclose(r, gs * np.exp(xs)),
                                "that is grad * exp(x): the derivative of the log was left out",
                                "the chain rule through log(1 + exp(x)) divides by 1 + exp(x)"),
                mistakes.custom(lambda r, e: np.allclose(r, gs * _softplus(xs)),
                                "that is grad * softplus(x): backward multiplied by the output, not the derivative",
                                "softplus' derivative is the sigmoid of the input"),
            ])
    # used for real: a model built on the learner's Function, compared with the framework's softplus
    rng = np.random.default_rng(8)
    inputs = tc.tensor(rng.standard_normal((16, 3)), dtype=tc.float64)
    targets = tc.tensor(rng.random((16, 1)), dtype=tc.float64)
    w_yours = tc.tensor(rng.standard_normal((3, 1)) * 0.5, dtype=tc.float64, requires_grad=True)
    w_ref = w_yours.detach().clone().requires_grad_(True)
    for _ in range(5):
        for w, act in ((w_yours, Softplus.apply), (w_ref, tc.nn.functional.softplus)):
            w.grad = None
            ((act(inputs @ w) - targets) ** 2).mean().backward()
            with tc.no_grad():
                w -= 0.5 * w.grad
    t.close(w_yours, w_ref, "weights after 5 gradient steps through your Softplus vs the framework's softplus",
            atol=1e-8, given="a 16x3 float64 regression, learning rate 0.5")


# ---- 02.7 -------------------------------------------------------------------------------------------------
@exercise("02.7", title="a Jacobian and a Hessian", points=3,
          forbidden=["tinygrad_course.autograd.functional.jacobian", "tinygrad_course.autograd.functional.hessian"])
def jacobian_hessian_check(t, jacobian, hessian):
    def f(v):
        return tc.stack([v[0] ** 2 + v[1], v[1] ** 3 * v[0]])

    x = tc.tensor([1.0, 2.0], dtype=tc.float64)
    expected = np.array([[2.0, 1.0], [8.0, 12.0]])
    given = {"f(v)": "stack([v[0]**2 + v[1], v[1]**3 * v[0]])", "x": x}
    t.context = "jacobian(f, x)"
    got = jacobian(f, x)
    t.context = None
    t.true(isinstance(got, tc.Tensor), f"jacobian(f, x) to return a tc.Tensor (got {type(got).__name__})",
           hint="stack the rows: tc.stack(rows)", given=given)
    t.close(got, expected, "jacobian(f, x)", given=given, mistakes=[
        mistakes.custom(lambda g, e: np.allclose(g, e.T), "rows and columns are swapped: row i must hold the "
                        "derivatives of output i (one backward pass per output gives one row)",
                        "J[i, j] = d f(x)[i] / d x[j]: stack the gradient of f(x)[i] as row i"),
        mistakes.custom(lambda g, e: np.allclose(g, np.cumsum(e, axis=0)),
                        "each row holds the sum of the rows before it: x.grad kept accumulating across your "
                        "backward passes", "reset x.grad between outputs, or use tc.autograd.grad, which returns "
                        "the gradient without adding it into x.grad"),
    ])
    t.true(x.grad is None and not x.requires_grad, "jacobian(f, x) to leave x as it was (no .grad, requires_grad "
           "still False)", hint="differentiate with respect to a copy: v = x.detach().requires_grad_(True)",
           given=given)

    def g3(v):
        return tc.stack([v.sum(), (v ** 2).sum(), v[0] * v[3]])

    x4 = tc.tensor([0.5, -1.0, 2.0, 3.0], dtype=tc.float64)
    xs = x4.numpy()
    expected = np.stack([np.ones(4), 2 * xs, [xs[3], 0, 0, xs[0]]])
    t.close(jacobian(g3, x4), expected, "jacobian of 3 outputs with respect to 4 inputs",
            given={"f(v)": "stack([v.sum(), (v**2).sum(), v[0] * v[3]])", "x": x4})

    def h(v):
        return v[0] ** 2 * v[1] + v[1] ** 3 + v[0] * v[2] ** 2

    x3 = tc.tensor([1.0, 2.0, 3.0], dtype=tc.float64)
    expected = np.array([[4.0, 2.0, 6.0], [2.0, 12.0, 0.0], [6.0, 0.0, 2.0]])
    given = {"f(v)": "v[0]**2 * v[1] + v[1]**3 + v[0] * v[2]**2", "x": x3}
    try:
        got = hessian(h, x3)
    except RuntimeError as exc:
        if "does not require grad" not in str(exc):
            raise
        t.fail("hessian(f, x)", f"your code raised RuntimeError: {exc}\n  what went wrong: the first gradient "
               "was computed without a graph of its own, so it cannot be differentiated a second time",
               hint="compute the first gradient with tc.autograd.grad(f(v), v, create_graph=True)", given=given)
    t.true(isinstance(got, tc.Tensor), f"hessian(f, x) to return a tc.Tensor (got {type(got).__name__})",
           given=given)
    t.close(got, expected, "hessian(f, x)", given=given, mistakes=[
        mistakes.custom(lambda g, e: np.allclose(g, np.array([2 * 1 * 2 + 9, 1 + 12, 2 * 1 * 3])[None, :].repeat(3, 0))
                        or np.allclose(g, np.array([13.0, 13.0, 6.0])[:, None].repeat(3, 1)),
                        "every row (or column) is the gradient itself, not its derivative",
                        "differentiate each element of the gradient a second time: one more grad call per row"),
        mistakes.custom(lambda g, e: np.allclose(g, np.cumsum(e, axis=0)),
                        "each row holds the sum of the rows before it: gradients kept accumulating in .grad",
                        "use tc.autograd.grad for the second derivatives; it does not add into .grad"),
    ])
    t.close(got, got.detach().numpy().T, "hessian(f, x) against its transpose (a Hessian is symmetric)", given=given)
