"""Chapter 02c, exercise 02c.3: the in-place machinery of Tensor (`_check_inplace`, `_write`, `_inplace`) and the
in-place methods and operators that go through it (`add_` ... `copy_`, `+=` ...), written as methods of `self`
(the class `TensorInplace`).

The learner's methods are installed where build mode installs them (`tc.Tensor`'s class attributes,
`seams.offer_methods`), and each scenario runs twice on fresh inputs, with the learner's methods and with the
framework's own (02c.2's scenario machinery, `ch02c_methods.py`): the tensor's values and dtype after an in-place
method, whether the method returned the tensor itself, the version counter, a view made before the write, the node
the tensor's history ends in, the gradients a backward then computes, and PyTorch's errors (leaf tensors, casting,
shapes, a saved tensor changed in place). Then the methods run where the framework uses them (the probe).
"""
import numpy as np

import tinygrad_course as tc

from ...tensor import LEARNER_INPLACE_METHODS
from ..registry import exercise
from .ch02c_methods import _X, _b, _compare, _grads, _x, installing
from .learner_classes import learner_functions

installed = installing(LEARNER_INPLACE_METHODS)  # the learner's TensorInplace (02c.3)


def _written(call, make=_x):
    """A scenario: call(x, b) on an x that does not require grad, with a view of x made before."""

    def scenario():
        x, b = make(), _b()
        view = x[0]
        before = x._version[0]
        out = call(x, b)
        return {"self (the method returns x)": out is x, "value": x, "version": x._version[0] - before,
                "view (x[0] made before)": view.tolist()}

    return scenario


_INPLACE = (
    ("x.add_(b)", lambda x, b: x.add_(b)), ("x.add_(b, alpha=2)", lambda x, b: x.add_(b, alpha=2)),
    ("x.add_(np.float32(1))", lambda x, b: x.add_(np.float32(1))),
    ("x.sub_(b, alpha=0.5)", lambda x, b: x.sub_(b, alpha=0.5)), ("x.mul_(b)", lambda x, b: x.mul_(b)),
    ("x.mul_(3).add_(1)", lambda x, b: x.mul_(3).add_(1)), ("x.div_(b)", lambda x, b: x.div_(b)),
    ("x.addcmul_(b, b, value=0.5)", lambda x, b: x.addcmul_(b, b, value=0.5)),
    ("x.addcdiv_(b, b + 2, value=-2)", lambda x, b: x.addcdiv_(b, b + 2, value=-2)),
    ("x.lerp_(b, 0.25)", lambda x, b: x.lerp_(b, 0.25)), ("x.lerp_(b, tc.full_like(b, 0.75))",
                                                          lambda x, b: x.lerp_(b, tc.full_like(b, 0.75))),
    ("x.zero_()", lambda x, b: x.zero_()), ("x.fill_(3)", lambda x, b: x.fill_(3)),
    ("x.copy_(b)", lambda x, b: x.copy_(b)), ("x.copy_([[1, 2, 3], [4, 5, 6]])", lambda x, b: x.copy_([[1, 2, 3], [4, 5, 6]])),
)


def _augmented(op):
    def call(x, b):
        y = x
        if op == "+=":
            y += b
        elif op == "-=":
            y -= 1
        elif op == "*=":
            y *= b
        else:
            y /= 4
        return y
    return call


def _inplace_values(t):
    hint = ("an in-place method is one call of _inplace with the out-of-place op (arithmetic.Add.apply, ...) and "
            "its arguments; _inplace runs it and _write puts the result into self")
    for text, call in _INPLACE:
        _compare(t, text, _written(call), hint=hint)
    for op in ("+=", "-=", "*=", "/="):
        _compare(t, f"x {op} {'b' if op in '+=*=' else ('1' if op == '-=' else '4')}", _written(_augmented(op)),
                 hint="x += b is x.__iadd__(b), and Python binds its result to x: return self.add_(other)")


def _inplace_errors(t):
    def leaf():
        x = _x(requires_grad=True)
        x.add_(1)
        return {}

    def view_of_leaf():
        x = _x(requires_grad=True)
        x[0].mul_(2)
        return {}

    def under_no_grad():
        x = _x(requires_grad=True)
        with tc.no_grad():
            x.mul_(0.5).add_(_b())
        return {"value": x, "leaf (is_leaf, requires_grad, grad_fn)": (x.is_leaf, x.requires_grad, x.grad_fn)}

    _compare(t, "x.add_(1) for a leaf x that requires grad", leaf,
             hint="_check_inplace raises PyTorch's RuntimeError when grad mode is on and self is a leaf that "
                  "requires grad: writing into it would lose the values its gradient is taken at")
    _compare(t, "x[0].mul_(2) for a leaf x that requires grad", view_of_leaf,
             hint="a view that requires grad of a leaf that requires grad writes into that leaf (self._base)")
    _compare(t, "x.mul_(0.5).add_(b) under tc.no_grad() for a leaf x that requires grad", under_no_grad,
             hint="under no_grad (tc.is_grad_enabled() is False) nothing is checked and nothing recorded")
    _compare(t, "x.add_(1.5) for an int64 x", lambda: {"value": tc.tensor([1, 2, 3]).add_(1.5)},
             hint="_write refuses a result whose dtype self cannot hold: tc.can_cast(result.dtype, self.dtype), "
                  "PyTorch's names from type_name(dtype)", given={"x": "[1, 2, 3]"})
    _compare(t, "x.add_(b) for x of shape (3,) and b of shape (2, 3)",
             lambda: {"value": tc.zeros(3).add_(tc.ones(2, 3))},
             hint="_write refuses a result of another shape than self: the result broadcast, self cannot grow")
    _compare(t, "x.add_(b) for x of shape (2, 3) and b of shape (3,)", lambda: {"value": tc.zeros(2, 3).add_(_b())})


