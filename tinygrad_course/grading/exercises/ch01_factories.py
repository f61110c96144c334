"""Chapter 01, exercise 01.1: `tensor` and the factory functions (`zeros`, `ones`, `full`, `empty`, the
`*_like` ones and `arange`), each compared with the framework's own (which follows PyTorch) on exact inputs first -- shape,
dtype, values, `requires_grad`, PyTorch's error messages -- naming the usual mistake, then on seeded random
nested lists.
"""
import random

import numpy as np

from ... import dtypes, seams
from ...tensor_base import TensorBase
from ..registry import exercise

FACTORIES = ("tensor", "zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like", "arange")
# what the learner writes may not call (once installed, a function calling its own name never returns)
_FORBIDDEN = tuple(f"tinygrad_course.{name}" for name in (*FACTORIES, "as_tensor", "empty_like"))

# PyTorch 2.13's errors, word for word (tests/grading/test_ch01_factories.py checks them against torch)
RAGGED = ("expected sequence of length 3 at dim 1 (got 2)", "expected sequence of length 2 at dim 2 (got 1)")
NO_GRAD = "Only Tensors of floating point and complex dtype can require gradients"
ZEROS_NEGATIVE = "zeros: Dimension size must be non-negative."


def _ref(name):
    """The framework's own function, never the learner's (which may be installed in its seam)."""
    return seams.reference(name)


class _Shown(str):
    """An argument shown by a description instead of its repr (a tensor input of a `*_like` call)."""

    def __repr__(self):
        return str(self)


def _call(name, args, kwargs) -> str:
    shown = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    return f"{name}({', '.join(shown)})"


def _dtype_why(data, got, expected) -> str | None:
    """The usual reason a tensor made from `data` came out as `got` instead of `expected`."""
    if isinstance(data, np.ndarray):
        return f"a NumPy array keeps its own dtype ({expected} here) unless dtype= says otherwise"
    if expected == dtypes.float32 and got == dtypes.float64:
        return ("float64 is NumPy's default float, but the framework's (and PyTorch's) is float32: "
                "tc.get_default_dtype()")
    if expected == dtypes.bool_ and got == dtypes.int64:
        return "True and False are ints in Python too (isinstance(True, int)): test for bool before int"
    if expected.is_floating_point and not got.is_floating_point:
        return "one Python float anywhere makes the whole tensor floating (an empty list is float32 too)"
    if expected == dtypes.int64 and got.is_floating_point:
        return "whole numbers make an int64 tensor (labels, token ids); only a Python float makes it floating"
    return None


def _same(t, got, expected, call, *, why=None, hint=None):
    """`got` (the learner's result of `call`) is `expected` (the framework's): a tensor of the same shape,
    dtype, values and requires_grad."""
    t.true(isinstance(got, TensorBase), f"{call} to return a tc.Tensor (got {type(got).__name__})",
           hint="build a NumPy array, then wrap it with tc.from_numpy(array)")
    t.equal(tuple(got.shape), tuple(expected.shape), f"shape of {call}", why=why,
            hint=hint or "the shape is the nesting's lengths (or the sizes asked for)")
    t.equal(got.dtype, expected.dtype, f"dtype of {call}", why=why,
            hint=hint or "bool < int64 < the default float: the highest kind of element decides")
    same = np.array_equal(got.detach().numpy(), expected.detach().numpy())
    t.true(same, f"{call} to hold {expected.tolist()!r} (got {got.tolist()!r})", why=why, hint=hint)
    t.equal(got.requires_grad, expected.requires_grad, f"requires_grad of {call}",
            hint="with requires_grad=True the new tensor is a leaf that requires grad: t.requires_grad_()")


