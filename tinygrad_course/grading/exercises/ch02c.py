"""Chapter 02c (Tensor's operators and methods), exercise 02c.1: Tensor's operators, element-wise math and views,
written as methods of `self` (the class `TensorOperators`) that hand each call to an op (`a * b` is
`Mul.apply(a, b)`). Exercises 02c.2 (reductions, comparisons, conversions) and 02c.3 (the in-place machinery and
methods) are checked in `ch02c_methods.py` and `ch02c_inplace.py`.

The learner's methods are installed where build mode installs them (the class attribute of `tc.Tensor` itself,
`seams.offer_methods`), and every expression is compared with the framework's own methods on the same input:
tensors with broadcasting, Python numbers and NumPy scalars on either side (the reflected operators), other
types (NotImplemented, so Python raises its TypeError), the math, and the views (values, shapes, strides,
shared storage, PyTorch's errors). Then the methods run where the framework uses them (the probe).
"""
import contextlib
import math

import numpy as np

import tinygrad_course as tc

from ... import seams
from ...tensor import LEARNER_METHODS
from .. import mistakes
from ..registry import exercise
from .learner_classes import defined, learner_functions
from . import ch02c_methods  # noqa: F401  (registers 02c.2: reductions, comparisons, logical operators, conversions)
from . import ch02c_inplace  # noqa: F401  (registers 02c.3: the in-place machinery, methods and operators)

_PROPERTIES = ("T", "mT")


@contextlib.contextmanager
def _reference():
    """The framework's own methods during the block (whatever build mode has installed)."""
    with seams.replaced({f"Tensor.{attr}": None for attr in LEARNER_METHODS}):
        yield


@contextlib.contextmanager
def installed(cls):
    """The learner's methods are tc.Tensor's during the block (as build mode installs them)."""
    functions = learner_functions(cls, LEARNER_METHODS)
    with seams.replaced({f"Tensor.{attr}": functions[attr] for attr in LEARNER_METHODS}):
        yield


def _inputs():
    a = tc.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    b = tc.tensor([0.5, -1.0, 2.0], requires_grad=True)
    return a, b


def _run(call):
    """(result, error) of `call(a, b)` on fresh inputs."""
    a, b = _inputs()
    try:
        return call(a, b), None
    except NotImplementedError:  # the exercise's stub: not a wrong answer
        raise
    except Exception as error:  # compared with what the reference does on the same call
        return None, error


def _expect_same(t, text, call, found=(), fix=None, given=None):
    """The learner's `call(a, b)` (installed) gives what the framework's own methods give: its value, dtype,
    shape and strides, a node in the graph; or PyTorch's error when the reference raises."""
    with _reference():
        want, refused = _run(call)
    got, error = _run(call)
    if refused is not None:
        if error is None:
            t.fail(text, f"expected {type(refused).__name__} ({refused}), but it returned "
                   f"{type(got).__name__}", hint=fix, given=given)
        t.true(type(error) is type(refused), f"{text} to raise {type(refused).__name__}: {refused} (it raised "
               f"{type(error).__name__}: {error})", hint=fix, given=given)
        t.true(str(refused) in str(error), f"{text} to raise PyTorch's message: {refused} (got: {error})",
               hint=fix, given=given)
        return None
    if error is not None:
        why = None
        if "np." in text:
            why = ("a NumPy value is an operand the operator supports: when your method returns NotImplemented for "
                   "it, NumPy tries the operation itself")
        elif isinstance(error, TypeError) and "unsupported operand" in str(error):
            why = "it returned NotImplemented for an operand the operator supports, so Python tried the other side"
        elif isinstance(error, TypeError) and "positional argument" in str(error):
            why = ("the method does not take PyTorch's arguments: x.view(6, 4) passes each size as an argument of "
                   "its own, x.view((6, 4)) one tuple")
        t.fail(text, f"raised {type(error).__name__}: {error}" + (f"\n  what went wrong: {why}" if why else ""),
               hint=fix, given=given)
    if got is None or got is NotImplemented:
        t.fail(text, f"returned {got!r} where the framework returns a tensor: did you forget a `return`?",
               hint=fix, given=given)
    t.true(isinstance(got, tc.Tensor), f"{text} to be a tc.Tensor (got {type(got).__name__})",
           hint="hand the call to the op: its apply returns the framework's tensor", given=given)
    t.close(got, want, text, check_dtype=True, mistakes=found, given=given)
    t.equal(tuple(got.shape), tuple(want.shape), f"shape of {text}", given=given)
    if want.requires_grad:
        t.true(got.grad_fn is not None, f"{text} to be recorded in the graph (its grad_fn is None)",
               why="the result was not made by an op's apply, so backward cannot reach the inputs",
               hint="return the op's apply(...): Op.apply records the node that backward runs", given=given)
    return got


def _named(value, why, fix):
    return mistakes.custom(lambda got, e: got.shape == np.shape(value) and np.allclose(got, value), why, fix)


_A = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=np.float32)
_B = np.array([0.5, -1.0, 2.0], dtype=np.float32)
_GIVEN = {"a": _A, "b": _B}
_REFLECTED = "Python calls a.__r<op>__(x) for x <op> a when x (a number) cannot: there self is the right operand"


