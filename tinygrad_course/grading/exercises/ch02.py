"""Chapter 02 (autograd): checks for the ops and the gradient checker.

The learner's op classes (02.1-02.3: forward on NumPy arrays, backward with tensor ops) are installed in
the framework for the check (`grading/learner_op.py`, as build mode installs them) and compared with NumPy, with
finite differences and with the framework's own second derivatives; the gradient checker (02.4) must accept a
right backward and catch a wrong one. 02.5-02.7 (no_grad, a custom Function, Jacobian and Hessian) are checked in
`ch02_autograd_tools`; the engine the ops run in (the topological sort, the pass, recording, nodes) is chapter
02d's (`ch02d`).
"""
import contextlib

import numpy as np

import tinygrad_course as tc

from ... import seams
from ..learner_op import runner
from .. import mistakes
from ..checker import CheckFailed
from ..registry import exercise
from . import ch02_autograd_tools  # noqa: F401  (registers 02.5-02.7)


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


# ---- 02.1-02.3: ops, each a class with forward on arrays and backward with tensor ops --------------------
class _Ctx:
    """A stand-in node for calling a learner's forward directly (what it may set is kept)."""

    needs_input_grad = (True, True)

    def save_for_backward(self, *tensors):
        self.saved = tensors


@contextlib.contextmanager
def _installed(classes):
    """The learner's op classes compute the framework's ops of the same names during the block."""
    with seams.replaced({name: runner(cls, name) for name, cls in classes.items()}):
        yield


def _forward(t, name, cls, arrays, expected, given, mistakes_=()):
    """The learner's forward called directly on arrays, compared with the expected array."""
    before = [np.array(a, copy=True) for a in arrays]
    got = cls.forward(_Ctx(), *arrays)
    for name_k, a, b in zip(given, arrays, before):
        if not np.array_equal(a, b):
            t.fail(f"{name}.forward", f"it changed its input {name_k} in place: the array forward receives is the "
                   "input tensor's own storage", hint="compute a new array (a + b, not a += b)", given=given)
    if isinstance(got, tc.Tensor):
        t.fail(f"{name}.forward", "returned a tc.Tensor, but forward receives NumPy arrays and returns one",
               hint="compute with NumPy on the arrays you receive (a * b, np.exp(x), ...); the framework wraps the "
                    "result in a tensor")
    t.true(isinstance(got, (np.ndarray, np.generic)), f"{name}.forward to return a NumPy array (got "
                                                       f"{type(got).__name__})",
           hint="return the result of the NumPy computation")
    t.close(got, expected, f"{name}.forward(ctx, {', '.join(given)})", given=given, mistakes=mistakes_)


def _backward(t, name, call, inputs, grad):
    """Gradients of the tensor inputs (arrays in `inputs`) after `call(*tensors).backward(grad)`: only the
    learner's op's node runs (and the leaves'), so each gradient is its backward's, summed by the engine."""
    xs = [tc.tensor(v, requires_grad=True) if isinstance(v, np.ndarray) else v for v in inputs]
    out = call(*xs)
    if out.grad_fn is None or out.grad_fn._learner_backward is None:
        t.fail(name, f"your {name} did not compute {name.lower()} of float tensors: the framework's ran instead")
    try:
        out.backward(tc.tensor(grad))
    except (RuntimeError, TypeError) as error:
        if str(error).startswith("your "):
            t.fail(f"{name}.backward", str(error), hint="backward returns one gradient per input of forward, "
                   "each a tensor computed from grad and what forward saved")
        raise
    return [x.grad for x in xs if isinstance(x, tc.Tensor)]