def _raises(t, fn, name, args, kwargs, error_type, message, *, hint):
    """`fn(*args, **kwargs)` raises PyTorch's `error_type` whose text starts with `message`."""
    call = _call(name, args, kwargs)
    try:
        got = fn(*args, **kwargs)
    except Exception as error:  # any error: compared below with PyTorch's
        t.equal(type(error).__name__, error_type.__name__, f"the error {call} raises", why=f"it raised {error!r}",
                hint=hint)
        t.true(str(error).startswith(message), f"{call} to raise {error_type.__name__}: {message}",
               why=f"its message is {str(error)!r}", hint=hint)
        return
    shown = got.tolist() if isinstance(got, TensorBase) else got
    t.fail(call, f"expected PyTorch's {error_type.__name__}: {message}, but it returned {shown!r}", hint=hint)


def _tensor_part(t, tensor):
    cases = [
        (([[1, 2], [3, 4]],), {}, None),
        (([1, 2.5],), {}, None),
        (([True, False, True],), {}, None),
        (([True, 2],), {}, "bools and ints together are int64 (True counts as 1)"),
        ((3.5,), {}, "a number is a 0-d tensor: shape ()"),
        (([],), {}, "an empty list is a float32 tensor of shape (0,)"),
        (([[], []],), {}, "two empty rows: shape (2, 0)"),
        (([[1, 2, 3], [4, 5, 6]],), {"dtype": dtypes.float32}, "dtype= converts the whole tensor"),
        (([1.7, -1.7],), {"dtype": dtypes.int64}, "converting floats to integers truncates toward zero (as astype "
                                                  "does), it does not round"),
        (([1.0, 2.0],), {"requires_grad": True}, None),
        ((np.arange(6, dtype=np.int32).reshape(2, 3),), {}, None),
        ((np.linspace(0, 1, 4),), {"dtype": dtypes.float32}, None),
    ]
    for args, kwargs, why in cases:
        expected = _ref("tensor")(*args, **kwargs)
        got = tensor(*args, **kwargs)
        call = _call("tensor", args, kwargs)
        dtype_why = _dtype_why(args[0], got.dtype, expected.dtype) if isinstance(got, TensorBase) else None
        _same(t, got, expected, call, why=dtype_why or why)
    got = tensor([0.1], dtype=dtypes.float64)
    t.true(isinstance(got, TensorBase) and got.item() == 0.1,
           "tensor([0.1], dtype=tc.float64) to hold Python's 0.1 exactly",
           why=f"it holds {got.item()!r}: the floats were rounded to float32 on the way" if isinstance(got, TensorBase)
           else None,
           hint="hold Python floats as float64 until the one conversion to the final dtype")
    array = np.array([1.0, 2.0, 3.0])
    got = tensor(array)
    array[0] = 100.0
    t.true(isinstance(got, TensorBase) and got.tolist() == [1.0, 2.0, 3.0],
           "tensor(array) to keep its values when the array changes afterwards",
           why="after array[0] = 100 the tensor holds 100 too: it shares the array's memory (tc.from_numpy does; "
               "tc.tensor copies)",
           hint="copy the array (array.copy() or astype) before wrapping it")
    for data, message in zip(([[1, 2, 3], [4, 5]], [[[1, 2], [3, 4]], [[1, 2], [3]]]), RAGGED):
        _raises(t, tensor, "tensor", (data,), {}, ValueError, message,
                hint="read the shape along the first elements, then walk every list and compare its length with "
                     "the shape at its depth (dim)")
    _raises(t, tensor, "tensor", ([[1, 2], 3],), {}, TypeError, "not a sequence",
            hint="a number where the shape expects a list is PyTorch's TypeError('not a sequence')")
    _raises(t, tensor, "tensor", ([None],), {}, RuntimeError, "Could not infer dtype of NoneType",
            hint="an element that is not a bool, int or float: RuntimeError(f'Could not infer dtype of "
                 "{type(x).__name__}')")
    _raises(t, tensor, "tensor", ([1, 2],), {"requires_grad": True}, RuntimeError, NO_GRAD,
            hint="only a floating tensor may require grad: raise PyTorch's RuntimeError before requires_grad_()")
    rng = random.Random(1)
    for _ in range(60):
        data = _random_nested(rng)
        expected = _ref("tensor")(data)
        got = tensor(data)
        if not (isinstance(got, TensorBase) and got.dtype == expected.dtype and tuple(got.shape) == tuple(expected.shape)
                and np.array_equal(got.numpy(), expected.numpy())):
            t.fail(_call("tensor", (data,), {}), f"expected {expected.dtype} {tuple(expected.shape)} "
                   f"{expected.tolist()!r}, got {got!r}")
    t.count += 1


