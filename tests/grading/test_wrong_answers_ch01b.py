"""Catalogue of wrong answers, chapter 01b (the tensor object): each realistic mistake in one of TensorBase's
methods fails with a message that names it and shows the input, the hint waits for a second failure, and the
unsolved stub fails."""
import pytest

import tinygrad_course as tc
from tinygrad_course.tensor_base import _wrap

from .wrong_answers import assert_names_mistake, catalogue_tests, named_mistake_test, solution

ShapeMethods, StrideMethods, ValueMethods, AutogradFields, TensorPrinting = solution(
    "01b", "ShapeMethods", "StrideMethods", "ValueMethods", "AutogradFields", "TensorPrinting")
element_format, format_element, nested = solution("01b", "element_format", "format_element", "nested")


class ShapeAsTuple(ShapeMethods):
    @property
    def shape(self):
        return tuple(self._data.shape)


class NumelOfFirstDim(ShapeMethods):
    def numel(self):
        return self._data.shape[0] if self._data.ndim else 1


class LenOfElements(ShapeMethods):
    def __len__(self):
        return self._data.size


class SizeWithoutRange(ShapeMethods):
    def size(self, dim=None):
        return tc.Size(self._data.shape) if dim is None else self._data.shape[dim]


class StrideInBytes(StrideMethods):
    def stride(self, dim=None):
        strides = tuple(self._data.strides)
        return strides if dim is None else strides[dim]


class StrideOfNumPy(StrideMethods):
    def stride(self, dim=None):
        strides = tuple(s // self._data.itemsize for s in self._data.strides)
        return strides if dim is None else strides[dim]


class ContiguousOverEveryDim(StrideMethods):
    def is_contiguous(self, memory_format=None):
        return self._data.size == 0 or tuple(self.stride()) == contiguous_strides(self._data.shape)


class ItemAsNumPyScalar(ValueMethods):
    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.reshape(())[()]


class BoolOfTheArray(ValueMethods):
    def __bool__(self):
        return bool(self._data)


class NumpyCopied(ValueMethods):
    def numpy(self, *, force=False):
        if self._requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        return self._data.copy()


class NumpyIgnoringGrad(ValueMethods):
    def numpy(self, *, force=False):
        return self._data


class RequiresGradDefaultFalse(AutogradFields):
    def requires_grad_(self, requires_grad=False):
        return AutogradFields.requires_grad_(self, requires_grad)


class RequiresGradReturningNone(AutogradFields):
    def requires_grad_(self, requires_grad=True):
        AutogradFields.requires_grad_(self, requires_grad)


class NonLeafRefusedAlways(AutogradFields):
    def requires_grad_(self, requires_grad=True):
        if self.grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use a "
                               "computed variable in a subgraph that doesn't require differentiation use "
                               "var_no_grad = var.detach().")
        return AutogradFields.requires_grad_(self, requires_grad)


class LeafOnlyWithGrad(AutogradFields):
    @property
    def is_leaf(self):
        return self.grad_fn is None and self._requires_grad


class DetachCopied(AutogradFields):
    def detach(self):
        t = _wrap(self._data.copy())
        t._version = self._version
        return t


class DetachOwnCounter(AutogradFields):
    def detach(self):
        t = _wrap(self._data)
        t._base = self if self._base is None else self._base
        return t


class ShapeMethod(ShapeMethods):
    def shape(self):
        return tc.Size(self._data.shape)


contiguous_strides = solution("01b", "contiguous_strides")[0]


def _printed(body_of):
    """A TensorPrinting whose body (the elements in brackets) is `body_of(values, mode, width)`, suffixes as the
    solution adds them."""
    class Printing(TensorPrinting):
        def __repr__(self):
            text = TensorPrinting.__repr__(self)
            mode, width = element_format(self._data, self.dtype.is_floating_point) if self._data.size else ("", 1)
            if not self._data.size:
                return text
            right = nested(self._data, 7, mode, width)
            return text.replace(right, body_of(self._data, mode, width), 1)
    return Printing


UnpaddedPrinting = _printed(lambda values, mode, width: nested(values, 7, mode, 1))
FourDecimalsAlways = _printed(lambda values, mode, width: nested(values, 7, "fixed" if mode == "int" else mode,
                                                                 width + 4 if mode == "int" else width))


class NoSuffixPrinting(TensorPrinting):
    def __repr__(self):
        mode, width = element_format(self._data, self.dtype.is_floating_point) if self._data.size else ("", 1)
        return "tensor(" + (nested(self._data, 7, mode, width) if self._data.size else "[]") + ")"


class RowsOnOneLine(TensorPrinting):
    def __repr__(self):
        return TensorPrinting.__repr__(self).replace(",\n         ", ", ").replace(",\n                ", ", ")