def _second_derivatives(t, name, classes, call, inputs, rng):
    """Second derivatives through the learner's backward (create_graph=True) vs the reference's."""
    def run(seed):
        weights_rng = np.random.default_rng(seed)
        xs = [tc.tensor(v, requires_grad=True) for v in inputs]
        out = call(*xs)
        firsts = tc.autograd.grad(out.sum(), xs, create_graph=True)
        weights = [tc.tensor(weights_rng.standard_normal(np.shape(f))) for f in firsts]
        total = sum((f * w).sum() for f, w in zip(firsts, weights) if f.requires_grad)
        if not isinstance(total, tc.Tensor):
            return firsts, None
        return firsts, tc.autograd.grad(total, xs, allow_unused=True)

    seed = int(rng.integers(1 << 30))
    want_first, want = run(seed)
    with _installed(classes):
        got_first, got = run(seed)
    if want is None:
        return
    if got is None or any(f.requires_grad != g.requires_grad for f, g in zip(want_first, got_first)):
        t.fail(f"{name}.backward", "the gradient your backward returns is not differentiable (double backward "
               "through it finds no graph)", hint="write backward with tensor operations only, on grad and "
               "ctx.saved_tensors / ctx.saved_output (no .numpy(), .item(), .detach() or NumPy calls)")
    for k, (g, w) in enumerate(zip(got, want)):
        t.close(g if g is not None else np.zeros(np.shape(inputs[k])), w if w is not None else np.zeros(
            np.shape(inputs[k])), f"second derivative with respect to input {k} through your {name}.backward "
            "(create_graph=True), vs the framework's", atol=1e-8)


def _sum_to(g, shape):
    """NumPy: `g` summed back to `shape` (what the engine does with a broadcast gradient)."""
    g = g.sum(axis=tuple(range(g.ndim - len(shape)))) if g.ndim > len(shape) else g
    return g.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1), keepdims=True)


def _is(value):
    """A mistake detector: the learner's value equals `value` (and the expected does not)."""
    return lambda got, expected: np.allclose(got, value) and not np.allclose(expected, value)


# operator, NumPy forward, NumPy gradients of (a, b)
_BINARY = {
    "Add": (lambda a, b: a + b, lambda a, b: a + b, lambda g, a, b: (g, g)),
    "Sub": (lambda a, b: a - b, lambda a, b: a - b, lambda g, a, b: (g, -g)),
    "Mul": (lambda a, b: a * b, lambda a, b: a * b, lambda g, a, b: (g * b, g * a)),
    "Div": (lambda a, b: a / b, lambda a, b: a / b, lambda g, a, b: (g / b, -g * a / (b * b))),
}


def _binary_mistakes(name, g, a, b):
    """Recognised wrong gradients of (a, b) for same-shape operands: (message, fix) detectors per input."""
    swapped = ("the gradients of a and b are swapped (this one was scaled by its own input)",
               "how much does a * b change when a changes? that factor belongs to a's gradient")
    no_grad = ("the upstream gradient `grad` is missing from your result",
               "the chain rule: multiply the local derivative by the gradient arriving from above")
    if name == "Add":
        return [], [mistakes.custom(_is(-g), "b's gradient has the wrong sign: a + b grows as b grows",
                                    "the derivative of a + b with respect to b is 1")]
    if name == "Sub":
        return [], [mistakes.custom(_is(g), "b's gradient has the wrong sign: a - b falls as b grows",
                                    "the derivative of a - b with respect to b is -1")]
    if name == "Mul":
        return ([mistakes.custom(_is(g * a), *swapped), mistakes.custom(_is(b), *no_grad)],
                [mistakes.custom(_is(g * b), *swapped), mistakes.custom(_is(a), *no_grad)])
    return ([mistakes.custom(_is(g * b), "a's gradient was multiplied by b; a / b changes by 1/b per unit of a",
                             "d(a / b)/da = 1 / b")],
            [mistakes.custom(_is(g * a / (b * b)), "b's gradient has the wrong sign: a / b falls as b grows (for "
                             "positive a and b)", "d(a / b)/db = -a / b**2"),
             mistakes.custom(_is(-g / (b * b)), "b's gradient is missing the factor a", "d(a / b)/db = -a / b**2"),
             mistakes.custom(_is(-g / b), "b's gradient is -grad / b, the derivative of log(b), not of a / b",
                             "d(a / b)/db = -a / b**2")])


def _numeric_close(t, name, call, inputs, weight, got):
    numerical = _numerical_grads(call, [tc.tensor(v) for v in inputs], weight)
    for k, (g, n) in enumerate(zip(got, numerical)):
        t.close(g, n, f"gradient of input {k} of {name} with shapes {[np.shape(v) for v in inputs]} through your "
                      "backward, vs finite differences", atol=1e-6)