def _random_nested(rng):
    """Nested lists of one random shape (0 to 3 dims) of bools, ints and floats, mixed or not."""
    shape = [rng.randint(0, 3) for _ in range(rng.randint(0, 3))]
    kinds = rng.choice([(bool,), (int,), (float,), (bool, int), (int, float), (bool, int, float)])

    def element():
        kind = rng.choice(kinds)
        return rng.random() < 0.5 if kind is bool else rng.randint(-9, 9) if kind is int else round(rng.uniform(-9, 9), 3)

    def build(dims):
        return element() if not dims else [build(dims[1:]) for _ in range(dims[0])]

    return build(shape)


def _factory_part(t, zeros, ones, full, empty):
    cases = [
        ("zeros", zeros, (2, 3), {}, None),
        ("zeros", zeros, ((2, 3),), {}, "zeros((2, 3)) means the same as zeros(2, 3): one tuple (or list) is the shape"),
        ("zeros", zeros, ([4],), {}, "a list is a shape too"),
        ("zeros", zeros, ((),), {}, "zeros(()) is a 0-d tensor"),
        ("zeros", zeros, (0, 3), {}, None),
        ("zeros", zeros, (3,), {"dtype": dtypes.int64}, "dtype= gives the dtype; without it the default float"),
        ("zeros", zeros, (2,), {"requires_grad": True}, None),
        ("ones", ones, (2, 1), {}, None),
        ("ones", ones, ((3,),), {"dtype": dtypes.bool_}, None),
        ("full", full, ((2, 2), 7), {}, "full takes its dtype from fill_value, as tensor does: 7 is int64"),
        ("full", full, ((3,), 2.5), {}, "2.5 is a Python float: the default float dtype"),
        ("full", full, ([2], True), {}, "True makes a bool tensor"),
        ("full", full, ((2,), 1), {"dtype": dtypes.float64}, "dtype= wins over the value's dtype"),
        ("empty", empty, (2, 3), {}, "empty makes the default float dtype, its values here zero"),
        ("empty", empty, ((4,),), {"dtype": dtypes.int64}, None),
    ]
    for name, fn, args, kwargs, why in cases:
        call = _call(name, args, kwargs)
        try:
            got = fn(*args, **kwargs)
        except NotImplementedError:
            raise
        except Exception as error:  # a call PyTorch accepts: name what it means
            t.fail(call, f"your code raised {type(error).__name__}: {error}" + (f"\n  what went wrong: {why}" if why else ""),
                   hint="sizes come as separate ints or as one tuple or list: unpack size[0] when it is the only one")
        _same(t, got, _ref(name)(*args, **kwargs), call, why=why)
    a, b = zeros(2), zeros(2)
    a[0] = 1.0
    t.true(b[0].item() == 0.0, "two calls of zeros(2) to make two tensors with memory of their own",
           why="writing into one changed the other", hint="allocate a new array on every call")
    negative = "Trying to create tensor with negative dimension"
    for name, fn, args, message in (
            ("zeros", zeros, (2, -3), ZEROS_NEGATIVE), ("ones", ones, (2, -3), f"{negative} -3: [2, -3]"),
            ("empty", empty, ((-1, -5),), f"{negative} -1: [-1, -5]"), ("full", full, ((2, -1), 1.0), f"{negative} -1: [2, -1]")):
        _raises(t, fn, name, args, {}, RuntimeError, message,
                hint="check every size before allocating: PyTorch names the first negative size and the whole "
                     "shape as a list (zeros has its own words)")
    _raises(t, zeros, "zeros", (2,), {"dtype": dtypes.int64, "requires_grad": True}, RuntimeError, NO_GRAD,
            hint="a factory's requires_grad=True needs a floating dtype, as tensor's does")


