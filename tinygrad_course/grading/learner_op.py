"""A learner's op class running in place of the framework's op of the same name (build mode, chapters 02 and 02b).

Course tooling, not the framework: only build mode and the checks that grade chapter 02 and 02b run it (the
framework's ops never import it); it reads a call, runs the learner's forward and backward, and names what is
wrong with their result.

A learner writes an op as the framework writes its own (`ops/arithmetic.py`'s `Mul`): a class with
`forward(ctx, a, b)` computing the result on NumPy arrays and `backward(ctx, grad)` returning the gradient of
each input with tensor ops. Forward keeps what backward needs as PyTorch's custom functions do:
`ctx.save_for_backward(a, b)` on the arrays it received gives backward their tensors (`ctx.saved_tensors`), so
that a graph of the backward can be recorded; `ctx.save_output = True` keeps the output (`ctx.saved_output`).

`runner(LearnerMul)` is what build mode installs under the op's name (`seams.install("Mul", ...)`). There is one
way to run every op: `READERS[name]` reads a call (what the learner's forward receives, the result's shape and
dtype), or says it is not one the exercise covers -- an operand that is not a float32/float64 CPU tensor (or a
Python number where the op takes one), tensors of two dtypes, options such as `alpha=2`, shapes that do not
broadcast, dims out of range: `NotImplemented`, and the reference computes it (with PyTorch's errors). A covered
call runs the learner's forward on the node, whose result must be an array of that shape and dtype (a view of
x's array for the view ops, `VIEWS`): a wrong one is an error naming the op, never repaired. The node keeps the
learner's backward, whose gradients the engine sums back to each input's shape (`Node._to_inputs`); a missing
gradient, one that is not a tensor or one that cannot be summed to its input's shape is an error naming the op.
`Max` with a dim returns a pair (values, indices), as `x.max(dim)` does (`VALUES_INDICES`): `argmax` is its
indices, and both are recorded by the reference (two outputs, or none differentiable).

Who records the call: with chapter 02's engine installed (the learner's `Function.apply`), `Op._apply` hands the
call over before recording anything, and the learner's code makes the node (named as PyTorch names it,
`MulBackward0`) and calls the forward; the framework then numbers the node and, for a view op, makes the result a
view of x (x's version counter, `_base`). Otherwise `Op._apply` records the node and calls the runner with it.
Anomaly detection and views whose base changed in place since (the reference refreshes their history) stay with
the reference's recording.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .. import seams
from ..autograd.anomaly_mode import state as _anomaly
from ..autograd.engine import _sequence, module_stack
from ..tensor_base import TensorBase, _wrap

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_BACKWARD = object()  # first argument of a call of the installed op that runs a node's backward
_NUMBERS = (int, float)


def _floats(args, numbers=""):
    """The arrays of `args` (a Python number kept where `numbers` has an "n") and their dtype; None unless every
    other argument is a float32/float64 CPU tensor, all of one dtype."""
    arrays, dtype = [], None
    for a, kind in zip(args, numbers.ljust(len(args), "t")):
        if isinstance(a, TensorBase):
            data = a._data
            if type(data) is not np.ndarray or data.dtype not in _FLOATS or dtype not in (None, data.dtype):
                return None
            dtype = data.dtype
            arrays.append(data)
        elif kind == "n" and type(a) in _NUMBERS:
            arrays.append(a)
        else:
            return None
    return None if dtype is None else (arrays, dtype)


def _one_dtype(args):
    """The arrays of `args` and their dtype when every argument is a CPU tensor of one integer or bool dtype (ops
    that only move elements, such as Cat, compute them alike; no gradient flows through them), else None."""
    arrays = [getattr(a, "_data", None) for a in args]
    if not arrays or any(type(x) is not np.ndarray or x.dtype.kind not in "biu" or x.dtype != arrays[0].dtype
                         for x in arrays):
        return None
    return arrays, arrays[0].dtype


def _broadcast(*shapes):
    """The shape `shapes` broadcast to, None when they do not (the reference raises PyTorch's error)."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        return None


def _dims(dims, n):
    """`dims` (ints, negative ones counting from the end) as positions in [0, n); None when one is out of range."""
    return None if any(type(d) is not int or not -n <= d < n for d in dims) else [d % n for d in dims]


# ---- readers: a call of the framework's op -> (what forward takes, the result's shape, dtype, keywords) -------
def _elementwise(kinds):
    """Add/Sub/Mul/Div (two operands, either a number), Pow (a tensor and a number) and the unary ops."""
    def read(args, kwargs, op):
        got = _floats(args, kinds) if len(args) == len(kinds) else None
        if got is None or kinds == "tn" and type(args[1]) not in _NUMBERS:  # Pow: a tensor exponent is the reference's
            return None
        shapes = [a.shape for a in got[0] if type(a) is np.ndarray]
        shape = shapes[0] if len(shapes) == 1 or shapes[0] == shapes[1] else _broadcast(*shapes)
        return None if shape is None else (got[0], shape, got[1], {})
    return read


_tensor_and_number = _elementwise("tn")


def _power(args, kwargs, op):
    """Pow (x, exponent) with a number exponent, and Sqrt (x) as Pow (x, 0.5): PyTorch's sqrt is x ** 0.5."""
    return _tensor_and_number((*args, 0.5) if op == "Sqrt" else args, kwargs, op)


def _matmul(args, kwargs, op):
    """Matmul (a, b) of at least 2 dims each; a batch's operands row-contiguous (NumPy's BLAS path)."""
    got = _floats(args) if len(args) == 2 else None
    if got is None:
        return None
    (a, b), dtype = got
    batch = _broadcast(a.shape[:-2], b.shape[:-2]) if min(a.ndim, b.ndim) >= 2 and a.shape[-1] == b.shape[-2] else None
    if batch is None:
        return None
    if batch and not (a.flags.c_contiguous and b.flags.c_contiguous):
        # a stack of matrices whose rows are not contiguous (x @ w.T, a gradient's k.mT) takes NumPy's slow loop
        a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return [a, b], (*batch, a.shape[-2], b.shape[-1]), dtype, {}


def _counts(x):
    """([x's array], int64) for a bool or signed-integer CPU tensor x, whose sum counts in int64 (PyTorch's, and
    NumPy's sum), else None."""
    data = getattr(x, "_data", None)
    return ([data], np.dtype(np.int64)) if type(data) is np.ndarray and data.dtype.kind in "bi" else None


def _reduction(args, kwargs, op):
    """Sum/Mean (x, dim=None, keepdim=False, dtype=None) over every dim, an int dim or a tuple of distinct dims
    (Sum also of a bool or integer x: a count in int64); forward takes (x, dim, keepdim) with a list's dims as a
    tuple. A dtype stays the reference's."""
    x, dim, keepdim, dtype = (*args, None, False, None)[:4] if 1 <= len(args) <= 4 else (None,) * 4
    got = _floats((x,)) or (_counts(x) if op in ("Sum", "SumAll") else None)
    if got is None or dtype is not None or type(keepdim) is not bool:
        return None
    (data,), dtype = got
    if dim is None:
        dims = list(range(data.ndim))
    else:
        dims = _dims((dim,) if type(dim) is int else dim if isinstance(dim, (tuple, list)) and dim else (None,), data.ndim)
    if dims is None or len(set(dims)) != len(dims):
        return None
    shape = tuple(1 if i in dims else s for i, s in enumerate(data.shape) if keepdim or i not in dims)
    return [data, tuple(dim) if isinstance(dim, list) else dim, keepdim], shape, dtype, {}


def _largest(args, kwargs, op):
    """Max: x.max() (MaxMinAll (x, None, False, True)), x.max(dim, keepdim) (MaxMinDim (x, dim, keepdim, True))
    and x.argmax(dim, keepdim) (ArgMaxMin: the indices of max(dim); of max(0) of the flattened x without a dim);
    forward takes (x, dim, keepdim). min, amax/amin, a 0-d x with a dim, argmax(keepdim=True) without a dim and
    an empty x or dim (PyTorch's errors) stay the reference's."""
    got = _floats(args[:1]) if op in _MAX_OPS and len(args) == 4 and args[3] is True and type(args[2]) is bool else None
    if got is None:
        return None
    ((data,), dtype), dim, keepdim = got, args[1], args[2]
    if dim is None:
        if keepdim or not data.size:
            return None
        return ([data, None, False] if op == "MaxMinAll" else [data.reshape(-1), 0, False]), (), dtype, {}
    d = _dims((dim,), data.ndim) if op != "MaxMinAll" and type(dim) is int else None
    if d is None or not data.shape[d[0]]:
        return None
    shape = tuple(1 if i == d[0] else s for i, s in enumerate(data.shape) if keepdim or i != d[0])
    return [data, dim, keepdim], shape, dtype, {}


_MAX_OPS = ("MaxMinAll", "MaxMinDim", "ArgMaxMin")


def _one(args, count):
    """x's array, its shape and dtype when the call is (x, and `count - 1` options) with a float x."""
    got = _floats(args[:1]) if len(args) == count else None
    return None if got is None else (got[0][0], got[0][0].shape, got[1])


def _along(args, kwargs, op):
    """Softmax / LogSoftmax (x, dim): an int dim in range (0 or -1 for a 0-d x)."""
    got = _one(args, 2)
    if got is None or _dims((args[1],), max(got[0].ndim, 1)) is None:
        return None
    return [got[0], args[1]], got[1], got[2], {}


def _gelu(args, kwargs, op):
    """Gelu (x, approximate='none'), 'none' or 'tanh'."""
    got = _one(args, len(args)) if len(args) in (1, 2) and args[1:] in ((), ("none",), ("tanh",)) else None
    return None if got is None else ([got[0], *args[1:]], got[1], got[2], {})


def _mask_times(args, kwargs, op):
    """Dropout (x, mask): the caller's mask, an array of x's shape and dtype."""
    got = _one(args, 2)
    mask = args[1] if got is not None else None
    if type(mask) is not np.ndarray or mask.shape != got[1] or mask.dtype != got[2]:
        return None
    return [got[0], mask], got[1], got[2], {}


def _lookup(args, kwargs, op):
    """Embedding (weight, indices, padding_idx=None): a 2-D weight, int64 indices in [0, num_embeddings); a
    padding_idx stays the reference's."""
    got = _one(args[:1], 1) if len(args) in (2, 3) and (args[2:] in ((), (None,))) else None
    idx = getattr(args[1], "_data", None) if got is not None else None
    if type(idx) is not np.ndarray or idx.dtype != np.int64 or got[0].ndim != 2 or \
            idx.size and (idx.min() < 0 or idx.max() >= got[1][0]):
        return None  # the reference raises PyTorch's IndexError (or takes negative indices)
    return [got[0], idx, None], (*idx.shape, got[1][1]), got[2], {}


def _masked(args, kwargs, op):
    """MaskedFill (x, mask, value): a bool mask that broadcasts to x's shape, a Python number."""
    got = _one(args, 3)
    mask = getattr(args[1], "_data", None) if got is not None and type(args[2]) in (*_NUMBERS, bool) else None
    if type(mask) is not np.ndarray or mask.dtype != np.bool_ or _broadcast(got[1], mask.shape) != got[1]:
        return None
    return [got[0], mask, args[2]], got[1], got[2], {}


def _joined(args, kwargs, op):
    """Cat (*tensors, dim=0): float, integer or bool tensors of one dtype and rank whose sizes match except along
    dim (PyTorch's legacy empty 1-D ones, which cat skips, stay the reference's); forward takes dim as a keyword."""
    dim = kwargs.get("dim", 0)
    got = (_floats(args) or _one_dtype(args)) if args and not set(kwargs) - {"dim"} else None
    if got is None:
        return None
    shapes = [a.shape for a in got[0]]
    n = len(shapes[0])
    d = _dims((dim,), n) if n and all(len(s) == n for s in shapes) else None
    if d is None or any(s[:d[0]] + s[d[0] + 1:] != shapes[0][:d[0]] + shapes[0][d[0] + 1:] for s in shapes):
        return None  # the reference raises PyTorch's error
    return got[0], (*shapes[0][:d[0]], sum(s[d[0]] for s in shapes), *shapes[0][d[0] + 1:]), got[1], {"dim": dim}


def _swapped(args, kwargs, op):
    """Transpose (x, dim0, dim1) of an x of at least one dim, int dims in range."""
    got = _one(args, 3)
    d = _dims(args[1:], got[0].ndim) if got is not None and got[0].ndim else None
    if d is None:
        return None  # a 0-d transpose, or the reference's IndexError
    sizes = list(got[1])
    sizes[d[0]], sizes[d[1]] = got[1][d[1]], got[1][d[0]]
    return [got[0], args[1], args[2]], tuple(sizes), got[2], {}


def _expanded(args, kwargs, op):
    """Expand (x, shape): sizes (no -1) that x's shape broadcasts to."""
    got = _one(args, 2)
    sizes = args[1] if got is not None and isinstance(args[1], tuple) else None
    if sizes is None or any(type(s) is not int or s < 0 for s in sizes) or _broadcast(got[1], sizes) != sizes:
        return None  # the reference raises PyTorch's error
    return [got[0], tuple(sizes)], tuple(sizes), got[2], {}


def _gathered(args, kwargs, op):
    """Gather (x, dim, index): an int64 index of x's rank whose sizes equal x's except along dim, each in
    [0, x.shape[dim]); smaller index sizes (PyTorch allows them) and bad indices stay the reference's."""
    got = _one(args, 3)
    idx = getattr(args[2], "_data", None) if got is not None else None
    d = _dims((args[1],), got[0].ndim) if type(idx) is np.ndarray and idx.dtype == np.int64 else None
    k = d[0] if d is not None and idx.ndim == got[0].ndim else None
    if k is None or idx.shape[:k] + idx.shape[k + 1:] != got[1][:k] + got[1][k + 1:] or \
            idx.size and (idx.min() < 0 or idx.max() >= got[1][k]):
        return None
    return [got[0], args[1], idx], idx.shape, got[2], {}


def _reshaped(args, kwargs, op):
    """View (x, shape) with one -1 at most (and reshape's ReshapeAlias / UnsafeView), and squeeze(x, dim) /
    unsqueeze(x, dim) of one int dim, as views of x to a shape: forward takes (x, the new shape). A strided x
    whose strides allow no view of the new shape stays the reference's (PyTorch's error)."""
    got = _one(args, 2)
    if got is None:
        return None
    (data, shape, dtype), arg = got, args[1]
    if op in _TO_SHAPE:
        known = math.prod(s for s in arg if s != -1) if isinstance(arg, tuple) and all(
            type(s) is int and s >= -1 for s in arg) and arg.count(-1) <= (1 if data.size else 0) else 0
        new = tuple(data.size // known if s == -1 else s for s in arg) if known else None
        if new is None or math.prod(new) != data.size:
            return None
        if not data.flags.c_contiguous:
            try:
                data.reshape(new, copy=False)
            except ValueError:  # the strides allow no view of this shape
                return None
    else:
        d = _dims((arg,), len(shape) + (op == "Unsqueeze")) if type(arg) is int and shape else None
        if d is None:
            return None
        new = shape[:d[0]] + (1,) + shape[d[0]:] if op == "Unsqueeze" else \
            shape[:d[0]] + shape[d[0] + 1:] if shape[d[0]] == 1 else shape
    return [data, new], new, dtype, {}


_TO_SHAPE = ("View", "ReshapeAlias", "UnsafeView")  # the View component's ops that take a shape (not a dim)


def _sliced(args, kwargs, op):
    """Narrow (x, dim, start, length) of an x of at least one dim: an int dim in range, 0 <= start and
    start + length <= x.shape[dim] (a negative start stays the reference's); forward takes them as given."""
    got = _one(args, 4)
    d = _dims((args[1],), got[0].ndim) if got is not None and got[0].ndim else None
    start, length = args[2:] if d is not None else (None, None)
    if type(start) is not int or type(length) is not int or start < 0 or length < 0 or \
            start + length > got[1][d[0]]:
        return None
    return [got[0], *args[1:]], (*got[1][:d[0]], length, *got[1][d[0] + 1:]), got[2], {}


def _copied(args, kwargs, op):
    """Clone (x): contiguous() of a strided x and clone() of any float x."""
    got = _one(args, 1)
    return None if got is None else ([got[0]], got[1], got[2], {})


def _whole(k):
    """Whether index entry `k` is `:` (a whole dim)."""
    return type(k) is slice and k.start is None and k.stop is None and k.step is None


def _basic_shape(shape, key):
    """The shape of x[key] for a key of ints, slices, None and at most one `...` (None when an int is out of
    range, the key has too many entries or a slice's step is not a positive int: the reference raises)."""
    n = len(shape) - sum(1 for k in key if k is not None and k is not Ellipsis)  # the dims `...` stands for
    if n < 0 or key.count(Ellipsis) > 1:
        return None
    out, dim = [], 0
    for k in key:
        if type(k) is int:
            if not -shape[dim] <= k < shape[dim]:
                return None
            dim += 1
        elif type(k) is slice:
            if k.step is not None and (type(k.step) is not int or k.step <= 0):
                return None
            try:
                out.append(len(range(*k.indices(shape[dim]))))
            except TypeError:  # bounds that are not ints
                return None
            dim += 1
        elif k is None:
            out.append(1)
        elif k is Ellipsis:
            out.extend(shape[dim:dim + n])
            dim += n
        else:
            return None
    return (*out, *shape[dim:])


def _indexed(args, kwargs, op):
    """GetItem (x, key, basic): x[key] of a CPU tensor of any dtype, the key as `Tensor.__getitem__` normalised
    it: basic entries (ints in range, slices with a positive step, None, one `...`), or one int64 array of
    indices in range among full slices (`x[idx]`, `x[:, idx]`); forward takes (x, key) with `...` appended to a
    key that has none, so that NumPy's x[key] of a basic key is a view even when every entry is an int. Bool
    masks, several index arrays, an array beside ints, None or partial slices stay the reference's."""
    data = getattr(args[0], "_data", None) if len(args) == 3 else None
    key = args[1] if type(data) is np.ndarray else None
    if type(key) is not tuple:
        return None
    if args[2]:  # basic: a view of x
        shape = _basic_shape(data.shape, key)
        if shape is None:
            return None
        return [data, key if Ellipsis in key else key + (Ellipsis,)], shape, data.dtype, {}
    at = [i for i, k in enumerate(key) if type(k) is np.ndarray]
    if len(at) != 1 or len(key) > data.ndim or not all(_whole(k) for k in key[:at[0]] + key[at[0] + 1:]):
        return None
    d, idx = at[0], key[at[0]]
    if idx.dtype != np.int64 or not idx.ndim or idx.size and (idx.min() < 0 or idx.max() >= data.shape[d]):
        return None  # the reference counts negative indices from the end, or raises PyTorch's IndexError
    return [data, key + (Ellipsis,)], (*data.shape[:d], *idx.shape, *data.shape[d + 1:]), data.dtype, {}


def _largest_k(args, kwargs, op):
    """Topk (x, k, dim=-1, largest=True, sorted=True) of a float x of at least one dim without NaN, an int k in
    [0, x.shape[dim]] and an int dim in range; forward takes (x, k, dim, largest) and returns (values, indices),
    sorted (PyTorch's `sorted=False` leaves the order unspecified: a sorted result is one). A 0-d x, a NaN
    (PyTorch orders it as the largest) and bad arguments stay the reference's."""
    x, k, dim, largest, _ = (*args, -1, True, True)[:5] if 2 <= len(args) <= 5 else (None,) * 5
    got = _floats((x,)) if type(k) is int and type(dim) is int and type(largest) is bool else None
    if got is None or not got[0][0].ndim or np.isnan(got[0][0]).any():
        return None
    (data,), dtype = got
    d = _dims((dim,), data.ndim)
    if d is None or not 0 <= k <= data.shape[d[0]]:
        return None
    return [data, k, dim, largest], tuple(k if i == d[0] else s for i, s in enumerate(data.shape)), dtype, {}


# the reference op's name -> how a call of it reaches the learner's forward (None: the reference computes it)
READERS = {**{name: _elementwise("nn") for name in ("Add", "Sub", "Mul", "Div")}, "Pow": _power,
           **{name: _elementwise("t") for name in ("Neg", "Exp", "Log", "Tanh", "Relu", "Sigmoid")},
           "Matmul": _matmul, "Sum": _reduction, "Mean": _reduction, "Softmax": _along, "LogSoftmax": _along,
           "Gelu": _gelu, "Dropout": _mask_times, "Embedding": _lookup, "MaskedFill": _masked, "Cat": _joined,
           "Transpose": _swapped, "Expand": _expanded, "Gather": _gathered, "View": _reshaped, "Narrow": _sliced,
           "Clone": _copied, "Max": _largest, "GetItem": _indexed, "Topk": _largest_k}
KEYWORDS = ("Cat",)  # ops whose options arrive as keywords (`Cat.apply(*tensors, dim=dim)`)
VIEWS = ("Transpose", "Expand", "View", "Narrow", "GetItem")  # their result shares x's memory: the framework makes it
# a view (GetItem's for a basic key only: an index array copies, `_view_call`)
COPIES = ("Clone",)  # their result is a row-major array of its own
ARITY = {"Sum": 3, "Mean": 3, "Max": 3, "Topk": 4}  # forward's arguments where the framework's op may be called with fewer
# ops whose learner's forward returns (values, indices): max(dim) and topk return both, argmax the indices; the
# reference records them (the learner's Function.apply records ops of one differentiable output)
VALUES_INDICES = ("MaxMinDim", "ArgMaxMin", "Topk")
_PAIR_CALLS = {"Topk": ("", "x.topk(k, dim)")}  # (the call's condition, PyTorch's call returning the pair)


def _view_call(name, args):
    """Whether this call of op `name` returns a view of its first input (GetItem: when the key is basic)."""
    return name in VIEWS and (name != "GetItem" or args[2] is True)


def reference_op(ctx, *args, **kwargs):
    """What runs when a learner's op raises (build mode leaves it out): the forward call goes back to the
    framework's op (NotImplemented); a backward of a node the learner's forward computed has no reference to
    go back to (what the node saved is the learner's), so the learner's error is raised again."""
    if ctx is _BACKWARD:
        raise  # noqa: PLE0704  (the learner's error, being handled by build mode's guard)
    return NotImplemented


for _name in READERS:
    seams.offer(_name, reference_op)


def _tensor_of(saved, args, arrays):
    """The tensor argument whose array forward saved (`saved` itself when it is none of them: a number);
    `arrays` are what forward received, in the order of `args` (a matrix product's row-contiguous copies)."""
    if isinstance(saved, np.ndarray):
        for t, x in zip(args, arrays):
            if x is saved:
                return t
    return saved


def _forward_problem(name, result, arrays, shape, dtype, view):
    """Why the array a learner's forward returned is not the op's result (None when it is); `view`: whether it
    must be a view of x (`_view_call`)."""
    if not isinstance(result, (np.ndarray, np.generic)):
        return TypeError(f"your {name}.forward returned {type(result).__name__}, expected a NumPy array: forward "
                         "computes on the operands' arrays (np.exp(x), a * b, ...)")
    if result.shape != shape or result.dtype != dtype:
        return RuntimeError(f"your {name}.forward returned an array of shape {result.shape} and dtype "
                            f"{result.dtype} for operands of shapes {[np.shape(a) for a in arrays]}, expected "
                            f"shape {shape} and dtype {dtype}")
    if view and result.size and not np.may_share_memory(result, arrays[0]):
        return RuntimeError(f"your {name}.forward returned a copy of x: {name} returns a view of x's array (no "
                            "numbers move), so that a change of x in place shows in its result as in PyTorch")
    if name in COPIES and (np.may_share_memory(result, arrays[0]) or not result.flags.c_contiguous):
        got = "a view of x" if np.may_share_memory(result, arrays[0]) else "an array that is not row-major"
        return RuntimeError(f"your {name}.forward returned {got}: {name} returns a row-major copy of x's array "
                            "with its own memory (np.ascontiguousarray(x) returns x itself when x is row-major)")
    return None


def _pair_problem(name, result, arrays, shape, dtype):
    """Why what a learner's forward returned for x.max(dim) (or argmax) or x.topk(k) is not (values, indices) (None
    when it is)."""
    when, call = _PAIR_CALLS.get(name, (" for a dim", "x.max(dim)"))
    if not isinstance(result, tuple) or len(result) != 2:
        return TypeError(f"your {name}.forward returned {type(result).__name__}{when}, expected a pair (values, "
                         f"indices) of NumPy arrays, as {call} returns both")
    problem = _forward_problem(name, result[0], arrays, shape, dtype, False)
    if problem is None and (not isinstance(result[1], (np.ndarray, np.generic)) or result[1].shape != shape or
                            result[1].dtype != np.int64):
        got = f"shape {np.shape(result[1])} and dtype {getattr(result[1], 'dtype', type(result[1]).__name__)}"
        return RuntimeError(f"your {name}.forward returned indices of {got} for x of shape {np.shape(arrays[0])}, "
                            f"expected shape {shape} and dtype int64 (np.argmax's and np.argsort's)")
    return problem


class OpFailed:
    """What the learner's `Function.apply` hands back when the learner's op's forward (not their engine) failed."""

    def __init__(self, error):
        self.error = error


def _fits(shape, grad_shape):
    """Whether a gradient of `grad_shape` sums back to an input of `shape` (equal, or broadcast from it)."""
    tail = grad_shape[len(grad_shape) - len(shape):]
    return len(grad_shape) >= len(shape) and all(s == g or s == 1 for s, g in zip(shape, tail))


def runner(learner_class, name: str | None = None):
    """The callable build mode installs under the op's name: runs `learner_class`'s forward on the calls it
    covers (NotImplemented for the others) and keeps its backward on the node."""
    name = name or learner_class.__name__
    read, forward, backward = READERS[name], learner_class.forward, learner_class.backward

    def rule(ctx, *grad_outputs):
        """The learner's backward on node `ctx`: one tensor gradient per input that needs one."""
        try:
            grads = backward(ctx, *grad_outputs)
        except Exception as error:
            unpacked = "values to unpack" in str(error) or "tuple index out of range" in str(error)
            if isinstance(error, (ValueError, IndexError)) and unpacked and not ctx._saved:
                raise RuntimeError(f"your {name}.backward raised {type(error).__name__} ({error}) with nothing in "
                                   "ctx.saved_tensors: forward keeps what backward needs with "
                                   "ctx.save_for_backward(...)") from error
            if not getattr(error, "_tc_component_named", False):
                error.add_note(f"raised by your {name}.backward")
                error._tc_component_named = True
            raise
        grads = tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)
        needs, inputs = ctx.needs_input_grad, max(len(ctx.input_metadata), ARITY.get(name, 0))
        if len(grads) > inputs or any(needs[len(grads):]):
            raise RuntimeError(f"your {name}.backward returned {len(grads)} gradient(s), but {name} has {inputs} "
                               f"input(s): return one per input of forward (None for one that needs none)")
        out = []
        for i, (g, need, meta) in enumerate(zip(grads + (None,) * len(needs), needs, ctx.input_metadata)):
            if need and not isinstance(g, TensorBase):
                raise TypeError(f"your {name}.backward returned {type(g).__name__} as the gradient of input {i}, "
                                "expected a Tensor (compute it with tensor operations on grad and the saved tensors)")
            if need and not _fits(meta[0], g._data.shape):
                raise RuntimeError(f"your {name}.backward returned a gradient of shape {tuple(g._data.shape)} for "
                                   f"input {i} of shape {tuple(meta[0])}: a gradient has its input's shape (or "
                                   "the output's, which the engine sums back to the input's)")
            out.append(g if need else None)
        return tuple(out)

    through = {}  # what is installed -> (the callable a node runs its backward with, a class whose backward it is)

    def computed(ctx, *arrays):
        """The learner's forward on node `ctx` for the call being run (`computed.call`): its result checked,
        what it saved kept as the tensors passed, its backward kept on the node."""
        args, shape, dtype, options = computed.call
        if any(isinstance(t, TensorBase) and x is not t._data for t, x in zip(args, computed.given)):
            arrays = tuple(np.ascontiguousarray(a) if isinstance(a, np.ndarray) else a for a in arrays)  # (matmul)
        kept = ctx.__dict__
        kept.pop("_saved", None), kept.pop("_saved_versions", None)  # the reference op saved its inputs: not here
        two = computed.op in VALUES_INDICES  # (values, indices)
        try:
            result = forward(ctx, *arrays, **options)
            problem = _pair_problem(name, result, arrays, shape, dtype) if two else \
                _forward_problem(name, result, arrays, shape, dtype, _view_call(name, args))
            if problem is not None:
                raise problem
        except Exception as error:  # the learner's op failed (not the learner's engine that called it)
            error._tc_op_forward = True
            raise
        if "_saved" in kept:  # the arrays forward saved are its inputs: backward reads their tensors and versions
            ctx._saved = saved = tuple(_tensor_of(s, args, arrays) for s in kept["_saved"])
            ctx._saved_versions = [t._version[0] if isinstance(t, TensorBase) else None for t in saved]
        installed = seams.ACTIVE.get(name)
        pair = through.get(installed)
        if pair is None:  # through build mode's guard (it times the backward and names its errors) when installed
            step = functools.partial(installed, _BACKWARD) if getattr(installed, "__wrapped__", None) is run else rule
            pair = through[installed] = (step, type(name, (), {"backward": staticmethod(step)}))
        ctx._learner_backward, ctx._forward_cls = pair
        seams.count_call(name)
        if two:  # argmax is max's indices
            return np.asarray(result[1]) if computed.op == "ArgMaxMin" else (np.asarray(result[0]), np.asarray(result[1]))
        return np.asarray(result)  # a reduction to 0-d gives a NumPy scalar

    routed = {}  # the reference op -> the op class the learner's Function.apply records, whose forward is `computed`

    def run(ctx, *args, **kwargs):
        if ctx is _BACKWARD:  # a node this op computed runs its backward (through the installed wrapper)
            return rule(*args)
        if kwargs and name not in KEYWORDS and any(k != "alpha" or v != 1 for k, v in kwargs.items()):
            return NotImplemented  # alpha=..., out=...: the reference's
        by_learner = isinstance(ctx, type)  # the reference op: the learner's Function.apply records the call
        op = ctx if by_learner else ctx._fn
        got = read(args, kwargs, op.__name__)
        if got is None or by_learner and (_anomaly.enabled or op.__name__ in VALUES_INDICES or any(
                isinstance(a, TensorBase) and a._base is not None and a._view_version != a._version[0] for a in args)):
            return NotImplemented
        arrays, *call = got
        computed.call, computed.given, computed.op = (args, *call), arrays, op.__name__
        if not by_learner:  # Op._apply made (and, when needed, recorded) the node
            if name == "GetItem":  # x[key] is a view for a basic key (the reference's forward says so per call)
                ctx.view = _view_call(name, args)
            return computed(ctx, *arrays)
        cls = routed.get(op)
        if cls is None:
            cls = routed[op] = type(name, (learner_class,), {"node_name": op._Node.__name__,
                                                             "forward": staticmethod(computed)})
        tensors = tuple(_tensor_of(x, args, arrays) for x in arrays)  # as forward takes them (a reduction's dim)
        result = seams.learner("Function.apply")(cls, *tensors)
        if type(result) is OpFailed:
            raise result.error
        if result is NotImplemented:
            return NotImplemented
        if op.view or _view_call(name, args):  # the result shares x's memory: one version counter, `_base`
            src = args[0]
            result._version, result._view_version = src._version, src._version[0]
            result._base = src if src._base is None else src._base
        node = result.grad_fn
        if node is not None:  # recorded: the framework numbers the node
            node._seq = next(_sequence)
            node.modules = module_stack.modules
            if node.save_output:
                node._out_alias = alias = _wrap(result._data)
                alias._version = result._version
                node._out_version = result._version[0]
        return result

    run.learner_class = learner_class
    return run