@exercise("02.1", title="element-wise binary ops: Add, Sub, Mul, Div, Pow", points=5)
def binary_ops_check(t, Add, Sub, Mul, Div, Pow):
    rng = np.random.default_rng(1)
    classes = {"Add": Add, "Sub": Sub, "Mul": Mul, "Div": Div, "Pow": Pow}
    a, b = rng.standard_normal((4, 3)), rng.uniform(0.5, 2.0, (4, 3))
    g = rng.standard_normal((4, 3))
    for name, (op, numpy_op, grads) in _BINARY.items():
        cls = classes[name]
        forward_mistakes = [mistakes.custom(_is(numpy_op(b, a)), "the operands are in the wrong order",
                                            f"forward(ctx, a, b) computes a {name.lower()} b, in that order")]
        _forward(t, name, cls, (a, b), numpy_op(a, b), {"a": a, "b": b}, forward_mistakes)
        with _installed({name: cls}):
            ga, gb = _backward(t, name, op, (a, b), g)
            ma, mb = _binary_mistakes(name, g, a, b)
            want_a, want_b = grads(g, a, b)
            given = {"grad": g, "a": a, "b": b}
            t.close(ga, want_a, f"a.grad after ({name}(a, b)).backward(grad), a and b of shape (4, 3)", given=given,
                    mistakes=ma)
            t.close(gb, want_b, f"b.grad after ({name}(a, b)).backward(grad), a and b of shape (4, 3)", given=given,
                    mistakes=mb)
            # broadcasting: the engine sums each gradient back to its input's shape
            a2, b2 = rng.standard_normal((2, 1, 3)), rng.uniform(0.5, 2.0, (4, 1))
            g2 = rng.standard_normal((2, 4, 3))
            ga, gb = _backward(t, name, op, (a2, b2), g2)
            want_a, want_b = grads(g2, a2, b2)
            t.close(gb, _sum_to(want_b, (4, 1)), f"b.grad for {name}(a, b) with a of shape (2, 1, 3) and b of shape "
                    "(4, 1)", given={"grad": g2, "a": a2, "b": b2})
            weight = rng.standard_normal((2, 4, 3))
            xs = [tc.tensor(v, requires_grad=True) for v in (a2, b2)]
            (op(*xs) * tc.tensor(weight)).sum().backward()
            _numeric_close(t, name, op, (a2, b2), weight, [x.grad for x in xs])
            # a Python number on either side, and float32 keeps float32
            x32 = tc.tensor(a, dtype=tc.float32)
            for out, want, what in [(op(x32, 2.5), numpy_op(a.astype(np.float32), np.float32(2.5)), f"x {name} 2.5"),
                                    (op(2.5, x32), numpy_op(np.float32(2.5), a.astype(np.float32)), f"2.5 {name} x")]:
                t.equal(out.dtype, tc.float32, f"dtype of {what} for a float32 x",
                        hint="NumPy keeps float32 when it meets a Python float; do not convert the arrays")
                t.close(out, want, f"{what} for a float32 x (through your {name})", rtol=1e-5, atol=1e-6)
        _second_derivatives(t, name, {name: cls}, op, (a, b), rng)
    # Pow: a tensor to a Python number's power
    base = rng.uniform(0.5, 2.0, (4, 3))
    for p in (3.0, 0.5):
        _forward(t, "Pow", Pow, (base, p), base ** p, {"a": base, "exponent": p}, [
            mistakes.custom(_is(base * p), "this is a * exponent, not a ** exponent", "use ** on the array")])
        with _installed({"Pow": Pow}):
            ga, = _backward(t, "Pow", lambda x: x ** p, (base,), g)
        t.close(ga, g * p * base ** (p - 1), f"a.grad after (a ** {p}).backward(grad)", given={"grad": g, "a": base},
                mistakes=[mistakes.custom(_is(g * base ** (p - 1)), "the factor `exponent` is missing",
                                          "d(a ** p)/da = p * a ** (p - 1)"),
                          mistakes.custom(_is(g * p * base ** p), "the power was not lowered by one",
                                          "d(a ** p)/da = p * a ** (p - 1)"),
                          mistakes.custom(_is(p * base ** (p - 1)), "the upstream gradient `grad` is missing",
                                          "multiply the local derivative by grad")])
    _second_derivatives(t, "Pow", {"Pow": Pow}, lambda x: x ** 3.0, (base,), rng)