def _operators(t):
    for text, call, found in (
            ("a + b", lambda a, b: a + b, ()),
            ("a - b", lambda a, b: a - b, [_named(_B - _A, "this is b - a: the operands are swapped",
                                                  "__sub__(self, other) is self - other")]),
            ("a * b", lambda a, b: a * b, ()),
            ("a / b", lambda a, b: a / b, [_named(_B / _A, "this is b / a: the operands are swapped",
                                                  "__truediv__(self, other) is self / other")]),
            ("a ** 2", lambda a, b: a ** 2, ()),
            ("-a", lambda a, b: -a, ()),
            ("a @ a.T", lambda a, b: a @ a.T, ()),
            ("b @ b", lambda a, b: b @ b, ())):
        _expect_same(t, text, call, found, given=_GIVEN)
    for text, call, swapped in (
            ("2 + a", lambda a, b: 2 + a, None), ("a + 2", lambda a, b: a + 2, None),
            ("a - 2", lambda a, b: a - 2, None), ("2 - a", lambda a, b: 2 - a, _A - 2),
            ("a * 3", lambda a, b: a * 3, None), ("3 * a", lambda a, b: 3 * a, None),
            ("a / 4", lambda a, b: a / 4, None), ("4 / a", lambda a, b: 4 / a, _A / 4),
            ("a ** 0.5", lambda a, b: a ** 0.5, None), ("a * True", lambda a, b: a * True, None)):
        found = () if swapped is None else [_named(swapped, f"this is {text[-1]} {text[2]} {text[0]}, but {text} "
                                                            f"calls a.__r{'sub' if '-' in text else 'truediv'}__"
                                                            f"({text[0]}): self is the right operand here",
                                                   _REFLECTED)]
        _expect_same(t, text, call, found, given={"a": _A},
                     fix="turn the number into an operand and hand both to the op; in a reflected operator "
                          "(__radd__, __rsub__, ...) the number is the left operand: Sub.apply(other, self)")
    for text, call in (("a * np.float32(2)", lambda a, b: a * np.float32(2)),
                       ("np.float32(2) * a", lambda a, b: np.float32(2) * a),
                       ("a - np.float64(1)", lambda a, b: a - np.float64(1)),
                       ("a / np.int64(2)", lambda a, b: a / np.int64(2)),
                       ("a + np.ones(3)", lambda a, b: a + np.ones(3))):
        _expect_same(t, text, call, given={"a": _A}, fix="a NumPy scalar (np.generic, also np.float64, which is a "
                     "float) is its Python number, other.item(); a NumPy array becomes a tensor, tc.tensor(other)")


def _other_types(t):
    a, _ = _inputs()
    for symbol, method in (("+", "__add__"), ("-", "__sub__"), ("*", "__mul__"), ("/", "__truediv__"),
                           ("**", "__pow__"), ("@", "__matmul__"), ("+", "__radd__"), ("-", "__rsub__"),
                           ("*", "__rmul__"), ("/", "__rtruediv__")):
        try:
            got = getattr(a, method)("a")
        except NotImplementedError:
            raise
        except Exception as error:
            t.fail(f"a.{method}('a')", f"raised {type(error).__name__}: {error}", hint=(
                "return NotImplemented (the constant, not an error) for an operand you do not handle: Python "
                "then asks the other operand and raises PyTorch's TypeError itself"))
        t.true(got is NotImplemented, f"a.{method}('a') to return NotImplemented for a string (got "
               f"{type(got).__name__})", why=f"then a {symbol} 'a' does not raise Python's TypeError "
               f"(unsupported operand type(s) for {symbol}: 'Tensor' and 'str')",
               hint="return NotImplemented for anything that is not a tensor, a number or a NumPy value")


def _math(t):
    for name in ("exp", "log", "tanh", "sqrt", "relu", "sigmoid"):
        _expect_same(t, f"a.{name}()", lambda a, b, n=name: getattr(a - 2.5, n)() if n != "log" and n != "sqrt"
                     else getattr(a, n)(), given={"a": _A})


