"""Catalogue of wrong answers, chapter 02c (Tensor's operators and methods): each realistic mistake fails with a
message that names it, the hint waits for a second failure, and the unsolved stub fails."""
import numpy as np
import pytest

import tinygrad_course as tc
from tinygrad_course.ops import arithmetic, comparison, reduce, views

from .wrong_answers import catalogue_tests, named_mistake_test, solution

TensorOperators, as_operand, TensorMethods, TensorInplace = solution("02c", "TensorOperators", "as_operand",
                                                                     "TensorMethods", "TensorInplace")


def _operators(name, **methods):
    """The solution's TensorOperators with `methods` written wrong."""
    return type(name, (TensorOperators,), methods)


RsubAsSub = _operators("RsubAsSub", __rsub__=lambda self, other: arithmetic.Sub.apply(self, as_operand(other)))
TruedivOfTensorsOnly = _operators("TruedivOfTensorsOnly", __truediv__=lambda self, other: (
    arithmetic.Div.apply(self, other) if isinstance(other, tc.Tensor) else NotImplemented))
ViewOfATupleOnly = _operators("ViewOfATupleOnly", view=lambda self, shape: views.View.apply(self, tuple(shape)))
TWithoutProperty = _operators("TWithoutProperty", T=lambda self: views.Permute.apply(self, tuple(range(self.ndim))[::-1]))
ContiguousCopying = _operators("ContiguousCopying", contiguous=lambda self, memory_format=None: views.Clone.apply(self))
AddConvertingAnything = _operators("AddConvertingAnything", __add__=lambda self, other: arithmetic.Add.apply(
    self, other if isinstance(other, (tc.Tensor, int, float)) else tc.tensor(other)))
MulOfPythonNumbersOnly = _operators("MulOfPythonNumbersOnly", __mul__=lambda self, other: (
    arithmetic.Mul.apply(self, other) if isinstance(other, (tc.Tensor, int, float)) else NotImplemented))
ExpInNumPy = _operators("ExpInNumPy", exp=lambda self: tc.tensor(np.exp(self.detach().numpy())))

def _methods(name, **methods):
    """The solution's TensorMethods with `methods` written wrong."""
    return type(name, (TensorMethods,), methods)


def _inplace(name, **methods):
    """The solution's TensorInplace with `methods` written wrong."""
    return type(name, (TensorInplace,), methods)


def _write_without_version(self, result):
    self._data[...] = result._data


def _write_rebinding(self, result):
    self._data = result._data.astype(self._data.dtype)
    self._version[0] += 1


def _write_without_cast_check(self, result):
    if result.shape != self.shape:
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                           f"{list(result.shape)}")
    self._data[...] = result._data
    self._version[0] += 1


def _inplace_on_self(self, fn, *args, **kwargs):
    self._check_inplace()
    result = fn(self, *args, **kwargs)
    self._write(result)
    if result.grad_fn is not None:
        self.grad_fn, self._output_nr, self._requires_grad = result.grad_fn, result._output_nr, True
    return self


WriteWithoutVersion = _inplace("WriteWithoutVersion", _write=_write_without_version)
WriteRebinding = _inplace("WriteRebinding", _write=_write_rebinding)
WriteWithoutCastCheck = _inplace("WriteWithoutCastCheck", _write=_write_without_cast_check)
InplaceOnSelf = _inplace("InplaceOnSelf", _inplace=_inplace_on_self)
InplaceWithoutHistory = _inplace("InplaceWithoutHistory", _inplace=lambda self, fn, *args, **kwargs: (
    self._check_inplace(), self._write(fn(self.detach(), *args, **kwargs)), self)[-1])
IaddOutOfPlace = _inplace("IaddOutOfPlace", __iadd__=lambda self, other: self + other)
SumAlwaysOverDims = _methods("SumAlwaysOverDims", sum=lambda self, dim=None, keepdim=False, *, dtype=None:
                             reduce.Sum.apply(self, dim, keepdim, dtype))