_UNARY = {
    "Neg": (lambda x: -x, np.negative, lambda g, x: -g),
    "Exp": (lambda x: x.exp(), np.exp, lambda g, x: g * np.exp(x)),
    "Log": (lambda x: x.log(), np.log, lambda g, x: g / x),
    "Tanh": (lambda x: x.tanh(), np.tanh, lambda g, x: g * (1 - np.tanh(x) ** 2)),
    "Relu": (lambda x: x.relu(), lambda x: np.maximum(x, 0), lambda g, x: g * (x > 0)),
    "Sigmoid": (lambda x: x.sigmoid(), lambda x: 1 / (1 + np.exp(-x)),
                lambda g, x: g / (1 + np.exp(-x)) * (1 - 1 / (1 + np.exp(-x)))),
}


def _unary_mistakes(name, g, x):
    out = _UNARY[name][1](x)
    no_grad = mistakes.custom(_is(_UNARY[name][2](np.ones_like(g), x)), "the upstream gradient `grad` is missing "
                              "from your result", "the chain rule: multiply the local derivative by `grad`")
    found = {
        "Neg": [mistakes.custom(_is(g), "the gradient has the wrong sign: -x falls as x grows", "d(-x)/dx = -1")],
        "Exp": [mistakes.custom(_is(g * x), "your local derivative is x; exp is its own derivative",
                                "d exp(x)/dx = exp(x), the output (ctx.saved_output with save_output = True)")],
        "Log": [mistakes.custom(_is(g * x), "your local derivative is x, not 1 / x", "d log(x)/dx = 1 / x"),
                mistakes.custom(_is(g * out), "your local derivative is log(x) itself", "d log(x)/dx = 1 / x")],
        "Tanh": [mistakes.custom(_is(g * (1 - out)), "your local derivative is 1 - tanh(x), which is not the "
                                 "derivative of tanh", "d/dx tanh(x) = 1 - tanh(x)**2"),
                 mistakes.custom(_is(g * (1 - np.tanh(out) ** 2)), "tanh was applied a second time: the saved "
                                 "output is already tanh(x)", "write the derivative with the output itself"),
                 mistakes.custom(_is(g * (out ** 2 - 1)), "your local derivative has the opposite sign: tanh is "
                                 "increasing, so its slope is positive", "d/dx tanh(x) = 1 - out**2")],
        "Relu": [mistakes.custom(_is(g * (x >= 0)), "at x = 0 your gradient is grad; PyTorch's relu passes 0 there",
                                 "keep the gradient where the output is > 0 (strictly)"),
                 mistakes.custom(_is(g * out), "the gradient was scaled by the output; relu's slope is 0 or 1",
                                 "d relu(x)/dx = 1 where x > 0, else 0")],
        "Sigmoid": [mistakes.custom(_is(g * out), "the factor (1 - sigmoid(x)) is missing",
                                    "d sigmoid(x)/dx = s * (1 - s) with s = sigmoid(x)"),
                    mistakes.custom(_is(g * (1 - out)), "the factor sigmoid(x) is missing",
                                    "d sigmoid(x)/dx = s * (1 - s) with s = sigmoid(x)")],
    }[name]
    return found + [no_grad]


