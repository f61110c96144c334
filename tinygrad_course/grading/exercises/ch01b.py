"""Chapter 01b checks (the tensor object): TensorBase's own methods and properties, written as methods of `self`
in four classes (`ShapeMethods`, `StrideMethods`, `ValueMethods`, `AutogradFields`).

Each method is installed where build mode installs it (TensorBase's own attribute, `seams.offer_methods`), one at
a time, and every expression is compared with the framework's own method on the same fresh input: the value and
its Python type (a `tc.Size`, an `int`, a Python number, a NumPy array sharing the storage), or PyTorch's error
(its type and wording). Then the methods run where the framework uses them (the probe).
"""
from __future__ import annotations

import contextlib
import re

import numpy as np

import tinygrad_course as tc

from ... import seams
from ...tensor_base import BASE_METHODS, TensorBase
from ..registry import exercise
from .learner_classes import defined, learner_functions
from . import ch01b_promotion  # noqa: F401  (registers 01b.6: type promotion)

GROUPS = {"01b.1": ("ShapeMethods", ("shape", "ndim", "dim", "numel", "size", "__len__")),
          "01b.2": ("StrideMethods", ("stride", "is_contiguous")),
          "01b.3": ("ValueMethods", ("__bool__", "item", "tolist", "numpy")),
          "01b.4": ("AutogradFields", ("requires_grad", "requires_grad_", "is_leaf", "detach")),
          "01b.5": ("TensorPrinting", ("__repr__",))}
PROPERTIES = ("shape", "ndim", "requires_grad", "is_leaf")
assert {a for _, attrs in GROUPS.values() for a in attrs} == set(BASE_METHODS)


@contextlib.contextmanager
def installed(*classes):
    """The learner's methods of `classes` are TensorBase's during the block (as build mode installs them)."""
    mine = {}
    for cls in classes:
        mine.update(learner_functions(cls, BASE_METHODS))
    with seams.replaced({f"Tensor.{attr}": fn for attr, fn in mine.items()}):
        yield


def _torch_part(message: str) -> str:
    """PyTorch's wording of an error message, without the one-sentence hint the framework adds."""
    return str(message).split(" Hint:")[0].rstrip(". ")


def _run(attr, implementation, make, call):
    """(result, inputs, error) of `call(*inputs)` on fresh `make()` inputs with `implementation` (None: the
    framework's own) installed as method `attr`."""
    inputs = make()
    with seams.replaced({f"Tensor.{attr}": implementation}):
        try:
            return call(*inputs), inputs, None
        except NotImplementedError:  # the exercise's stub: not a wrong answer
            raise
        except Exception as error:  # compared with what the reference does on the same call
            return None, inputs, error


def _same(got, want) -> str | None:
    """What differs between the learner's result and the reference's (None when nothing does)."""
    if isinstance(want, TensorBase):
        if not isinstance(got, TensorBase):
            return f"expected a tensor, got {type(got).__name__}"
        if got.dtype is not want.dtype or got._data.shape != want._data.shape or not np.array_equal(got._data,
                                                                                                      want._data):
            return f"expected {want!r}, got {got!r}"
        return None
    if isinstance(want, np.ndarray):
        if not isinstance(got, np.ndarray):
            return f"expected a NumPy array, got {type(got).__name__}: {got!r}"
        if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
            return f"expected {want.dtype} array of shape {want.shape}: {want.tolist()}, got {got.dtype} array of " \
                   f"shape {got.shape}: {got.tolist()}"
        return None
    if type(got) is not type(want) or got != want:
        return f"expected {type(want).__name__} {want!r}, got {type(got).__name__} {got!r}"
    if isinstance(want, list) and not _plain(got):
        return f"expected nested lists of Python numbers, got {got!r} holding {_element_type(got)}"
    return None


def _plain(value) -> bool:
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return type(value) in (int, float, bool)


def _element_type(value):
    while isinstance(value, list) and value:
        value = value[0]
    return type(value).__name__


_SETTER = [None]  # the learner's requires_grad setter while their run of a case is on (else the framework's)


def _set_requires_grad(t, value):
    """`t.requires_grad = value` through the learner's setter during their run, the framework's otherwise."""
    (_SETTER[0] or vars(TensorBase)["requires_grad"].fset)(t, value)


