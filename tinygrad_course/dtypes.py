"""Data types and PyTorch's type-promotion rules.

A `dtype` wraps a NumPy dtype (bfloat16 comes from `ml_dtypes`). Promotion follows
`torch.result_type`: tensors with dimensions outrank zero-dim tensors, which outrank Python
scalars, and a lower-priority operand only changes the result when it is of a higher category
(bool < integer < floating). A Python float therefore never widens a float32 tensor, and an
integer tensor combined with a Python float gives the default float dtype (float32).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from ._namespace import namespace
from .seams import ACTIVE, learner, offer, set_aside

_CATEGORY_BOOL, _CATEGORY_INT, _CATEGORY_FLOAT = 0, 1, 2


class dtype:
    """A tensor element type, like `torch.dtype` (e.g. `tc.float32`)."""

    __slots__ = ("name", "np_dtype", "category", "itemsize", "is_signed", "_tensor_type")

    def __init__(self, name, np_dtype, category, tensor_type):
        self.name = name
        self.np_dtype = np.dtype(np_dtype)
        self.category = category
        self.itemsize = self.np_dtype.itemsize
        self.is_signed = category == _CATEGORY_FLOAT or self.np_dtype.kind == "i"
        self._tensor_type = tensor_type

    @property
    def is_floating_point(self) -> bool:
        """True for float16, bfloat16, float32 and float64."""
        return self.category == _CATEGORY_FLOAT

    @property
    def is_complex(self) -> bool:
        """Always False: complex dtypes are not part of the course's framework."""
        return False

    def to_real(self):
        return self

    def __repr__(self):
        return f"{namespace()}.{self.name}"

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))


bool_ = dtype("bool", np.bool_, _CATEGORY_BOOL, "BoolTensor")
uint8 = dtype("uint8", np.uint8, _CATEGORY_INT, "ByteTensor")
int8 = dtype("int8", np.int8, _CATEGORY_INT, "CharTensor")
int16 = dtype("int16", np.int16, _CATEGORY_INT, "ShortTensor")
int32 = dtype("int32", np.int32, _CATEGORY_INT, "IntTensor")
int64 = dtype("int64", np.int64, _CATEGORY_INT, "LongTensor")
float16 = dtype("float16", np.float16, _CATEGORY_FLOAT, "HalfTensor")
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, _CATEGORY_FLOAT, "BFloat16Tensor")
float32 = dtype("float32", np.float32, _CATEGORY_FLOAT, "FloatTensor")
float64 = dtype("float64", np.float64, _CATEGORY_FLOAT, "DoubleTensor")

ALL_DTYPES = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64)
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NP = {d.np_dtype: d for d in ALL_DTYPES}

_default_float = float32


def _dtype_by_name(name):
    return _BY_NAME[name]


def from_numpy_dtype(np_dtype) -> dtype:
    """The framework dtype of a NumPy dtype; raises TypeError for unsupported ones."""
    try:
        return _BY_NP[np_dtype]
    except KeyError:
        try:
            return _BY_NP[np.dtype(np_dtype)]
        except (KeyError, TypeError):
            raise TypeError(
                f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype)}. The only supported types are: "
                "float64, float32, float16, bfloat16, int64, int32, int16, int8, uint8, and bool."
            ) from None


def get_default_dtype() -> dtype:
    """The dtype of floating-point tensors created from Python floats (float32 unless changed)."""
    return _default_float


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype, like `torch.set_default_dtype` (float32 or float64)."""
    global _default_float
    if d not in (float32, float64, float16, bfloat16):
        raise TypeError("only floating-point types are supported as the default type")
    _default_float = d


def to_dtype(d) -> dtype:
    """Accept a framework dtype, a NumPy dtype, a Python type or a name; return a framework dtype."""
    if isinstance(d, dtype):
        return d
    if d is float:
        return _default_float
    if d is int:
        return int64
    if d is bool:
        return bool_
    if isinstance(d, str) and d in _BY_NAME:
        return _BY_NAME[d]
    return from_numpy_dtype(d)


# ---- promotion ---------------------------------------------------------------------------------

_INT_ORDER = {uint8: 0, int8: 1, int16: 2, int32: 3, int64: 4}


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both can be converted to, like `torch.promote_types`."""
    if ACTIVE:  # build mode: the learner's promote_types (exercise 01b.6), looked up inline (no call otherwise)
        implementation = learner("promote_types")
        if implementation is not None:
            return implementation(a, b)
    if a is b:
        return a
    for position, d in ((1, a), (2, b)):
        if not isinstance(d, dtype):
            raise TypeError(f"promote_types(): argument 'type{position}' (position {position}) must be "
                            f"{namespace()}.dtype, not {type(d).__name__}")
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.category == _CATEGORY_FLOAT:
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a.itemsize > b.itemsize else b
    if a.category == _CATEGORY_INT:
        if uint8 in (a, b):
            other = b if a is uint8 else a
            return int16 if other is int8 else other
        return a if _INT_ORDER[a] > _INT_ORDER[b] else b
    return a