@exercise("02.2", title="element-wise unary ops: Neg, Exp, Log, Tanh, Relu, Sigmoid", points=4)
def unary_ops_check(t, Neg, Exp, Log, Tanh, Relu, Sigmoid):
    rng = np.random.default_rng(2)
    classes = {"Neg": Neg, "Exp": Exp, "Log": Log, "Tanh": Tanh, "Relu": Relu, "Sigmoid": Sigmoid}
    for name, (op, numpy_op, grad_of) in _UNARY.items():
        cls = classes[name]
        x = rng.uniform(0.2, 3.0, (3, 4)) if name == "Log" else rng.standard_normal((3, 4))
        if name == "Relu":
            x[0, 0] = 0.0  # relu's gradient at 0 is 0 in PyTorch
        g = rng.standard_normal((3, 4))
        _forward(t, name, cls, (x,), numpy_op(x), {"x": x})
        with _installed({name: cls}):
            gx, = _backward(t, name, op, (x,), g)
            t.close(gx, grad_of(g, x), f"x.grad after {name.lower()}(x).backward(grad)", given={"grad": g, "x": x},
                    mistakes=_unary_mistakes(name, g, x))
            weight = rng.standard_normal((3, 4))
            v = tc.tensor(x, requires_grad=True)
            (op(v) * tc.tensor(weight)).sum().backward()
            if name != "Relu":  # relu has a kink at 0, where finite differences disagree
                _numeric_close(t, name, op, (x,), weight, [v.grad])
            x32 = tc.tensor(x, dtype=tc.float32)
            out = op(x32)
            t.equal(out.dtype, tc.float32, f"dtype of {name.lower()}(x) for a float32 x",
                    hint="NumPy keeps float32 on float32 arrays; do not convert them")
            t.close(out, numpy_op(x.astype(np.float32)), f"{name.lower()}(x) for a float32 x", rtol=1e-5, atol=1e-6)
        _second_derivatives(t, name, {name: cls}, op, (x,), rng)


_REDUCTIONS = [(None, False), (1, False), (-1, True), ((0, 2), False), ((2, 0), False), ((0, -1), True)]


def _reductions_check(t, name, cls, rng):
    """The learner's Sum or Mean over each of `_REDUCTIONS`' dims, forward on arrays and backward in the framework."""
    x = rng.standard_normal((2, 3, 4))
    numpy_op = np.sum if name == "Sum" else np.mean
    for dim, keepdim in _REDUCTIONS:
        axis = tuple(dim) if isinstance(dim, tuple) else dim
        want = numpy_op(x, axis=axis, keepdims=keepdim)
        call = f"{name}.forward(ctx, x, dim={dim}, keepdim={keepdim})"
        got = cls.forward(_Ctx(), x, dim, keepdim)
        t.true(isinstance(got, (np.ndarray, np.generic)), f"{call} to return a NumPy array (got {type(got).__name__})",
               hint="compute with NumPy: x.sum(axis=dim, keepdims=keepdim)")
        t.close(got, want, call, given={"x": x})
        g = rng.standard_normal(np.shape(want))
        with _installed({name: cls}):
            try:
                gx, = _backward(t, name, lambda v: getattr(v, name.lower())(dim, keepdim) if dim is not None
                                else getattr(v, name.lower())(), (x,), g)
            except (RuntimeError, ValueError, IndexError) as error:
                if str(error).startswith("your "):
                    raise
                raise CheckFailed(f"{name}.backward for dim={dim}, keepdim={keepdim}: {error}\n  what went wrong: the "
                                  f"gradient of shape {np.shape(g)} could not be put back into x's shape (2, 3, 4)",
                                  "without keepdim the summed dimensions are gone from grad: unsqueeze each one back "
                                  "(counting a negative dim from the end), then expand to x's shape") from None
        keep = g if keepdim or dim is None else np.expand_dims(g, tuple(sorted(d % 3 for d in (
            dim if isinstance(dim, tuple) else (dim,)))))
        count = x.size // max(np.size(want), 1) if name == "Mean" else 1
        what = f"x.grad after x.{name.lower()}(dim={dim}, keepdim={keepdim}).backward(grad), x of shape (2, 3, 4)"
        t.close(gx, np.broadcast_to(keep, x.shape) / count, what, given={"grad": g}, mistakes=[
                    mistakes.custom(lambda got, e: count > 1 and np.allclose(got, e * count),
                                    f"your gradient is {count} times too large: a mean divides by the number of "
                                    "elements it averages", "divide the spread gradient by that number")])
    if name == "Sum":  # a sum of bools counts them, in int64 (chapter 05 counts correct predictions so)
        flags = np.array([[True, False, True, True], [False, False, True, False]])
        with _installed({"Sum": cls}):
            counts = [tc.tensor(flags).sum(), tc.tensor(flags).sum(1), tc.tensor(flags.astype(np.int32)).sum(0, True)]
        for got, want, what in zip(counts, (flags.sum(), flags.sum(1), flags.sum(0, keepdims=True)),
                                   ("x.sum()", "x.sum(1)", "x.int().sum(0, keepdim=True)")):
            t.equal(got.dtype, tc.int64, f"dtype of {what} for a bool x (a count)",
                    hint="NumPy's sum counts the Trues of a bool array in int64, as PyTorch's does: keep its dtype")
            t.close(got, want, f"{what} for a bool x: how many are True", given={"x": flags})