def expect_same(t, attr, implementation, text, make, call, given=None, whys=(), fix=None, setter=None):
    """The learner's method `attr` gives on `call(*make())` what the framework's own gives: its value and Python
    type, or PyTorch's error; a recognised mistake (`whys`: (predicate(got, inputs), why)) is named at once.
    `setter` is the learner's requires_grad setter, used by the cases that assign the flag."""
    if isinstance(given, dict) and all(isinstance(v, str) for v in given.values()):
        given = ", ".join(f"{name} = {value}" for name, value in given.items()) or None
    want, _, refused = _run(attr, None, make, call)
    _SETTER[0] = setter
    try:
        got, inputs, error = _run(attr, implementation, make, call)
    finally:
        _SETTER[0] = None
    if refused is not None:
        torch_text = _torch_part(refused)
        if error is None:
            t.fail(text, f"expected {type(refused).__name__} ({torch_text}), but it returned {type(got).__name__}"
                   f" {got!r}", hint=fix, given=given)
        why = _why(whys, error, inputs)
        t.true(type(error) is type(refused), f"{text} to raise {type(refused).__name__}: {torch_text} (it raised "
               f"{type(error).__name__}: {error})", why=why, hint=fix, given=given)
        t.true(torch_text in str(error), f"{text} to raise PyTorch's message: {torch_text} (got: {error})",
               why=why, hint=fix, given=given)
        return None
    if error is not None:
        t.fail(text, f"raised {type(error).__name__}: {error}" + _why_text(whys, error, inputs), hint=fix,
               given=given)
    if got is None and want is not None:
        t.fail(text, "returned None: did you forget a `return`?", hint=fix, given=given)
    problem = _same(got, want)
    if problem:
        t.fail(text, problem + _why_text(whys, got, inputs), hint=fix, given=given)
    t.count += 1
    return got


def _why(whys, got, inputs):
    for predicate, why in whys:
        try:
            if predicate(got, *inputs):
                return why
        except Exception:  # a recogniser that does not apply to this value
            continue
    return None


def _why_text(whys, got, inputs):
    why = _why(whys, got, inputs)
    return f"\n  what went wrong: {why}" if why else ""


def _class_functions(t, cls, exercise_id):
    """The learner's functions for the exercise's methods, after checking that each is defined (properties as
    properties)."""
    name, attrs = GROUPS[exercise_id]
    found = learner_functions(cls, attrs)
    missing = [attr for attr in attrs if attr not in found]
    if len(missing) == len(attrs):
        t.fail(name, "defines none of the methods", hint="define each method of the list in the class")
    if missing:
        t.fail(name, f"defines no {', '.join(missing)}",
               hint="every method of the exercise's list is one method of the class, named as PyTorch names it")
    for attr in attrs:
        if attr in PROPERTIES:
            t.true(isinstance(defined(cls, attr), property),
                   f"{name}.{attr} to be a property (x.{attr}, without parentheses, as in PyTorch)",
                   why=f"without @property, x.{attr} would be the method itself, not its value",
                   hint=f"write @property on the line above def {attr}(self)")
        elif isinstance(defined(cls, attr), property):
            t.fail(f"{name}.{attr}", f"is a property, but PyTorch's x.{attr} is a method (x.{attr}())",
                   hint="remove the @property line above it")
    return found


# ---- inputs ----------------------------------------------------------------------------------------------
def _x(dtype=np.float32, requires_grad=False):
    """tc.arange(24.0).view(2, 3, 4), made without the methods being checked."""
    return tc.tensor(np.arange(24.0, dtype=dtype).reshape(2, 3, 4), requires_grad=requires_grad)


def _scalar():
    return tc.tensor(np.array(3.5, dtype=np.float32))


def _empty():
    return tc.tensor(np.zeros((0, 3), dtype=np.float32))


_X = "tc.arange(24.0).view(2, 3, 4)"