_VIEWS = (
    ("x.view(6, 4)", lambda x: x.view(6, 4)), ("x.view((6, 4))", lambda x: x.view((6, 4))),
    ("x.view([4, -1])", lambda x: x.view([4, -1])), ("x.view(-1)", lambda x: x.view(-1)),
    ("x.reshape(4, 6)", lambda x: x.reshape(4, 6)), ("x.reshape((3, -1))", lambda x: x.reshape((3, -1))),
    ("x.transpose(0, 1).reshape(6, 4)", lambda x: x.transpose(0, 1).reshape(6, 4)),
    ("x[:, :, :2].reshape(2, 6)", lambda x: x[:, :, :2].reshape(2, 6)),
    ("x.transpose(0, 2)", lambda x: x.transpose(0, 2)), ("x.transpose(-1, 0)", lambda x: x.transpose(-1, 0)),
    ("x[0].t()", lambda x: x[0].t()), ("x[0, 0].t()", lambda x: x[0, 0].t()), ("x.t()", lambda x: x.t()),
    ("x[0].T", lambda x: x[0].T), ("x.T", lambda x: x.T), ("x.mT", lambda x: x.mT),
    ("x[0, 0].mT", lambda x: x[0, 0].mT),
    ("x[:, :1].expand(2, 5, 4)", lambda x: x[:, :1].expand(2, 5, 4)),
    ("x[:, :1].expand((3, 2, -1, 4))", lambda x: x[:, :1].expand((3, 2, -1, 4))),
    ("x.unsqueeze(1)", lambda x: x.unsqueeze(1)), ("x.unsqueeze(-1)", lambda x: x.unsqueeze(-1)),
    ("x[:, :1].squeeze()", lambda x: x[:, :1].squeeze()), ("x[:, :1].squeeze(1)", lambda x: x[:, :1].squeeze(1)),
    ("x.squeeze(0)", lambda x: x.squeeze(0)),
    ("x.transpose(1, 2).contiguous()", lambda x: x.transpose(1, 2).contiguous()), ("x.clone()", lambda x: x.clone()))
_VIEW_HINT = ("x.view(2, 3), x.view((2, 3)) and x.view([2, 3]) mean one shape: take *shape and unpack a single "
              "tuple or list; hand the rest to the op")


def _x(requires_grad=False):
    """tc.arange(24.0).view(2, 3, 4), made without the methods being checked."""
    return tc.tensor(np.arange(24.0, dtype=np.float32).reshape(2, 3, 4), requires_grad=requires_grad)


def _views(t):
    x_given = {"x": "tc.arange(24.0).view(2, 3, 4), requiring grad"}
    for text, call in _VIEWS:
        def run(a, b, call=call):
            return call(_x(requires_grad=True))
        got = _expect_same(t, text, run, fix=_VIEW_HINT if "view" in text or "expand" in text else None,
                           given=x_given)
        if got is None:
            continue
        with _reference():
            want = run(None, None)
        t.equal(got.stride(), want.stride(), f"strides of {text}", given=x_given,
                why="PyTorch's result reads x's storage with these strides (a view), or is a row-major copy",
                hint="hand the call to the view op (views.View, views.Transpose, ...), which makes the view")
    x = _x()
    for text, made, view in (("x.view(6, 4)", lambda: x.view(6, 4), True),
                             ("x.reshape(4, 6)", lambda: x.reshape(4, 6), True),
                             ("x.transpose(0, 2)", lambda: x.transpose(0, 2), True),
                             ("x.contiguous()", lambda: x.contiguous(), True),
                             ("x.clone()", lambda: x.clone(), False),
                             ("x.transpose(0, 1).reshape(6, 4)", lambda: x.transpose(0, 1).reshape(6, 4), False)):
        shares = bool(np.shares_memory(made()._data, x._data))
        t.true(shares == view, f"{text} to " + ("read x's own storage (a view)" if view else
                                                 "have storage of its own (a copy)"),
               why=("it copied the numbers: a write into x no longer shows in it" if view else
                    "it shares x's storage: writing into it would change x"),
               hint=("reshape is a view whenever the strides allow one and a copy only when they do not; contiguous "
                     "returns x itself when x is already contiguous" if view else
                     "clone copies always; reshape copies (contiguous, then view) when no view exists"),
               given={"x": "tc.arange(24.0).view(2, 3, 4)"})
    t.true(x.contiguous() is x, "x.contiguous() of a contiguous x to be x itself (PyTorch returns self, no copy)",
           hint="if self.is_contiguous(): return self")


@exercise("02c.1", title="Tensor's operators, math and views: TensorOperators", points=4)
def tensor_operators_check(t, TensorOperators):
    functions = learner_functions(TensorOperators, LEARNER_METHODS)
    missing = [attr for attr in LEARNER_METHODS if attr not in functions]
    if len(missing) == len(LEARNER_METHODS):
        t.fail("TensorOperators", "defines none of the methods", hint="define each method of the list in the class")
    if missing:
        t.fail("TensorOperators", f"defines no {', '.join(missing)}",
               hint="every method of the exercise's list is one method of the class, named as PyTorch names it")
    for attr in _PROPERTIES:
        t.true(isinstance(defined(TensorOperators, attr), property),
               f"TensorOperators.{attr} to be a property (x.{attr}, without parentheses, as in PyTorch)",
               why=f"without @property, x.{attr} would be the method itself, not the transposed tensor",
               hint=f"write @property on the line above def {attr}(self)")
    with installed(TensorOperators):
        _operators(t)
        _other_types(t)
        _math(t)
        _views(t)
        # the learner's methods are inherited: a Parameter (chapter 03) computes with them too
        p = tc.nn.Parameter(tc.tensor([[1.0, -2.0]]))
        out = (2 - p.T * 3).relu().sum()
        t.true(isinstance(out, tc.Tensor) and math.isclose(out.item(), 8.0), "(2 - p.T * 3).relu().sum() of a "
               "Parameter p = [[1, -2]] to be 8.0", hint="the methods take self, whichever tensor class it is")