# rows with ties: PyTorch's max(dim) returns the first largest element's index, its x.max() shares the gradient
_TIES = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 1.0, 2.0], [-1.0, 0.5, -2.0, 0.25]])


def _one_hot(x, dim):
    """NumPy: 1 at the first largest element along dim, 0 elsewhere (where max(dim)'s gradient goes)."""
    mask = np.zeros_like(x)
    np.put_along_axis(mask, np.expand_dims(x.argmax(axis=dim), dim), 1, axis=dim)
    return mask


def _max_forward(t, Max, x, dim, keepdim):
    """The learner's Max.forward on x's array with a dim: (values, indices) as PyTorch's max(dim)."""
    call = f"Max.forward(ctx, x, dim={dim}, keepdim={keepdim})"
    got = Max.forward(_Ctx(), x.copy(), dim, keepdim)
    if not isinstance(got, tuple) or len(got) != 2:
        t.fail(call, f"returned {type(got).__name__}, expected a pair (values, indices) of NumPy arrays",
               hint="with a dim, x.max(dim) returns both the largest values and where they are: np.argmax gives the "
                    "indices, np.take_along_axis reads the values there", given={"x": x})
    values, indices = got
    want = np.expand_dims(x.argmax(axis=dim), dim) if keepdim else x.argmax(axis=dim)
    t.close(values, x.max(axis=dim, keepdims=keepdim), f"the values of {call}", given={"x": x})
    last = (x.shape[dim] - 1 - np.flip(x, dim).argmax(axis=dim))
    t.close(indices, want, f"the indices of {call}", given={"x": x}, mistakes=[mistakes.custom(
        lambda got, e: np.shape(got) == np.shape(e) and np.array_equal(np.reshape(got, -1), last.reshape(-1)),
        "on a tie your index is the last largest element's; PyTorch returns the first one's",
        "np.argmax returns the first index of the largest value")])
    t.equal(np.asarray(indices).dtype, np.dtype(np.int64), f"the dtype of the indices of {call}",
            hint="indices are int64, as np.argmax returns them (and PyTorch's max(dim))")


