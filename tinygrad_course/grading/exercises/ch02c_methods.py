"""Chapter 02c, exercise 02c.2: the reductions, comparisons, logical operators and conversions of Tensor, written as
methods of `self` (the class `TensorMethods`) that hand each call to an op.

The learner's methods are installed where build mode installs them (`tc.Tensor`'s class attributes,
`seams.offer_methods`), and each scenario runs twice on fresh inputs, with the learner's methods and with the
framework's own: what it returns, the node its history ends in, the gradients a backward then computes, whether
`to` returned the tensor itself, and PyTorch's errors. Then the methods run where the framework uses them (the
probe). The scenario machinery here is also 02c.3's (`ch02c_inplace.py`).
"""
import contextlib

import numpy as np

import tinygrad_course as tc

from ... import seams
from ...tensor import LEARNER_INPLACE_METHODS, LEARNER_REDUCTION_METHODS
from ..registry import exercise
from .learner_classes import learner_functions

_ALIASES = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__")


@contextlib.contextmanager
def _reference():
    """The framework's own methods of chapter 02c.2 and 02c.3 during the block (whatever build mode has installed)."""
    with seams.replaced({f"Tensor.{attr}": None for attr in LEARNER_REDUCTION_METHODS + LEARNER_INPLACE_METHODS}):
        yield


def installing(names):
    """A context manager factory: the methods `names` of a learner's class are tc.Tensor's during the block (as
    build mode installs them)."""

    @contextlib.contextmanager
    def installed(cls):
        functions = learner_functions(cls, names)
        with seams.replaced({f"Tensor.{attr}": functions[attr] for attr in names if attr in functions}):
            yield

    return installed


installed = installing(LEARNER_REDUCTION_METHODS)  # the learner's TensorMethods (02c.2)


def _x(requires_grad=False, dtype=None):
    return tc.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], dtype=dtype, requires_grad=requires_grad)


def _b(requires_grad=False):
    return tc.tensor([0.5, 4.0, -1.0], requires_grad=requires_grad)


_X = "[[1, -2, 3], [4, 5, -6]]"
_GIVEN = {"x": _X, "b": "[0.5, 4, -1]"}


# ---- what a scenario shows: each observation compared with the reference's, in this order, with its message
def _plain(value):
    if isinstance(value, tc.Tensor):
        return f"tensor({value.detach().cpu().numpy().tolist()}, dtype={value.dtype})"
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # (values, indices)
        return f"{type(value).__name__}(values={_plain(value[0])}, indices={_plain(value[1])})"
    return value


def _run(scenario):
    """{observation: value} of `scenario()` on fresh inputs, or {"error": (type, message)}."""
    try:
        return scenario()
    except NotImplementedError:  # the exercise's stub: not a wrong answer
        raise
    except Exception as error:  # compared with what the reference does on the same call
        return {"error": (type(error).__name__, str(error))}


_WHY = {
    "self (x itself when nothing changes)": ("PyTorch's to() returns the tensor itself when neither the dtype nor the "
                                             "device changes (and copy is False): no copy, the same object", None),
    "self": ("it returned something else than x: PyTorch's in-place methods return the tensor itself, so "
             "x.mul_(2).add_(1) chains", "return self at the end of _inplace (and __iadd__ returns what add_ returns)"),
    "value": ("the values differ from PyTorch's", None),
    "version": ("x's version counter did not go up by one per write: a backward that saved x would read the new "
                "values without noticing", "add one to self._version[0] in _write, after the write"),
    "view": ("the write did not reach x's storage: a view of x made before it (x[0]) still shows the old values",
             "write into the array itself, self._data[...] = result._data; binding a new array to self._data "
             "leaves every view behind"),
    "history": ("x's history does not end in the op's node, so backward does not reach the op's inputs (or still "
                "goes through x's old node)", "after the write, x takes the result's grad_fn and _output_nr and "
                "requires grad"),
    "grads": ("the gradients a backward then computes differ from PyTorch's", "run the op on a copy of the old "
              "values that carries x's history (old.grad_fn = self.grad_fn, ...), then write the result into x"),
    "node": ("the result's node is not the one PyTorch records: SumBackward0 for a sum of every element, "
             "SumBackward1 for a sum over dims (MeanBackward0/1, MaxBackward1/0 alike)", None),
    "leaf": ("x is no longer the same leaf: an update under no_grad must leave x a leaf that requires grad",
             "under no_grad write the op's result into self, recording nothing"),
}


