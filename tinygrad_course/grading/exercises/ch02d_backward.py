"""Chapter 02d, exercise 02d.1's backward pass around the topological sort: `backward_pass` (gradients sent along
the graph and added where paths meet, leaves accumulating, the graph freed unless `retain_graph`), `root_gradient`
(where the pass starts, with PyTorch's errors) and `Tensor.backward` itself (the plain call: the root gradient, then
the pass from the output's node, or a leaf's own, without recording a graph). `ch02d.topo_sort_check` runs them
after its checks of the order.
"""
import numpy as np

import tinygrad_course as tc

from .. import mistakes


def _leaf_grads_of(backward_pass, make):
    """The leaves' gradients after `backward_pass(root.grad_fn, ones)` on the graph `make()` builds, without
    recording a graph (as the engine runs it), and after the framework's own `.backward()`."""
    leaves, root = make()
    with tc.no_grad():
        backward_pass(root.grad_fn, tc.ones_like(root))
    mine = [None if v.grad is None else v.grad.detach().numpy().copy() for v in leaves]
    leaves, root = make()
    root.backward(tc.ones_like(root))
    return mine, [v.grad.numpy() for v in leaves]


def backward_pass_check(t, backward_pass):
    """The learner's backward pass on graphs with fan-out, a broadcast, an input without gradient, a leaf used
    twice and a leaf whose .grad already holds a value; then the graph freed after a pass unless retain_graph."""
    rng = np.random.default_rng(4)
    xs, ws = rng.standard_normal((3, 2)), rng.standard_normal((2,))

    def fan_out():
        x, w = tc.tensor(xs, requires_grad=True), tc.tensor(ws, requires_grad=True)
        h = (x * w).tanh()
        return [x, w], (h * h + h.exp() * w + (h * w).sum()).sum()

    def plain():
        a, b = tc.tensor(2.0, requires_grad=True), tc.tensor(3.0, requires_grad=True)
        return [a, b], ((a * b + a) ** 2)

    for make, what in [(plain, "L = (a * b + a) ** 2"),
                       (fan_out, "h = tanh(x * w); L = sum(h*h + exp(h)*w + sum(h*w))")]:
        mine, want = _leaf_grads_of(backward_pass, make)
        for k, (g, w) in enumerate(zip(mine, want)):
            if g is None:
                t.fail(f"leaf {k}'s .grad after backward_pass(L.grad_fn, ones) for {what}", "it is None: no gradient "
                       "reached that leaf", hint="run every node of topo_sort(root) and send each gradient it returns "
                       "on to the node in next_functions; a leaf's AccumulateGrad node writes its .grad when you call "
                       "it")
            t.close(g, w, f"leaf {k}'s .grad after backward_pass(L.grad_fn, ones) for {what}, vs L.backward()",
                    mistakes=[mistakes.custom(lambda got, e: np.all(np.abs(got) <= np.abs(e) + 1e-9) and
                                              not np.allclose(got, e),
                                              "part of the gradient is missing: a node reached along two paths must "
                                              "receive the sum of both before it runs",
                                              "add a gradient arriving at a node to the one already waiting there")])
    # .grad accumulates across passes, as with .backward()
    a = tc.tensor(1.5, requires_grad=True)
    a.grad = tc.tensor(10.0)
    square = a * a
    with tc.no_grad():
        backward_pass(square.grad_fn, tc.tensor(1.0))
    t.close(a.grad, 13.0, "a.grad after backward_pass((a * a).grad_fn, 1) when a.grad held 10", given={"a": 1.5},
            mistakes=[mistakes.custom(lambda got, e: np.allclose(got, 3.0), "the old a.grad was overwritten, not added "
                                      "to", "let the leaf's AccumulateGrad node write .grad: call it with the "
                                      "gradient")])
    _freeing_check(t, backward_pass)