def _max_check(t, Max, rng):
    """The learner's Max: x.max(dim, keepdim) (values, indices), x.max() and argmax, forward on arrays and backward
    in the framework, on rows with ties first."""
    x = _TIES
    got = Max.forward(_Ctx(), x.copy())
    t.true(isinstance(got, (np.ndarray, np.generic)), f"Max.forward(ctx, x) (no dim) to return a NumPy array (got "
           f"{type(got).__name__})", hint="without a dim, x.max() is the largest element: np.max(x)")
    t.close(got, x.max(), "Max.forward(ctx, x)", given={"x": x})
    for dim, keepdim in ((1, False), (-2, True), (0, False)):
        _max_forward(t, Max, x, dim, keepdim)
    g = np.array([1.0, -2.0, 0.5])
    with _installed({"Max": Max}):
        try:
            gx, = _backward(t, "Max", lambda v: v.max(1).values, (x,), g)
        except (RuntimeError, ValueError, IndexError) as error:
            if str(error).startswith("your "):
                raise
            raise CheckFailed(f"Max.backward for x.max(1): {error}\n  what went wrong: the gradient of shape (3,) could "
                              "not be put back into x's shape (3, 4)", "without keepdim the reduced dimension is gone "
                              "from grad: give it back (your unreduce), then keep only the chosen elements") from None
        each = _TIES == _TIES.max(axis=1, keepdims=True)
        t.close(gx, g[:, None] * _one_hot(x, 1), "x.grad after x.max(1).values.backward(grad), rows of x with ties",
                given={"grad": g, "x": x}, mistakes=[
                    mistakes.custom(_is(g[:, None] * each), "every largest element of a row received the gradient; "
                                    "x.max(dim) sends it to the one element whose index it returned",
                                    "keep only the element at the returned index (the first largest one)"),
                    mistakes.custom(_is(g[:, None] * each / each.sum(1, keepdims=True)), "the gradient was shared "
                                    "among the tied elements; x.max(dim) sends it all to the element whose index it "
                                    "returned", "keep only the element at the returned index (the first largest one)"),
                    mistakes.custom(_is(np.broadcast_to(g[:, None], x.shape)), "every element of a row received the "
                                    "gradient, not only the largest", "only the element the maximum came from moves it")])
        g2 = rng.standard_normal((1, 4))
        gx, = _backward(t, "Max", lambda v: v.max(-2, keepdim=True)[0], (x,), g2)
        t.close(gx, g2 * _one_hot(x, 0), "x.grad after x.max(-2, keepdim=True).values.backward(grad)",
                given={"grad": g2, "x": x})
        gx, = _backward(t, "Max", lambda v: v.max(), (x,), np.array(2.0))
        share = (x == x.max()) / np.count_nonzero(x == x.max())
        t.close(gx, 2.0 * share, "x.grad after x.max().backward(grad), grad = 2.0, x's largest value 3.0 twice",
                given={"x": x}, mistakes=[
                    mistakes.custom(_is(2.0 * (x == x.max())), "each of the two largest elements received the whole "
                                    "gradient; x.max() shares it evenly among the elements equal to the maximum (as "
                                    "PyTorch does)", "divide by how many elements equal the maximum"),
                    mistakes.custom(_is(2.0 * _one_hot(x.reshape(1, -1), 1).reshape(x.shape)), "only the first "
                                    "largest element received the gradient; x.max() without a dim shares it evenly "
                                    "among the elements equal to the maximum (as PyTorch does)",
                                    "x.max() returns no index: every element equal to it gets an equal share")])
        t.equal(tuple(tc.tensor(x).argmax(1).tolist()), tuple(x.argmax(1).tolist()),
                "x.argmax(1) (the indices of your Max) for rows with ties")
        t.equal(int(tc.tensor(x).argmax()), int(x.argmax()), "x.argmax() (the indices of your Max over the "
                "flattened x)")
        x32 = tc.tensor(rng.standard_normal((3, 5)), dtype=tc.float32)
        values, indices = x32.max(1)
        t.equal(values.dtype, tc.float32, "dtype of x.max(1).values for a float32 x",
                hint="NumPy keeps float32 on float32 arrays; do not convert them")
        t.equal(indices.dtype, tc.int64, "dtype of x.max(1).indices", hint="np.argmax returns int64 indices")
        # without ties: finite differences, every element moving the maximum it is
        w, weight = rng.standard_normal((4, 5)), rng.standard_normal(5)
        v = tc.tensor(w, requires_grad=True)
        (v.max(0).values * tc.tensor(weight)).sum().backward()
        _numeric_close(t, "Max", lambda a: a.max(0).values, (w,), weight, [v.grad])
    _second_derivatives(t, "Max", {"Max": Max}, lambda v: v.max(1).values ** 2 + v.max() * v.max(0, keepdim=True)[0].sum(),
                        (rng.standard_normal((3, 4)),), rng)