# ---- 01b.1 ----------------------------------------------------------------------------------------------
def _shape_cases():
    x, s, e = (lambda: (_x(),)), (lambda: (_scalar(),)), (lambda: (_empty(),))
    tuple_not_size = (lambda got, *_: type(got) is tuple,
                      "a plain tuple: PyTorch's shape is a torch.Size (here tc.Size), a tuple that prints as "
                      "tc.Size([2, 3, 4])")
    first_dim = (lambda got, x: got == x._data.shape[0] and x._data.ndim > 1, "this is the size of the first dim")
    return (
        ("shape", "x.shape", x, lambda x: x.shape, {"x": _X}, [tuple_not_size]),
        ("shape", "s.shape", s, lambda s: s.shape, {"s": "tc.tensor(3.5), a 0-d tensor"}, [tuple_not_size]),
        ("shape", "e.shape", e, lambda e: e.shape, {"e": "tc.zeros(0, 3)"}, [tuple_not_size]),
        ("ndim", "x.ndim", x, lambda x: x.ndim, {"x": _X},
         [(lambda got, x: got == x._data.size, "this is the number of elements, not of dims")]),
        ("ndim", "s.ndim", s, lambda s: s.ndim, {"s": "tc.tensor(3.5)"}, []),
        ("dim", "x.dim()", x, lambda x: x.dim(), {"x": _X}, []),
        ("dim", "s.dim()", s, lambda s: s.dim(), {"s": "tc.tensor(3.5)"}, []),
        ("numel", "x.numel()", x, lambda x: x.numel(), {"x": _X},
         [first_dim, (lambda got, x: got == x._data.ndim, "this is the number of dims, not of elements"),
          (lambda got, x: got == x._data.nbytes, "this is the number of bytes (nbytes), not of elements")]),
        ("numel", "s.numel()", s, lambda s: s.numel(), {"s": "tc.tensor(3.5), a 0-d tensor"},
         [(lambda got, s: got == 0, "a 0-d tensor holds one element: the product of no sizes is 1")]),
        ("numel", "e.numel()", e, lambda e: e.numel(), {"e": "tc.zeros(0, 3)"}, []),
        ("numel", "x.numel() is an int", x, lambda x: type(x.numel()).__name__, {"x": _X}, []),
        ("size", "x.size()", x, lambda x: x.size(), {"x": _X}, [tuple_not_size]),
        ("size", "x.size(1)", x, lambda x: x.size(1), {"x": _X},
         [(lambda got, x: got == x._data.shape[0], "this is the size of dim 0, not of dim 1")]),
        ("size", "x.size(-1)", x, lambda x: x.size(-1), {"x": _X}, []),
        ("size", "x.size(dim=0)", x, lambda x: x.size(dim=0), {"x": _X}, []),
        ("size", "x.size(3)", x, lambda x: x.size(3), {"x": _X},
         [(lambda got, x: isinstance(got, IndexError) and "tuple index" in str(got),
           "that is Python's error for the tuple: PyTorch names the range of dims")]),
        ("size", "x.size(-4)", x, lambda x: x.size(-4), {"x": _X},
         [(lambda got, x: got is None or isinstance(got, int), "a dim below -ndim counts past the first dim")]),
        ("__len__", "len(x)", x, lambda x: len(x), {"x": _X},
         [(lambda got, x: got == x._data.size, "this is the number of elements: len() is the size of dim 0")]),
        ("__len__", "len(x.transpose(0, 2))", x, lambda x: len(x.transpose(0, 2)), {"x": _X}, []),
        ("__len__", "len(e)", e, lambda e: len(e), {"e": "tc.zeros(0, 3)"}, []),
        ("__len__", "len(s)", s, lambda s: len(s), {"s": "tc.tensor(3.5), a 0-d tensor"},
         [(lambda got, s: isinstance(got, IndexError), "a 0-d tensor has no dim 0: PyTorch raises TypeError")]),
    )


@exercise("01b.1", title="shape, ndim, dim, numel, size and len: ShapeMethods", points=3)
def shape_methods_check(t, ShapeMethods):
    found = _class_functions(t, ShapeMethods, "01b.1")
    for attr, text, make, call, given, whys in _shape_cases():
        expect_same(t, attr, found[attr], text, make, call, given=given, whys=whys, fix=_FIXES[attr])