def _freeing_check(t, backward_pass):
    """The graph is freed after a pass (each node's saved tensors released), unless retain_graph=True."""
    p = tc.tensor([1.0, 2.0], requires_grad=True)
    q = (p * p).sum()
    what = "backward_pass(q.grad_fn, 1, retain_graph=True) then backward_pass(q.grad_fn, 1) for q = sum(p * p)"
    try:
        with tc.no_grad():
            backward_pass(q.grad_fn, tc.tensor(1.0), retain_graph=True)
            backward_pass(q.grad_fn, tc.tensor(1.0))
    except TypeError as error:
        t.fail(what, f"your backward_pass raised TypeError: {error}", hint="backward_pass(root, grad, "
               "retain_graph=False) takes the flag that tensor.backward(retain_graph=...) passes on")
    except RuntimeError as error:
        t.fail(what, f"the second pass raised: {str(error)[:60]}...: the first pass freed the graph although "
               "retain_graph=True", hint="release a node's saved tensors only when retain_graph is False")
    t.close(p.grad, [4.0, 8.0], f"p.grad after {what}", given={"p": [1.0, 2.0]})
    try:
        with tc.no_grad():
            backward_pass(q.grad_fn, tc.tensor(1.0))
        freed = False
    except RuntimeError as error:
        freed = "a second time" in str(error)
    t.true(freed, "a third backward_pass through q's graph to raise PyTorch's 'backward through the graph a second "
           "time' error: the pass before it ran without retain_graph, so it freed the graph",
           hint="after running a node, call node.release_variables() unless retain_graph (its saved tensors are "
                "no longer needed)")


def root_gradient_check(t, root_gradient):
    """The learner's root gradient: ones of a one-element output's shape and dtype, a given gradient as it is,
    PyTorch's errors for what backward() cannot start from."""
    x = tc.tensor([1.0, -2.0, 0.5], requires_grad=True)
    loss = (x * x).sum()
    g = root_gradient(loss)
    t.true(isinstance(g, tc.Tensor), f"root_gradient(loss) to return a tensor (got {type(g).__name__})",
           hint="the pass starts from a gradient tensor: tc.ones_like(output) for a scalar output")
    t.equal(tuple(g.shape), (), what="root_gradient(loss).shape for loss = (x * x).sum(), a 0-d output",
            hint="the gradient has the output's shape: tc.ones_like(output)")
    t.close(g, 1.0, "root_gradient(loss) for loss = (x * x).sum()", given={"x": x}, mistakes=[
        mistakes.custom(lambda got, e: np.allclose(got, loss.item()), "you returned the loss itself, not the "
                        "gradient of the loss with respect to itself, which is 1", "tc.ones_like(output): d loss / "
                        "d loss = 1")])
    column = (x * 2).sum(0, keepdim=True).reshape(1, 1)
    t.equal(tuple(root_gradient(column).shape), (1, 1), what="root_gradient(out).shape for an output of shape "
            "(1, 1)", why="a one-element output that is not 0-d still gets a gradient of its own shape",
            hint="tc.ones_like(output), not tc.tensor(1.0)")
    wide = tc.tensor([0.5, 1.5], dtype=tc.float64, requires_grad=True).sum()
    t.equal(root_gradient(wide).dtype, tc.float64, what="root_gradient(out).dtype for a float64 output",
            hint="ones_like keeps the output's dtype")
    given = tc.tensor([1.0, 10.0, 100.0])
    vector = x * 3
    t.close(root_gradient(vector, given), [1.0, 10.0, 100.0], "root_gradient(x * 3, gradient) for gradient = "
            "tc.tensor([1., 10., 100.])", mistakes=[
                mistakes.custom(lambda got, e: np.allclose(got, 1.0), "you returned ones: a given gradient is "
                                "the one the pass starts from (it weights the output's elements)",
                                "return a given gradient of the output's shape as it is")])
    cases = (
        ("root_gradient(x * 3) for an output of 3 elements and no gradient",
         "grad can be implicitly created only for scalar outputs", lambda: root_gradient(vector),
         "only a one-element output has an implicit gradient: compare output.numel() with 1"),
        ("root_gradient(x * 3, tc.ones(2)): a gradient of shape (2,) for an output of shape (3,)",
         f"Mismatch in shape: grad_output[0] has a shape of {tc.ones(2).shape} and output[0] has a shape of "
         f"{vector.shape}.", lambda: root_gradient(vector, tc.ones(2)),
         "compare gradient.shape with output.shape; an f-string prints each as PyTorch does, tc.Size([...])"),
        ("root_gradient(tc.tensor(2.0)): an output that does not require grad",
         "element 0 of tensors does not require grad and does not have a grad_fn",
         lambda: root_gradient(tc.tensor(2.0)), "test output.requires_grad before making a gradient for it"),
    )
    for what, message, call, hint in cases:
        error = t.raises(RuntimeError, call, what=what, hint=hint)
        t.equal(str(error), message, what=f"the message of {what.split(':')[0]}'s RuntimeError (PyTorch's)")