@exercise("02.3", title="the matrix product and reductions: Matmul, Sum, Mean, Max", points=6)
def matmul_check(t, Matmul, Sum, Mean, Max):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((3, 2))
    _forward(t, "Matmul", Matmul, (a, b), a @ b, {"a": a, "b": b}, [
        mistakes.custom(lambda got, e: np.shape(got) == (4, 3), "this is element-wise, not a matrix product",
                        "use @ (np.matmul) on the arrays")])
    g = rng.standard_normal((4, 2))
    with _installed({"Matmul": Matmul}):
        try:
            ga, gb = _backward(t, "Matmul", lambda x, y: x @ y, (a, b), g)
        except CheckFailed as failure:
            for name, shape, rule in [("grad_a", (4, 3), "grad (4, 2) with b (3, 2)"),
                                      ("grad_b", (3, 2), "a (4, 3) with grad (4, 2)")]:
                if f"for input {0 if name == 'grad_a' else 1} of shape {shape}" in str(failure):
                    raise CheckFailed(f"{failure}\n  what went wrong: {name} must have the shape {shape} of its "
                                      f"input; only one product of {rule} has it", failure.hint) from None
            raise
        given = {"grad": g, "a": a, "b": b}
        t.close(ga, g @ b.T, "a.grad after (a @ b).backward(grad), a (4, 3), b (3, 2)", given=given,
                mistakes=[mistakes.custom(_is((g @ b.T)[::-1, ::-1]), "the factors are in the wrong order",
                                          "which product of grad with b has a's shape?")])
        t.close(gb, a.T @ g, "b.grad after (a @ b).backward(grad), a (4, 3), b (3, 2)", given=given)
        # batched: a batch of matrices times one matrix (the engine sums b's gradient over the batch), and bmm
        cases = [(rng.standard_normal((2, 4, 3)), rng.standard_normal((3, 5)), "a (2, 4, 3) @ b (3, 5)"),
                 (rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 3, 5)), "a (2, 4, 3) @ b (2, 3, 5)")]
        for a3, b3, what in cases:
            _forward(t, "Matmul", Matmul, (a3, b3), a3 @ b3, {"a": a3, "b": b3}, [mistakes.custom(
                lambda got, e: np.shape(got) == np.dot(a3, b3).shape and np.shape(got) != e.shape,
                "np.dot does not batch: it multiplies every matrix of a with every matrix of b",
                "use @ (np.matmul), which multiplies the matching matrices of the two batches")])
        for a3, b3, what in cases:
            g3 = rng.standard_normal((2, 4, 5))
            try:
                ga, gb = _backward(t, "Matmul", lambda x, y: x @ y, (a3, b3), g3)
            except (CheckFailed, RuntimeError, ValueError) as failure:
                if "forward" in str(failure):
                    raise
                raise CheckFailed(f"Matmul.backward for {what} (batched): {failure}\n  what went wrong: for a batch "
                                  "of matrices, transpose only the last two dimensions", "x.mT (or "
                                  "x.transpose(-2, -1)) swaps the last two dimensions; .T reverses them all") from None
            t.close(ga, g3 @ np.swapaxes(b3, -1, -2), f"a.grad for {what}", given={"grad": g3, "a": a3, "b": b3})
            t.close(gb, _sum_to(np.swapaxes(a3, -1, -2) @ g3, b3.shape), f"b.grad for {what}",
                    given={"grad": g3, "a": a3, "b": b3})
        # used for real: fit a linear model by gradient descent, every product through your Matmul
        x = tc.tensor(rng.standard_normal((32, 3)))
        w_true = tc.tensor([[1.0], [-2.0], [0.5]], dtype=tc.float64)
        y = x.numpy() @ w_true.numpy()
        w = tc.zeros(3, 1, dtype=tc.float64, requires_grad=True)
        for _ in range(200):
            loss = ((x @ w - tc.tensor(y)) ** 2).mean()
            w.grad = None
            loss.backward()
            with tc.no_grad():
                w -= 0.1 * w.grad
    t.close(w, w_true.numpy(), "weights learned in 200 gradient-descent steps with your Matmul", atol=1e-4)
    _second_derivatives(t, "Matmul", {"Matmul": Matmul}, lambda x, y: x @ y, (a, b), rng)
    for name, cls in (("Sum", Sum), ("Mean", Mean)):
        _reductions_check(t, name, cls, rng)
        _second_derivatives(t, name, {name: cls}, lambda x: (getattr(x, name.lower())(0) ** 2).sum(),
                            (rng.standard_normal((3, 2)),), rng)
    _max_check(t, Max, rng)


# ---- 02.4 -------------------------------------------------------------------------------------------------
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


@exercise("02.4", title="a gradient checker", points=3, forbidden=["tinygrad_course.autograd.gradcheck"])
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


# ---- 02.5 -------------------------------------------------------------------------------------------------