CATALOGUE = [
    ("01b.1", (ShapeAsTuple,), ["x.shape: expected Size tc.Size([2, 3, 4]), got tuple (2, 3, 4)", "a plain tuple",
                                "input: x = tc.arange(24.0).view(2, 3, 4)"]),
    ("01b.1", (ShapeMethod,), ["ShapeMethods.shape to be a property", "x.shape would be the method itself"]),
    ("01b.1", (NumelOfFirstDim,), ["x.numel(): expected int 24, got int 2", "this is the size of the first dim"]),
    ("01b.1", (LenOfElements,), ["len(x): expected int 2, got int 24", "len() is the size of dim 0"]),
    ("01b.1", (SizeWithoutRange,), ["x.size(3) to raise PyTorch's message: Dimension out of range",
                                    "that is Python's error for the tuple"]),
    ("01b.2", (StrideInBytes,), ["x.stride(): expected tuple (12, 4, 1), got tuple (48, 16, 4)",
                                 "NumPy's strides, in bytes"]),
    ("01b.2", (StrideOfNumPy,), ["x[:, None].stride(): expected tuple (12, 12, 4, 1), got tuple (12, 0, 4, 1)",
                                 "a size-1 dim that None inserted has NumPy stride 0"]),
    ("01b.2", (ContiguousOverEveryDim,), ["w.t().is_contiguous(): expected bool True, got bool False",
                                          "its size-1 dim is never stepped along", "input: w = tc.zeros(4, 1)"]),
    ("01b.3", (ItemAsNumPyScalar,), ["tc.tensor(3.5).item(): expected float 3.5, got float32 np.float32(3.5)",
                                     "this is a NumPy scalar, not a Python number"]),
    ("01b.3", (BoolOfTheArray,), ["bool(x) to raise RuntimeError: Boolean value of Tensor with more than one value "
                                  "is ambiguous (it raised ValueError", "that is NumPy's error for the array"]),
    ("01b.3", (NumpyCopied,), ["x.numpy() shares x's memory: expected bool True, got bool False",
                               "it copied the numbers"]),
    ("01b.3", (NumpyIgnoringGrad,), ["x.numpy() of x requiring grad: expected RuntimeError (Can't call numpy() on "
                                     "Tensor that requires grad", "but it returned ndarray"]),
    ("01b.4", (RequiresGradDefaultFalse,), ["a.requires_grad_()", "the default is True",
                                            "input: a = tc.tensor([1., 2., 3.])"]),
    ("01b.4", (RequiresGradReturningNone,), ["a.requires_grad_()", "returns the tensor itself (return self)"]),
    ("01b.4", (NonLeafRefusedAlways,), ["y.requires_grad_(True) for y = a * 2: raised RuntimeError",
                                        "asking for it again is allowed"]),
    ("01b.4", (LeafOnlyWithGrad,), ["b.is_leaf: expected bool True, got bool False",
                                    "a tensor that does not require grad is a leaf too"]),
    ("01b.4", (DetachCopied,), ["y.detach() of y = a * 2", "it copied the numbers: detach() shares the storage"]),
    ("01b.4", (DetachOwnCounter,), ["y.detach() of y = a * 2", "a version counter of its own"]),
    ("01b.5", (UnpaddedPrinting,), ["repr(tc.tensor([0.5, -1.25, 3.0])): expected str", "got str 'tensor([0.5000, "
                                    "-1.2500, 3.0000])'", "the elements are not padded"]),
    ("01b.5", (FourDecimalsAlways,), ["repr(tc.tensor([1., 2., 3.]))", "prints as 1. (no decimals)"]),
    ("01b.5", (NoSuffixPrinting,), ["repr(tc.tensor([1., 2.], dtype=tc.float64))", "a suffix is missing"]),
    ("01b.5", (RowsOnOneLine,), ["repr(x): expected str", "the rows of a matrix go on lines of their own",
                                 "input: x = tc.arange(24.0).view(2, 3, 4)"]),
]


test_a_wrong_answer_fails_naming_its_mistake = named_mistake_test(CATALOGUE)


def test_the_solutions_pass():
    from tinygrad_course.grading import check, reset_attempts

    reset_attempts()
    check("01b.1", ShapeMethods)
    check("01b.2", StrideMethods)
    check("01b.3", ValueMethods)
    check("01b.4", AutogradFields)
    check("01b.5", TensorPrinting)


def test_a_class_missing_a_method_is_told_which():
    class Partial:
        @property
        def shape(self):
            return tc.Size(self._data.shape)

    message = assert_names_mistake("01b.1", (Partial,), "defines no ndim, dim, numel, size, __len__")
    assert "0/3" in message


NAMES = {"01b.1": ("ShapeMethods",), "01b.2": ("StrideMethods",), "01b.3": ("ValueMethods",),
         "01b.4": ("AutogradFields",), "01b.5": ("TensorPrinting",)}

test_the_stub_fails, test_every_exercise_has_two_wrong_answers = catalogue_tests(NAMES, CATALOGUE, "01b")