# ---- 01b.2 ----------------------------------------------------------------------------------------------
def _stride_cases():
    def at(build, dtype=np.float32):
        return lambda: (build(_x(dtype)),)

    in_bytes = (lambda got, v: tuple(got) == tuple(v._data.strides) and v._data.itemsize > 1,
                "these are NumPy's strides, in bytes: PyTorch counts elements (a float32 is 4 bytes, a float64 8)")
    zero_for_none = (lambda got, v: tuple(got) == tuple(s // v._data.itemsize for s in v._data.strides),
                     "a size-1 dim that None inserted has NumPy stride 0; PyTorch gives it the stride it would have "
                     "in a contiguous layout: the size times the stride of the next dim (1 for the last)")
    return (
        ("stride", "x.stride()", at(lambda x: x), lambda v: v.stride(), {"x": _X}, [in_bytes]),
        ("stride", "x.stride() of float64", at(lambda x: x, np.float64), lambda v: v.stride(),
         {"x": _X + ".double()"}, [in_bytes]),
        ("stride", "x.stride(0)", at(lambda x: x), lambda v: v.stride(0), {"x": _X},
         [(lambda got, v: got == v._data.strides[0], "this is NumPy's stride in bytes")]),
        ("stride", "x.stride(-1)", at(lambda x: x), lambda v: v.stride(-1), {"x": _X}, []),
        ("stride", "x.stride(dim=1)", at(lambda x: x), lambda v: v.stride(dim=1), {"x": _X}, []),
        ("stride", "x.transpose(0, 2).stride()", at(lambda x: x.transpose(0, 2)), lambda v: v.stride(), {"x": _X},
         [in_bytes]),
        ("stride", "x[:, ::2].stride()", at(lambda x: x[:, ::2]), lambda v: v.stride(), {"x": _X}, [in_bytes]),
        ("stride", "x[:, :1].expand(2, 5, 4).stride()", at(lambda x: x[:, :1].expand(2, 5, 4)),
         lambda v: v.stride(), {"x": _X}, [in_bytes]),
        ("stride", "x[:, None].stride()", at(lambda x: x[:, None]), lambda v: v.stride(), {"x": _X},
         [in_bytes, zero_for_none]),
        ("stride", "x[..., None].stride()", at(lambda x: x[..., None]), lambda v: v.stride(), {"x": _X},
         [in_bytes, zero_for_none]),
        ("stride", "x.stride(3)", at(lambda x: x), lambda v: v.stride(3), {"x": _X}, []),
        ("stride", "s.stride()", lambda: (_scalar(),), lambda s: s.stride(), {"s": "tc.tensor(3.5)"}, []),
        ("is_contiguous", "x.is_contiguous()", at(lambda x: x), lambda v: v.is_contiguous(), {"x": _X}, []),
        ("is_contiguous", "x[1].is_contiguous()", at(lambda x: x[1]), lambda v: v.is_contiguous(), {"x": _X}, []),
        ("is_contiguous", "x.transpose(0, 2).is_contiguous()", at(lambda x: x.transpose(0, 2)),
         lambda v: v.is_contiguous(), {"x": _X},
         [(lambda got, v: got is True, "a transpose reads the storage out of row order: its strides are not "
                                       "contiguous_strides of its shape")]),
        ("is_contiguous", "x[:, ::2].is_contiguous()", at(lambda x: x[:, ::2]), lambda v: v.is_contiguous(),
         {"x": _X}, [(lambda got, v: got is True, "every other row leaves gaps in the storage")]),
        ("is_contiguous", "x[:, :1].is_contiguous()", at(lambda x: x[:, :1]), lambda v: v.is_contiguous(),
         {"x": _X}, []),
        ("is_contiguous", "x[:, :1].expand(2, 5, 4).is_contiguous()", at(lambda x: x[:, :1].expand(2, 5, 4)),
         lambda v: v.is_contiguous(), {"x": _X}, []),
        ("is_contiguous", "x[:, None].is_contiguous()", at(lambda x: x[:, None]), lambda v: v.is_contiguous(),
         {"x": _X}, []),
        ("is_contiguous", "w.t().is_contiguous()", lambda: (tc.tensor(np.zeros((4, 1), np.float32)).t(),),
         lambda v: v.is_contiguous(), {"w": "tc.zeros(4, 1)"},
         [(lambda got, v: got is False, "w.t() has shape (1, 4): its size-1 dim is never stepped along, so "
                                        "PyTorch ignores that dim's stride")]),
        ("is_contiguous", "e.t().is_contiguous()", lambda: (_empty().t(),), lambda v: v.is_contiguous(),
         {"e": "tc.zeros(0, 3)"},
         [(lambda got, v: got is False, "a tensor without elements is contiguous whatever its strides")]),
        ("is_contiguous", "x.is_contiguous(memory_format=tc.contiguous_format)", at(lambda x: x),
         lambda v: v.is_contiguous(memory_format=tc.contiguous_format), {"x": _X}, []),
    )


@exercise("01b.2", title="stride and is_contiguous: StrideMethods", points=2)
def stride_methods_check(t, StrideMethods):
    found = _class_functions(t, StrideMethods, "01b.2")
    for attr, text, make, call, given, whys in _stride_cases():
        expect_same(t, attr, found[attr], text, make, call, given=given, whys=whys, fix=_FIXES[attr])


# ---- 01b.3 ----------------------------------------------------------------------------------------------
def _value_cases():
    def of(values, dtype=np.float32):
        return lambda: (tc.tensor(np.array(values, dtype=dtype)),)

    numpy_scalar = (lambda got, *_: isinstance(got, np.generic),
                    "this is a NumPy scalar, not a Python number: PyTorch's item() gives a Python float, int or bool")
    numpy_error = (lambda got, *_: isinstance(got, ValueError) and "truth value" in str(got),
                   "that is NumPy's error for the array: PyTorch raises RuntimeError with its own words")
    return (
        ("__bool__", "bool(tc.tensor([2.0]))", of([2.0]), lambda a: bool(a), {}, []),
        ("__bool__", "bool(tc.tensor(0.0))", of(0.0), lambda a: bool(a), {}, []),
        ("__bool__", "bool(tc.tensor([[0]]))", of([[0]], np.int64), lambda a: bool(a), {}, []),
        ("__bool__", "bool(x)", lambda: (_x(),), lambda a: bool(a), {"x": _X}, [numpy_error]),
        ("__bool__", "bool(e)", lambda: (_empty(),), lambda a: bool(a), {"e": "tc.zeros(0, 3)"},
         [numpy_error, (lambda got, *_: isinstance(got, RuntimeError),
                        "a tensor with no values is ambiguous for its own reason: PyTorch says no values")]),
        ("item", "tc.tensor(3.5).item()", of(3.5), lambda a: a.item(), {}, [numpy_scalar]),
        ("item", "tc.tensor([[3.5]]).item()", of([[3.5]]), lambda a: a.item(), {},
         [numpy_scalar, (lambda got, *_: isinstance(got, list), "a one-element tensor of any shape gives its one "
                                                               "number")]),
        ("item", "tc.tensor([7]).item()", of([7], np.int64), lambda a: a.item(), {}, [numpy_scalar]),
        ("item", "tc.tensor(True).item()", of(True, np.bool_), lambda a: a.item(), {}, [numpy_scalar]),
        ("item", "x.item()", lambda: (_x(),), lambda a: a.item(), {"x": _X}, []),
        ("tolist", "x.tolist()", lambda: (_x(),), lambda a: a.tolist(), {"x": _X}, []),
        ("tolist", "x.transpose(0, 2).tolist()", lambda: (_x().transpose(0, 2),), lambda a: a.tolist(), {"x": _X},
         []),
        ("tolist", "tc.tensor([1, 2]).tolist()", of([1, 2], np.int64), lambda a: a.tolist(), {}, []),
        ("tolist", "tc.tensor(3.5).tolist()", of(3.5), lambda a: a.tolist(), {},
         [(lambda got, *_: isinstance(got, list), "a 0-d tensor's tolist() is its number, not a list")]),
        ("numpy", "x.numpy()", lambda: (_x(),), lambda a: a.numpy(), {"x": _X}, []),
        ("numpy", "x.numpy() shares x's memory", lambda: (_x(),),
         lambda a: bool(np.shares_memory(a.numpy(), a._data)), {"x": _X},
         [(lambda got, *_: got is False, "it copied the numbers: PyTorch's numpy() is the tensor's own storage, "
                                         "so a write into either shows in both")]),
        ("numpy", "x.transpose(0, 2).numpy()", lambda: (_x().transpose(0, 2),), lambda a: a.numpy(), {"x": _X}, []),
        ("numpy", "x.numpy() of x requiring grad", lambda: (_x(requires_grad=True),), lambda a: a.numpy(),
         {"x": _X + ", requiring grad"}, []),
        ("numpy", "y.numpy() of y = x * 2 (x requiring grad)", lambda: (_x(requires_grad=True) * 2,),
         lambda a: a.numpy(), {"x": _X + ", requiring grad"}, []),
    )


@exercise("01b.3", title="bool, item, tolist and numpy: ValueMethods", points=2)
def value_methods_check(t, ValueMethods):
    found = _class_functions(t, ValueMethods, "01b.3")
    for attr, text, make, call, given, whys in _value_cases():
        expect_same(t, attr, found[attr], text, make, call, given=given or None, whys=whys, fix=_FIXES[attr])


# ---- 01b.4 ----------------------------------------------------------------------------------------------
def _leaf(requires_grad=True):
    return tc.tensor([1.0, 2.0, 3.0], requires_grad=requires_grad)


def _state(t):
    """What requires_grad_ and the setter may change, read with the framework's own fields."""
    return (t._requires_grad, t.grad_fn is None)


def _detached_facts(d, x):
    """Everything PyTorch's detach() promises, read without the methods being checked."""
    return {"values": d._data.tolist(), "requires_grad": d._requires_grad, "grad_fn": d.grad_fn is None,
            "same storage": bool(np.shares_memory(d._data, x._data)), "same version counter": d._version is x._version,
            "storage_offset": d.storage_offset(), "class": type(d).__name__}


def _autograd_cases():
    leaf, plain = (lambda: (_leaf(),)), (lambda: (_leaf(False),))
    made = (lambda: (_leaf() * 2,))
    ints = (lambda: (tc.tensor(np.array([1, 2], np.int64)),))
    kept_false = (lambda got, *_: got[0] is True and got[1][0] is False,
                  "requires_grad_() with no argument means requires_grad=True: the default is True")
    return (
        ("requires_grad", "a.requires_grad", leaf, lambda a: a.requires_grad, {"a": "tc.tensor([1., 2., 3.], "
                                                                                  "requires_grad=True)"}, []),
        ("requires_grad", "a.requires_grad", plain, lambda a: a.requires_grad, {"a": "tc.tensor([1., 2., 3.])"}, []),
        ("requires_grad", "(a * 2).requires_grad", made, lambda y: y.requires_grad,
         {"a": "tc.tensor([1., 2., 3.], requires_grad=True)"}, []),
        ("requires_grad", "a.requires_grad = True (your setter)", plain,
         lambda a: (_set_requires_grad(a, True), _state(a))[1], {"a": "tc.tensor([1., 2., 3.])"}, []),
        ("requires_grad", "y.requires_grad = False for y = a * 2 (your setter)", made,
         lambda y: (_set_requires_grad(y, False), _state(y))[1], {"a": "tc.tensor([1., 2., 3.], requires_grad=True)"}, []),
        ("requires_grad_", "a.requires_grad_()", plain, lambda a: (a.requires_grad_() is a, _state(a)),
         {"a": "tc.tensor([1., 2., 3.])"},
         [kept_false, (lambda got, *_: got[0] is False, "PyTorch's requires_grad_ returns the tensor itself "
                                                        "(return self), so calls can be chained")]),
        ("requires_grad_", "a.requires_grad_(False)", leaf, lambda a: (a.requires_grad_(False) is a, _state(a)),
         {"a": "tc.tensor([1., 2., 3.], requires_grad=True)"}, []),
        ("requires_grad_", "a.requires_grad_(0.5)", plain, lambda a: (a.requires_grad_(0.5) is a, _state(a),
                                                                     type(a._requires_grad).__name__),
         {"a": "tc.tensor([1., 2., 3.])"},
         [(lambda got, *_: got[2] != "bool", "the flag is a bool: store bool(requires_grad)")]),
        ("requires_grad_", "i.requires_grad_()", ints, lambda i: i.requires_grad_(), {"i": "tc.tensor([1, 2])"}, []),
        ("requires_grad_", "i.requires_grad_(False)", ints, lambda i: (i.requires_grad_(False) is i, _state(i)),
         {"i": "tc.tensor([1, 2])"},
         [(lambda got, *_: isinstance(got, RuntimeError), "an integer tensor may be told it does not require "
                                                          "grad: only requires_grad=True is refused")]),
        ("requires_grad_", "y.requires_grad_(False) for y = a * 2", made, lambda y: y.requires_grad_(False),
         {"a": "tc.tensor([1., 2., 3.], requires_grad=True)"},
         [(lambda got, *_: not isinstance(got, Exception), "y was made by an op (y.grad_fn is MulBackward0): only a "
                                                           "leaf's flag may be changed")]),
        ("requires_grad_", "y.requires_grad_(True) for y = a * 2", made,
         lambda y: (y.requires_grad_(True) is y, _state(y)), {"a": "tc.tensor([1., 2., 3.], requires_grad=True)"},
         [(lambda got, *_: isinstance(got, RuntimeError), "a non-leaf already requires grad: asking for it again "
                                                          "is allowed and changes nothing")]),
        ("is_leaf", "a.is_leaf", leaf, lambda a: a.is_leaf, {"a": "tc.tensor([1., 2., 3.], requires_grad=True)"},
         []),
        ("is_leaf", "b.is_leaf", plain, lambda a: a.is_leaf, {"b": "tc.tensor([1., 2., 3.])"},
         [(lambda got, *_: got is False, "a tensor that does not require grad is a leaf too (by convention)")]),
        ("is_leaf", "(a * 2).is_leaf", made, lambda y: y.is_leaf, {"a": "tc.tensor([1., 2., 3.], "
                                                                         "requires_grad=True)"},
         [(lambda got, *_: got is True, "a * 2 was made by an op: its grad_fn is a node of the graph")]),
        ("is_leaf", "(a * 2).is_leaf under no_grad", leaf, lambda a: _no_grad_product(a).is_leaf,
         {"a": "tc.tensor([1., 2., 3.], requires_grad=True)"},
         [(lambda got, *_: got is False, "nothing was recorded under no_grad: the result has no grad_fn")]),
        ("detach", "y.detach() of y = a * 2", made, lambda y: _detached_facts(y.detach(), y),
         {"a": "tc.tensor([1., 2., 3.], requires_grad=True)"},
         [(lambda got, *_: not got["same storage"], "it copied the numbers: detach() shares the storage"),
          (lambda got, *_: not got["same version counter"], "the detached tensor has a version counter of its "
                                                            "own: an in-place change of it must count for y too"),
          (lambda got, *_: got["requires_grad"] or not got["grad_fn"], "the result is still in the graph")]),
        ("detach", "x[1:].detach() of a view", lambda: (_x()[1:],), lambda v: _detached_facts(v.detach(), v),
         {"x": _X}, [(lambda got, *_: got["storage_offset"] == 0, "storage_offset() reads _base: the detached "
                                                                  "tensor shares the view's base storage")]),
        ("detach", "a.detach() of a Parameter", lambda: (tc.nn.Parameter(tc.ones(2)),),
         lambda p: _detached_facts(p.detach(), p), {"a": "nn.Parameter(tc.ones(2))"}, []),
        ("detach", "y.detach().zero_(), then y.sum().backward() for y = a.exp()", leaf,
         lambda a: _modified_detached(a), {"a": "tc.tensor([1., 2., 3.], requires_grad=True)"},
         [(lambda got, *_: not isinstance(got, Exception), "backward used y's values after its detached alias "
                                                           "changed them: the shared version counter catches it")]),
        ("detach", "y.detach().requires_grad_() as a new leaf", made, lambda y: _new_leaf(y),
         {"a": "tc.tensor([1., 2., 3.], requires_grad=True)"}, []),
    )


def _no_grad_product(a):
    with tc.no_grad():
        return a * 2


def _modified_detached(a):
    y = a.exp()
    y.detach().zero_()
    y.sum().backward()
    return a.grad.tolist()


def _new_leaf(y):
    d = y.detach().requires_grad_()
    (d * d).sum().backward()
    return d.grad.tolist(), y.grad_fn is not None, d.is_leaf


@exercise("01b.4", title="requires_grad, requires_grad_, is_leaf and detach: AutogradFields", points=3)
def autograd_fields_check(t, AutogradFields):
    found = _class_functions(t, AutogradFields, "01b.4")
    prop = defined(AutogradFields, "requires_grad")
    t.true(prop.fset is not None, "AutogradFields.requires_grad to have a setter (a.requires_grad = True, as in "
           "PyTorch)", why="without one, assigning to it raises AttributeError",
           hint="write @requires_grad.setter above a second def requires_grad(self, value) that calls "
                "self.requires_grad_(value)")
    for attr, text, make, call, given, whys in _autograd_cases():
        expect_same(t, attr, found[attr], text, make, call, given=given, whys=whys, fix=_FIXES[attr],
                    setter=prop.fset)


# ---- 01b.5 ----------------------------------------------------------------------------------------------
def _t(values, dtype=np.float32, requires_grad=False):
    return tc.tensor(np.array(values, dtype=dtype), requires_grad=requires_grad)


def _unpadded(got, want):
    """The learner's text is the reference's with the padding of the elements removed."""
    squeeze = re.compile(r"([\[,]) +")
    return got != want and squeeze.sub(r"\1", got) == squeeze.sub(r"\1", want)


def _printing_cases():
    nan, inf = float("nan"), float("inf")
    unpadded = (lambda got, *_: isinstance(got, str) and _unpadded(got, _WANT[0]),
                "the elements are not padded: PyTorch pads each one on the left to the width of the widest, so the "
                "columns line up")
    decimals = (lambda got, *_: isinstance(got, str) and ".0000" in got and ".0000" not in _WANT[0],
                "a float that is a whole number prints as 1. (no decimals) when every element is one")
    sci = (lambda got, *_: isinstance(got, str) and "e-" not in got and "e+" not in got,
           "values that far apart (largest / smallest > 1000, or one below 1e-4 or above 1e8) print in scientific "
           "notation, every element with four decimals: 1.0000e-05")
    suffix = (lambda got, *_: isinstance(got, str) and any(k in _WANT[0] and k not in got for k in
                                                             ("dtype=", "grad_fn=", "requires_grad=", "size=")),
              "a suffix is missing: PyTorch adds the dtype (when it is not the default), an empty tensor's size, "
              "and grad_fn=<...> or requires_grad=True")
    rows = (lambda got, *_: isinstance(got, str) and got.count("\n") < _WANT[0].count("\n"),
            "the rows of a matrix go on lines of their own (and a blank line separates the matrices of a 3-d "
            "tensor), indented to the bracket's depth")
    return (
        ("__repr__", "repr(tc.tensor([1., 2., 3.]))", lambda: (_t([1.0, 2.0, 3.0]),), repr, {}, [decimals]),
        ("__repr__", "repr(tc.tensor([0.5, -1.25, 3.0]))", lambda: (_t([0.5, -1.25, 3.0]),), repr, {}, [unpadded]),
        ("__repr__", "repr(tc.tensor([1, 20, 300]))", lambda: (_t([1, 20, 300], np.int64),), repr, {}, [unpadded]),
        ("__repr__", "repr(tc.tensor([True, False]))", lambda: (_t([True, False], np.bool_),), repr, {}, [unpadded]),
        ("__repr__", "repr(tc.tensor(3.5))", lambda: (_t(3.5),), repr, {}, []),
        ("__repr__", "repr(tc.tensor(-7))", lambda: (_t(-7, np.int64),), repr, {}, []),
        ("__repr__", "repr(tc.tensor([100000., 1.]))", lambda: (_t([100000.0, 1.0]),), repr, {}, [sci]),
        ("__repr__", "repr(tc.tensor([[1e-05, 1.], [2., 3.]]))", lambda: (_t([[1e-5, 1.0], [2.0, 3.0]]),), repr, {},
         [sci, rows]),
        ("__repr__", "repr(tc.tensor([1., nan, inf, 0.]))", lambda: (_t([1.0, nan, inf, 0.0]),), repr, {}, []),
        ("__repr__", "repr(tc.tensor([0., nan, -0.5]))", lambda: (_t([0.0, nan, -0.5]),), repr, {}, []),
        ("__repr__", "repr(x)", lambda: (_x(),), repr, {"x": _X}, [rows, decimals]),
        ("__repr__", "repr(x[0] / 7)", lambda: (_x()[0] / 7,), repr, {"x": _X}, [rows, unpadded]),
        ("__repr__", "repr(tc.arange(30.) * 1.5)", lambda: (tc.tensor(np.arange(30.0, dtype=np.float32) * 1.5),),
         repr, {}, [(lambda got, *_: isinstance(got, str) and "\n" not in got,
                     "a row longer than 80 characters wraps: as many elements per line as fit in 80 - indent "
                     "characters, each taking its width + 2 (\", \"), the next lines indented under the first element")]),
        ("__repr__", "repr(tc.tensor([1., 2.], dtype=tc.float64))", lambda: (_t([1.0, 2.0], np.float64),), repr, {},
         [suffix]),
        ("__repr__", "repr(tc.tensor([1, 2], dtype=tc.int32))", lambda: (_t([1, 2], np.int32),), repr, {}, [suffix]),
        ("__repr__", "repr(a) of a requiring grad", lambda: (_t([1.0, 2.0], requires_grad=True),), repr, {}, [suffix]),
        ("__repr__", "repr(a * 2) of a requiring grad", lambda: (_t([1.0, 2.0], requires_grad=True) * 2,), repr, {},
         [suffix]),
        ("__repr__", "repr(tc.zeros(0, 3))", lambda: (_empty(),), repr, {}, [suffix]),
        ("__repr__", "repr(tc.zeros(0, dtype=tc.int64))", lambda: (_t([], np.int64),), repr, {}, [suffix]),
        ("__repr__", "repr(w) of w = tc.arange(40.).view(2, 20) * 1.25 requiring grad",
         lambda: (tc.tensor(np.arange(40.0, dtype=np.float32).reshape(2, 20) * 1.25, requires_grad=True),), repr, {},
         [(lambda got, *_: isinstance(got, str) and got.endswith(", requires_grad=True)") and
           _WANT[0].endswith(",\n       requires_grad=True)"),
           "a suffix that would make the last line longer than 80 characters goes on a line of its own, indented "
           "like the elements")]),
        ("__repr__", "print(x[1, :2])", lambda: (_x()[1, :2],), str, {"x": _X}, []),
    )


_WANT = [""]  # the reference's text of the case being compared, for the recognisers above


@exercise("01b.5", title="printing a tensor as PyTorch does: TensorPrinting", points=3)
def tensor_printing_check(t, TensorPrinting):
    found = _class_functions(t, TensorPrinting, "01b.5")
    for attr, text, make, call, given, whys in _printing_cases():
        with seams.replaced({"Tensor.__repr__": None}):
            _WANT[0] = call(*make())
        expect_same(t, attr, found[attr], text, make, call, given=given or None, whys=whys, fix=_FIXES[attr])


_FIXES = {
    "shape": "return tc.Size(self._data.shape): the array's shape as a tc.Size",
    "ndim": "the number of dims is the array's ndim (len of its shape)",
    "dim": "dim() is the same number as ndim, as a method",
    "numel": "the number of elements is the product of the sizes, 1 for a 0-d tensor: int(self._data.size)",
    "size": "size() is the shape; size(dim) one entry of it, dim negative from the end, and out of the range "
            "[-ndim, ndim - 1] PyTorch's IndexError: Dimension out of range (expected to be in range of [-3, 2], "
            "but got 3)",
    "__len__": "len() is the size of dim 0; a 0-d tensor raises TypeError('len() of a 0-d tensor')",
    "stride": "divide each of NumPy's byte strides by self._data.itemsize; then, from the last dim to the first, "
              "give a size-1 dim with stride 0 the stride size * stride of the next dim (1 for the last)",
    "is_contiguous": "compare self.stride() with contiguous_strides(self.shape), skipping the dims of size 1; a "
                     "tensor without elements is contiguous",
    "__bool__": "raise PyTorch's RuntimeError for more than one value and for no values, else bool of the one "
                "element",
    "item": "a one-element array's .item() is a Python number; reshape(()) first so any shape works, and raise "
            "RuntimeError(f'a Tensor with {n} elements cannot be converted to Scalar') otherwise",
    "tolist": "NumPy's tolist() gives nested lists of Python numbers (and a number for a 0-d array)",
    "numpy": "return self._data itself (no copy), after raising PyTorch's RuntimeError when self._requires_grad",
    "requires_grad": "the getter returns self._requires_grad; the setter calls self.requires_grad_(value)",
    "requires_grad_": "a tensor with a grad_fn may only be asked for True (return self); otherwise refuse True for "
                      "a dtype that is not floating point, then store bool(requires_grad) and return self",
    "is_leaf": "a leaf is a tensor without a grad_fn",
    "detach": "t = _wrap(self._data); share the version counter (t._version = self._version), note its value "
              "(t._view_version = self._version[0]) and the storage's owner (t._base = self._base if self is a view, "
              "else self); return t",
    "__repr__": "choose one format and one width for all elements (element_format), pad each to it on the left "
                "(format_element), lay the rows out with nested() (\",\" + one newline per dim below + indent + 1 spaces "
                "between rows), then add the suffixes, each on a line of its own when the last line would pass 80",
}