def scalar_dtype(value) -> dtype:
    """The dtype PyTorch gives a Python scalar operand (bool, int64 or the default float); a complex number or
    anything that is not a number raises TypeError."""
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, (int, np.integer)):
        return int64
    if isinstance(value, (float, np.floating)):
        return _default_float
    if isinstance(value, (complex, np.complexfloating)):
        raise TypeError(f"result_type(): complex number {value!r}: PyTorch would give a complex dtype, and the "
                        "course's framework has none (use the real and imaginary parts as two float tensors)")
    raise TypeError(f"result_type(): expected tensors and Python numbers, but got {type(value).__name__}")


PYTHON_SCALARS = {bool: bool_, int: int64, float: None}  # None: the default float dtype


def with_python_scalar(d: dtype, value) -> dtype:
    """`result_type(tensor_of_dtype_d, value)` for a Python bool/int/float (the fast common case):
    the scalar changes the dtype only when it is of a higher category."""
    s = PYTHON_SCALARS[type(value)] or _default_float
    return d if d.category >= s.category else s


def _combine_categories(higher, lower):
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.category == _CATEGORY_FLOAT:
        return higher
    if higher is bool_ or lower.category == _CATEGORY_FLOAT:
        return promote_types(higher, lower)
    return higher


def result_type(*operands) -> dtype:
    """The dtype of an operation on these operands (tensors or Python scalars), like `torch.result_type`."""
    if ACTIVE:  # build mode: the learner's result_type (exercise 01b.6)
        implementation = learner("result_type")
        if implementation is not None:
            return implementation(*operands)
    dim_result = zero_result = wrapped_result = None
    for op in operands:
        d = getattr(op, "dtype", None)
        if isinstance(d, dtype):
            if op.ndim > 0:
                dim_result = d if dim_result is None else promote_types(dim_result, d)
            else:
                zero_result = d if zero_result is None else promote_types(zero_result, d)
        else:
            d = scalar_dtype(op)
            wrapped_result = d if wrapped_result is None else promote_types(wrapped_result, d)
    return _combine_categories(_combine_categories(dim_result, zero_result), wrapped_result)


# the references a learner's raising component falls back to: the function with the learner's own set aside
offer("promote_types", set_aside("promote_types", promote_types))
offer("result_type", set_aside("result_type", result_type))


def can_cast(from_: dtype, to: dtype) -> bool:
    """Whether an in-place result of dtype `from_` may be written into `to` (PyTorch's same-kind rule)."""
    return from_.category <= to.category


def float_result(d: dtype) -> dtype:
    """The dtype of a floating-only op (exp, sqrt, true division) applied to dtype `d`."""
    return d if d.category == _CATEGORY_FLOAT else _default_float


# ---- numerical limits ----------------------------------------------------------------------------

class finfo:
    """Limits of a floating dtype (bits, eps, max, min, tiny, resolution), like `torch.finfo`."""

    def __init__(self, type=None):
        d = _default_float if type is None else to_dtype(type)
        if d.category != _CATEGORY_FLOAT:
            raise TypeError("tc.finfo() requires a floating point input type. Use tc.iinfo to handle 'tc.finfo'")
        info = ml_dtypes.finfo(d.np_dtype) if d is bfloat16 else np.finfo(d.np_dtype)
        self.bits = d.itemsize * 8
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.tiny)
        self.resolution = 10.0 ** -int(info.precision)
        self.dtype = d.name

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype (bits, min, max), like `torch.iinfo`."""

    def __init__(self, type):
        d = to_dtype(type)
        if d is bool_:
            raise TypeError("tc.bool is not supported by tc.iinfo")
        if d.category != _CATEGORY_INT:
            raise TypeError("tc.iinfo() requires an integer input type. Use tc.finfo to handle 'tc.iinfo'")
        info = np.iinfo(d.np_dtype)
        self.bits, self.min, self.max, self.dtype = d.itemsize * 8, int(info.min), int(info.max), d.name

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


TYPE_NAMES = {
    "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
    "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double",
}


def type_name(dt) -> str:
    """PyTorch's scalar-type name (Float, Long, ...) used in error messages."""
    return TYPE_NAMES[dt.name]