def _compare(t, text, scenario, *, given=_GIVEN, hint=None):
    with _reference():
        want = _run(scenario)
    got = _run(scenario)
    if "error" in want:
        kind, message = want["error"]
        pytorch = message.split(" Hint:")[0]
        if "error" not in got:
            t.fail(text, f"expected {kind}: {pytorch}, but it raised nothing", hint=hint, given=given)
        t.true(got["error"][0] == kind and pytorch in got["error"][1], f"{text} to raise {kind}: {pytorch} (it "
               f"raised {got['error'][0]}: {got['error'][1]})", hint=hint, given=given)
        return
    if "error" in got:
        why = ""
        if "modified by an inplace operation" in got["error"][1]:
            why = ("\n  what went wrong: the op saved the tensor it was run on for its backward, and the write then "
                   "changed that tensor: run the op on a copy of the old values, not on self")
        t.fail(text, f"raised {got['error'][0]}: {got['error'][1]}{why}", hint=hint, given=given)
    for key, expected in want.items():
        mine = got.get(key)
        if key.startswith(("value", "grads")):
            why = _WHY["grads" if key.startswith("grads") else "value"]
            if mine is None and expected is not None:
                t.fail(text, f"{key}: returned None where PyTorch gives a tensor: did you forget a `return`?",
                       hint=hint, given=given)
            t.equal(_plain(mine) if key == "value" else mine, _plain(expected) if key == "value" else expected,
                    f"{text}: {key}", why=why[0], hint=why[1] or hint, given=given)
        else:
            why, fix = _WHY[key] if key in _WHY else _WHY[key.split(" ")[0]]
            t.equal(mine, expected, f"{text}: {key}", why=why, hint=fix or hint, given=given)


def _grads(*tensors):
    return [None if p.grad is None else np.round(p.grad.numpy(), 6).tolist() for p in tensors]


# ---- reductions, comparisons, logical operators, conversions -------------------------------------------------
def _reductions(t):
    for text, call in (
            ("x.sum()", lambda x: x.sum()), ("x.sum(1)", lambda x: x.sum(1)),
            ("x.sum((0, 1), keepdim=True)", lambda x: x.sum((0, 1), keepdim=True)),
            ("x.sum(dtype=tc.float64)", lambda x: x.sum(dtype=tc.float64)),
            ("x.mean()", lambda x: x.mean()), ("x.mean(0, keepdim=True)", lambda x: x.mean(0, keepdim=True)),
            ("x.max()", lambda x: x.max()), ("x.max(1)", lambda x: x.max(1)),
            ("x.max(0, keepdim=True)", lambda x: x.max(0, keepdim=True)),
            ("x.max(x.flip(0))", lambda x: x.max(x.flip(0))),
            ("x.argmax()", lambda x: x.argmax()), ("x.argmax(1)", lambda x: x.argmax(1)),
            ("x.argmax(0, keepdim=True)", lambda x: x.argmax(0, keepdim=True)),
            ("x.any()", lambda x: x.any()), ("(x > 0).all(1)", lambda x: (x > 0).all(1)),
            ("(x > 4).any(0, keepdim=True)", lambda x: (x > 4).any(0, keepdim=True))):
        def scenario(call=call):
            x = _x(requires_grad=True)
            out = call(x)
            first = out[0] if isinstance(out, tuple) else out
            seen = {"value": out, "node": None if first.grad_fn is None else first.grad_fn.name()}
            if first.requires_grad:
                first.sum().backward()
                seen["grads of x"] = _grads(x)
            return seen
        _compare(t, text, scenario, given={"x": _X + ", requiring grad"},
                 hint="hand the call to the reduction op (reduce.SumAll / reduce.Sum, ...), whose node PyTorch "
                      "names: SumBackward0 over every element, SumBackward1 over dims")