def _inplace_graph(t):
    def chain():
        x, b = _x(requires_grad=True), _b(requires_grad=True)
        y = x * 1
        y.mul_(b).add_(b, alpha=2)
        y.addcmul_(x, b, value=0.5)
        seen = {"history": y.grad_fn.name(), "value": y}
        (y * y).sum().backward()
        seen["grads of x and b"] = _grads(x, b)
        return seen

    def into_a_constant():
        a, w = tc.zeros(2, 3), _b(requires_grad=True)
        a.add_(w)
        seen = {"history": None if a.grad_fn is None else a.grad_fn.name(), "leaf (is_leaf)": a.is_leaf}
        (a * a).sum().backward()
        seen["grads of w"] = _grads(w)
        return seen

    def zeroed():
        x = _x(requires_grad=True)
        y = x * 2
        y.zero_()
        seen = {"history": y.grad_fn.name()}
        (y + x).sum().backward()
        seen["grads of x"] = _grads(x)
        return seen

    def filled_and_copied():
        x, b = _x(requires_grad=True), _b(requires_grad=True)
        y = x * 2
        y.copy_(b)
        seen = {"history": y.grad_fn.name()}
        (y * x).sum().backward()
        seen["grads of x and b"] = _grads(x, b)
        return seen

    def saved_then_changed():
        x = _x(requires_grad=True)
        y = x.exp()  # exp saves its output for backward
        y.add_(1)
        y.sum().backward()
        return {}

    hint = ("when grad mode is on and self or an operand requires grad, run the op on old = a copy of self's "
            "values that carries self's history, write the result, and let self take the result's node")
    given = {"x": _X + ", requiring grad", "b": "[0.5, 4, -1], requiring grad"}
    _compare(t, "y = x * 1; y.mul_(b).add_(b, alpha=2); y.addcmul_(x, b, value=0.5); (y * y).sum().backward()",
             chain, given=given, hint=hint)
    _compare(t, "a = tc.zeros(2, 3); a.add_(b); (a * a).sum().backward()", into_a_constant, given=given, hint=hint)
    _compare(t, "y = x * 2; y.zero_(); (y + x).sum().backward()", zeroed, given=given, hint=hint)
    _compare(t, "y = x * 2; y.copy_(b); (y * x).sum().backward()", filled_and_copied, given=given, hint=hint)
    _compare(t, "y = x.exp(); y.add_(1); y.sum().backward()", saved_then_changed, given=given,
             hint="exp saved y for its backward; _write must bump y's version counter so backward sees the change")


@exercise("02c.3", title="Tensor's in-place machinery, methods and operators: TensorInplace", points=2)
def tensor_inplace_check(t, TensorInplace):
    functions = learner_functions(TensorInplace, LEARNER_INPLACE_METHODS)
    missing = [attr for attr in LEARNER_INPLACE_METHODS if attr not in functions]
    if len(missing) == len(LEARNER_INPLACE_METHODS):
        t.fail("TensorInplace", "defines none of the methods", hint="define each method of the list in the class")
    if missing:
        t.fail("TensorInplace", f"defines no {', '.join(missing)}",
               hint="every method of the exercise's list is one method of the class, named as PyTorch names it")
    with installed(TensorInplace):
        _inplace_values(t)
        _inplace_errors(t)
        _inplace_graph(t)
        # the learner's methods are inherited: an optimizer's update of a Parameter (chapter 05) runs them
        p = tc.nn.Parameter(tc.tensor([1.0, -2.0]))
        p.grad = tc.tensor([0.5, 0.5])
        with tc.no_grad():
            p.mul_(0.5).add_(p.grad, alpha=-1.0)
        t.true(p.tolist() == [0.0, -1.5] and p.is_leaf and p._version[0] == 2,
               "p.mul_(0.5).add_(p.grad, alpha=-1.0) under no_grad of a Parameter p = [1, -2] with grad [0.5, 0.5] "
               "to give [0, -1.5], p still a leaf, at version 2", hint="the methods take self, whichever tensor "
               "class it is")