ToAlwaysCopying = _methods("ToAlwaysCopying", to=lambda self, *args, dtype=None, device=None, non_blocking=False,
                           copy=False: views.ToCopy.apply(self, dtype=next((a for a in args if isinstance(a, tc.dtype)),
                                                                            dtype), device=None, copy=True))
NoLeafCheck = _inplace("NoLeafCheck", _check_inplace=lambda self, through_view=False: None)
InvertAlwaysLogical = _methods("InvertAlwaysLogical", __invert__=lambda self: comparison.Unary.apply(self, op="logical_not"))


CATALOGUE = [
    ("02c.1", (RsubAsSub,), ["2 - a: values differ", "this is a - 2, but 2 - a calls a.__rsub__(2)", "input: a = "]),
    ("02c.1", (TruedivOfTensorsOnly,), ["a / 4: raised TypeError", "it returned NotImplemented for an operand the "
                                                                    "operator supports"]),
    ("02c.1", (ViewOfATupleOnly,), ["x.view(6, 4): raised TypeError", "passes each size as an argument of its own"]),
    ("02c.1", (TWithoutProperty,), ["TensorOperators.T to be a property", "x.T would be the method itself"]),
    ("02c.1", (ContiguousCopying,), ["x.contiguous() to read x's own storage", "it copied the numbers"]),
    ("02c.1", (AddConvertingAnything,), ["a.__add__('a'): raised TypeError"]),
    ("02c.1", (MulOfPythonNumbersOnly,), ["a * np.float32(2): raised", "NumPy tries the operation itself"]),
    ("02c.1", (ExpInNumPy,), ["a.exp() to be recorded in the graph", "not made by an op's apply"]),
    ("02c.3", (WriteWithoutVersion,), ["x.add_(b): version: expected 1, got 0", "version counter did not go up"]),
    ("02c.3", (WriteRebinding,), ["view (x[0] made before)", "the write did not reach x's storage"]),
    ("02c.3", (WriteWithoutCastCheck,), ["x.add_(1.5) for an int64 x: expected RuntimeError: result type Float "
                                         "can't be cast to the desired output type Long"]),
    ("02c.3", (InplaceOnSelf,), ["modified by an inplace operation", "run the op on a copy of the old values"]),
    ("02c.3", (InplaceWithoutHistory,), ["history: expected 'AddcmulBackward0', got 'MulBackward0'",
                                         "does not end in the op's node"]),
    ("02c.3", (IaddOutOfPlace,), ["x += b: self (the method returns x): expected True, got False"]),
    ("02c.2", (SumAlwaysOverDims,), ["x.sum(): node: expected 'SumBackward0', got 'SumBackward1'"]),
    ("02c.2", (ToAlwaysCopying,), ["x.to(tc.float32): self (x itself when nothing changes): expected True, got False",
                                   "returns the tensor itself when neither the dtype nor the device changes"]),
    ("02c.3", (NoLeafCheck,), ["x.add_(1) for a leaf x that requires grad: expected RuntimeError: a leaf Variable "
                               "that requires grad is being used in an in-place operation."]),
    ("02c.2", (InvertAlwaysLogical,), ["~tc.tensor([1, -2, 0]): value", "the values differ from PyTorch's"]),
]


test_a_wrong_answer_fails_naming_its_mistake = named_mistake_test(CATALOGUE)


def test_the_solutions_pass():
    from tinygrad_course.grading import check, reset_attempts

    reset_attempts()
    check("02c.1", TensorOperators)
    check("02c.2", TensorMethods)
    check("02c.3", TensorInplace)


NAMES = {"02c.1": ("TensorOperators",), "02c.2": ("TensorMethods",), "02c.3": ("TensorInplace",)}

test_the_stub_fails, test_every_exercise_has_two_wrong_answers = catalogue_tests(NAMES, CATALOGUE, "02c")