def _comparisons(t):
    for text, call in (("x == b", lambda x, b: x == b), ("x != 3", lambda x, b: x != 3), ("x < b", lambda x, b: x < b),
                       ("x <= np.float32(3)", lambda x, b: x <= np.float32(3)), ("x > b", lambda x, b: x > b),
                       ("x >= 1", lambda x, b: x >= 1), ("x.eq(b)", lambda x, b: x.eq(b)),
                       ("x.ne(b)", lambda x, b: x.ne(b)), ("x.lt(0)", lambda x, b: x.lt(0)),
                       ("x.le(b)", lambda x, b: x.le(b)), ("x.gt(b)", lambda x, b: x.gt(b)),
                       ("x.ge(b)", lambda x, b: x.ge(b)), ("x == 'a'", lambda x, b: x == "a")):
        _compare(t, text, lambda call=call: {"value": call(_x(), _b())},
                 hint="a comparison is comparison.Compare.apply(self, other, op=...), a bool tensor; return "
                      "NotImplemented for an operand as_operand does not take (then x == 'a' is False, as in Python)")
    for text, call in (("(x > 0) & (x < 4)", lambda x: (x > 0) & (x < 4)), ("(x > 0) | (b < 1)", lambda x: (x > 0) | (_b() < 1)),
                       ("~(x > 0)", lambda x: ~(x > 0)), ("~tc.tensor([1, -2, 0])", lambda x: ~tc.tensor([1, -2, 0])),
                       ("tc.tensor([1, 2, 6]) | 1", lambda x: tc.tensor([1, 2, 6]) | 1),
                       ("tc.tensor([1, 2, 6]) & np.int64(2)", lambda x: tc.tensor([1, 2, 6]) & np.int64(2)),
                       ("(x > 0) | 'a'", lambda x: (x > 0) | "a")):
        _compare(t, text, lambda call=call: {"value": call(_x())},
                 hint="& and | are comparison.Bitwise.apply(self, other, op='and' / 'or') after as_operand; ~ is "
                      "comparison.Unary.apply(self, op=...): 'logical_not' for a bool tensor, 'bitwise_not' for an "
                      "integer one")


def _conversions(t):
    for text, call in (("x.to(tc.float64)", lambda x: x.to(tc.float64)), ("x.to(tc.float32)", lambda x: x.to(tc.float32)),
                       ("x.to('cpu')", lambda x: x.to("cpu")), ("x.to(tc.device('cpu'), tc.int64)",
                                                                lambda x: x.to(tc.device("cpu"), tc.int64)),
                       ("x.to(dtype=tc.float16)", lambda x: x.to(dtype=tc.float16)),
                       ("x.to(device='cpu', dtype=tc.float64)", lambda x: x.to(device="cpu", dtype=tc.float64)),
                       ("x.to(tc.tensor([1, 2]))", lambda x: x.to(tc.tensor([1, 2]))),
                       ("x.to(tc.float32, copy=True)", lambda x: x.to(tc.float32, copy=True)),
                       ("x.cpu()", lambda x: x.cpu()), ("x.float()", lambda x: x.float()), ("x.long()", lambda x: x.long()),
                       ("x.long().float()", lambda x: x.long().float())):
        def scenario(call=call):
            x = _x(requires_grad=True)
            out = call(x)
            seen = {"value": out, "self (x itself when nothing changes)": out is x,
                    "node": None if out.grad_fn is None else out.grad_fn.name()}
            if out.requires_grad:
                (out * out).sum().backward()
                seen["grads of x"] = _grads(x)
            return seen
        _compare(t, text, scenario, given={"x": _X + ", float32, requiring grad"},
                 hint="a dtype, a device (a string or tc.device) or a tensor (both) among the arguments; return self "
                      "when neither differs and copy is False, else views.ToCopy.apply(self, dtype=..., device=..., "
                      "copy=...)")

@exercise("02c.2", title="Tensor's reductions, comparisons, logical operators and conversions: TensorMethods", points=2)
def tensor_methods_check(t, TensorMethods):
    functions = learner_functions(TensorMethods, LEARNER_REDUCTION_METHODS)
    missing = [attr for attr in LEARNER_REDUCTION_METHODS if attr not in functions]
    if len(missing) == len(LEARNER_REDUCTION_METHODS):
        t.fail("TensorMethods", "defines none of the methods", hint="define each method of the list in the class")
    if missing:
        t.fail("TensorMethods", f"defines no {', '.join(missing)}",
               hint="every method of the exercise's list is one method of the class, named as PyTorch names it; "
                    "the comparison operators are aliases: __eq__ = eq")
    with installed(TensorMethods):
        _reductions(t)
        _comparisons(t)
        _conversions(t)