class _GradModeSpy(tc.autograd.Function):
    """x * 2, whose backward notes whether a graph of the backward was being recorded (the grad mode)."""

    seen = []

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        _GradModeSpy.seen.append(tc.is_grad_enabled())
        return grad * 2


def tensor_backward_check(t, backward):
    """The learner's `Tensor.backward` (the plain call): the pass from `root_gradient(self, gradient)` through
    `backward_pass`, a given gradient, a leaf's own backward, no graph recorded while it runs, `retain_graph`
    passed on, and PyTorch's errors of the root gradient reaching the caller."""
    values = np.array([1.0, -2.0, 0.5], dtype=np.float32)
    a = tc.tensor(values, requires_grad=True)
    what = "a.grad after backward(loss) for loss = (a * a).sum()"
    backward((a * a).sum())
    if a.grad is None:
        t.fail(what, "it is None: no gradient reached a", given={"a": values},
               hint="run backward_pass from self.grad_fn, starting with root_gradient(self, gradient)")
    t.close(a.grad, 2 * values, what, given={"a": values})
    a.grad = None
    backward(a * 3.0, tc.tensor([1.0, 10.0, 100.0]))
    t.close(a.grad, [3.0, 30.0, 300.0], "a.grad after backward(a * 3, tc.tensor([1., 10., 100.]))", mistakes=[
        mistakes.custom(lambda got, e: np.allclose(got, 3.0), "the given gradient was not used: the pass started "
                        "from ones", "the pass starts from root_gradient(self, gradient), which returns a given "
                        "gradient as it is")])
    w = tc.tensor(2.0, requires_grad=True)
    what = "w.grad after backward(w) for a leaf w = tc.tensor(2.0, requires_grad=True)"
    try:
        backward(w)
    except (AttributeError, TypeError) as error:
        t.fail(what, f"your backward raised {type(error).__name__}: {error}", hint="a leaf has no grad_fn: the pass "
               "starts at its AccumulateGrad node, grad_accumulator(self)")
    if w.grad is None:
        t.fail(what, "it is None: a leaf's own backward writes d w / d w = 1 into w.grad",
               hint="start the pass at grad_accumulator(self) when self.grad_fn is None")
    t.close(w.grad, 1.0, what)
    _GradModeSpy.seen.clear()
    backward(_GradModeSpy.apply(tc.tensor([1.0, 2.0], requires_grad=True)).sum())
    t.true(_GradModeSpy.seen == [False], "a node's backward to run without recording a graph, but "
           "tc.is_grad_enabled() was True inside it",
           why="the gradients the pass computes are results, not new graph: recording their ops costs time and memory",
           hint="run backward_pass inside `with tc.no_grad():` (only create_graph=True records a graph of the backward, "
                "and that call stays the framework's)")
    p = tc.tensor([1.0, 2.0], requires_grad=True)
    q = (p * p).sum()
    what = "backward(q, retain_graph=True) then backward(q) for q = sum(p * p)"
    try:
        backward(q, retain_graph=True)
        backward(q)
    except RuntimeError as error:
        t.fail(what, f"the second call raised: {str(error)[:60]}...: the first one freed the graph although "
               "retain_graph=True", hint="pass retain_graph on to backward_pass")
    t.close(p.grad, [4.0, 8.0], f"p.grad after {what}", given={"p": [1.0, 2.0]})
    try:
        backward(q)
        freed = False
    except RuntimeError as error:
        freed = "a second time" in str(error)
    t.true(freed, "a third backward(q) to raise PyTorch's 'backward through the graph a second time' error: the "
           "call before it had no retain_graph, so it freed the graph",
           hint="backward(self, gradient=None, retain_graph=None, ...): pass retain_graph on to backward_pass")
    t.raises(RuntimeError, lambda: backward(a * 3.0), what="backward(a * 3) for an output of 3 elements and no "
             "gradient", hint="start from root_gradient(self, gradient): it raises PyTorch's errors")