def _like_part(t, zeros_like, ones_like, full_like):
    labels = _ref("tensor")([3, 0, 2])
    weights = _ref("tensor")([[0.5, -1.0], [2.0, 0.0]], dtype=dtypes.float64)
    cases = [
        ("zeros_like", zeros_like, (labels,), {}), ("zeros_like", zeros_like, (weights,), {}),
        ("ones_like", ones_like, (weights,), {}), ("ones_like", ones_like, (labels,), {"dtype": dtypes.float32}),
        ("full_like", full_like, (labels, 2.7), {}), ("full_like", full_like, (weights, 3), {}),
        ("zeros_like", zeros_like, (weights,), {"requires_grad": True}),
    ]
    for name, fn, args, kwargs in cases:
        expected = _ref(name)(*args, **kwargs)
        got = fn(*args, **kwargs)
        why = None
        if isinstance(got, TensorBase) and got.dtype != expected.dtype:
            why = (f"{name} keeps input's dtype ({args[0].dtype}) unless dtype= is given" if "dtype" not in kwargs
                   else "dtype= gives the dtype")
        shown = _Shown(f"tc.tensor({args[0].tolist()}" + (f", dtype={args[0].dtype})" if args[0] is weights else ")"))
        _same(t, got, expected, _call(name, (shown,) + args[1:], kwargs), why=why,
              hint="input's shape, and dtype=dtype or input.dtype")


def _arange_part(t, arange):
    cases = [
        ((5,), {}, "arange(n) counts 0, 1, ..., n - 1: n itself is left out"),
        ((2, 6), {}, "arange(start, end) starts at start and stops before end"),
        ((10, 0, -3), {}, "a negative step counts down, still stopping before end"),
        ((0, 1, 0.25), {}, "a float bound or step makes the default float dtype (float32)"),
        ((0.5, 3), {}, "a float bound or step makes the default float dtype (float32)"),
        ((0, 1, 0.1), {}, "ceil((end - start) / step) values, each start + i * step computed in float64 and "
                          "rounded once to the dtype"),
        ((4,), {"dtype": dtypes.float64}, "dtype= gives the dtype"),
        ((3,), {"dtype": dtypes.float32, "requires_grad": True}, None),
        ((-2, 3), {}, None),
        ((3, 3), {}, "start == end: no values, shape (0,)"),
    ]
    for args, kwargs, why in cases:
        expected = _ref("arange")(*args, **kwargs)
        got = arange(*args, **kwargs)
        dtype_why = None
        if isinstance(got, TensorBase) and got.dtype != expected.dtype:
            dtype_why = ("int64 when start, end and step are all ints; the default float dtype (float32) as soon as "
                         "one is a Python float" if "dtype" not in kwargs else "dtype= gives the dtype")
        _same(t, got, expected, _call("arange", args, kwargs), why=dtype_why or why,
              hint="end=None means arange(end): start is 0; the length is ceil((end - start) / step)")
    for args, message in (((0, 5, 0), "step must be nonzero"),
                          ((0, 5, -1), "upper bound and larger bound inconsistent with step sign")):
        _raises(t, arange, "arange", args, {}, RuntimeError, message,
                hint="check the step first: zero never ends, and a step away from end never reaches it")


@exercise("01.1", title="tensor and the factory functions", points=4, forbidden=_FORBIDDEN)
def factories_check(t, tensor, zeros, ones, full, empty, zeros_like, ones_like, full_like, arange):
    _tensor_part(t, tensor)
    _factory_part(t, zeros, ones, full, empty)
    _like_part(t, zeros_like, ones_like, full_like)
    _arange_part(t, arange)
