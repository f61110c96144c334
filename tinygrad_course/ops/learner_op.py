"""A learner's op class running in place of the framework's op of the same name (build mode, chapter 02).

A learner writes an op as the framework writes its own (`ops/arithmetic.py`'s `Mul`): a class with
`forward(ctx, a, b)` computing the result on NumPy arrays and `backward(ctx, grad)` returning the gradient
of each input with tensor ops. Forward keeps what backward needs as PyTorch's custom functions do:
`ctx.save_for_backward(a, b)` on the arrays it received gives backward their tensors (`ctx.saved_tensors`),
so that a graph of the backward can be recorded; `ctx.save_output = True` keeps the output
(`ctx.saved_output`), as the framework's own ops do. `runner(LearnerMul)` is what
build mode installs under the op's name (`seams.install("Mul", ...)`); `Op._apply` calls it with the node
and the arguments, and it

- hands back `NotImplemented` for a call the exercise does not cover, so the reference computes it: an
  operand that is not a float32/float64 CPU tensor (or a Python number, where the op takes one), two
  tensors of different dtypes, options such as `alpha=2`, shapes that do not broadcast (the reference
  raises PyTorch's error for those);
- otherwise gives the learner's `forward` the operands' arrays, checks that it returns an array of the
  broadcast shape and the operands' dtype (a wrong result is an error naming the op, never repaired), and
  keeps the learner's `backward` on the node, so that backward runs the learner's math on this node.

Chapter 02b's ops (softmax, log-softmax, GELU, dropout's multiply, embedding lookup, masked_fill, cat) run the
same way; `SHAPED` says, per op, which calls they cover and what their forward receives (Cat's `dim` as a
keyword, as `tc.cat` passes it; Gather's index as an int64 array). Its view ops (`VIEWS`: transpose, expand) must return a view of x's array (a
copy is an error naming the op); the framework then makes the result a view of x as for the reference's (x's
version counter, `_base`), whoever records the call.

The engine sums each gradient back to its input's shape (`Node._to_inputs`), as for every op; a gradient
that cannot be summed to its input's shape, a missing one or one that is not a tensor is an error naming
the learner's op.

With the learner's engine installed too (chapter 02's `Function.apply`, build mode's component of that name),
a call the learner's op covers is recorded by the learner's code instead of `Op._apply`: it receives the op
as a class whose `forward` is the learner's (its result checked) and whose node is named as PyTorch names it
(`MulBackward0`), and returns the result tensor with its `grad_fn`; the framework then only numbers the node
and gives backward the tensors forward saved. Anomaly detection and views whose base changed in place since
(the reference refreshes their history) stay with the reference's recording.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .. import seams
from ..autograd.anomaly_mode import state as _anomaly
from ..autograd.engine import OpFailed, _sequence, module_stack
from ..tensor_base import TensorBase, _wrap

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_BACKWARD = object()  # first argument of a call of the installed op that runs a node's backward
_NUMBERS = (int, float)


def _operands(args, numbers):
    """The operands' arrays (Python numbers kept where `numbers` allows them), the tensors' shapes and their
    dtype; None unless every tensor is a float32/float64 CPU tensor of one dtype."""
    arrays, shapes, dtype = [], [], None
    for k, a in enumerate(args):
        if isinstance(a, TensorBase):
            data = a._data
            if type(data) is not np.ndarray or data.dtype not in _FLOATS or (dtype is not None and data.dtype != dtype):
                return None
            dtype = data.dtype
            arrays.append(data)
            shapes.append(data.shape)
        elif type(a) in _NUMBERS and k in numbers:
            arrays.append(a)
        else:
            return None
    return None if dtype is None else (arrays, shapes, dtype)


def _elementwise(args, numbers):
    """Arrays of an element-wise op's operands, the result's shape and dtype; None when the call is not one
    the learner's op covers."""
    got = _operands(args, numbers)
    if got is None:
        return None
    arrays, shapes, dtype = got
    if len(shapes) == 1 or shapes[0] == shapes[1]:
        return arrays, shapes[0], dtype
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        return None  # the reference raises PyTorch's broadcasting error
    return arrays, shape, dtype


def _matmul(args):
    """Arrays of a matrix product of two float tensors of at least 2 dimensions, its shape and dtype."""
    if len(args) != 2:
        return None
    got = _operands(args, ())
    if got is None:
        return None
    (xa, xb), _, dtype = got
    if xa.ndim < 2 or xb.ndim < 2 or xa.shape[-1] != xb.shape[-2]:
        return None
    try:
        batch = np.broadcast_shapes(xa.shape[:-2], xb.shape[:-2])
    except ValueError:
        return None
    if batch and not (xa.flags.c_contiguous and xb.flags.c_contiguous):
        # NumPy multiplies a stack of matrices with BLAS only when each matrix's rows are contiguous; a
        # transposed operand (x @ w.T, a gradient's k.mT) would take its slow loop, 10 times longer than the copy
        xa, xb = np.ascontiguousarray(xa), np.ascontiguousarray(xb)
    return [xa, xb], (*batch, xa.shape[-2], xb.shape[-1]), dtype


def _reduction(args):
    """The array of a sum or mean over `dim` (None: every dimension; an int or a tuple of ints, negative ones
    counting from the end) with `keepdim`, the dim as NumPy takes it, the result's shape and dtype."""
    x, dim, keepdim, dtype = (*args, None, False, None)[:4] if len(args) < 4 else args
    got = _operands((x,), ())
    if got is None or dtype is not None or type(keepdim) is not bool:
        return None
    (data,), _, dtype = got
    n = data.ndim
    if n == 0 and dim is not None:
        return None
    dims = (dim,) if type(dim) is int else tuple(dim) if isinstance(dim, (tuple, list)) else None
    if dim is not None and (dims is None or not dims or any(type(d) is not int or not -n <= d < n for d in dims)
                            or len({d % n for d in dims}) != len(dims)):
        return None
    axes = set(range(n)) if dim is None else {d % n for d in dims}
    shape = tuple(1 if i in axes else s for i, s in enumerate(data.shape) if keepdim or i not in axes)
    return [data, dims if dim is not None and type(dim) is not int else dim, keepdim], shape, dtype


# ---- chapter 02b: the ops a model needs (softmax, GELU, dropout, embedding lookup, masked_fill) -----------
def _along(args):
    """Softmax / LogSoftmax (x, dim): x's array and an int dim in range; the result has x's shape."""
    if len(args) != 2 or type(args[1]) is not int:
        return None
    got = _operands(args[:1], ())
    if got is None or not -max(got[0][0].ndim, 1) <= args[1] < max(got[0][0].ndim, 1):
        return None
    (data,), (shape,), dtype = got
    return [data, args[1]], shape, dtype


def _gelu(args):
    """Gelu (x, approximate='none'): x's array and 'none' or 'tanh'; the result has x's shape."""
    if len(args) > 2 or (len(args) == 2 and args[1] not in ("none", "tanh")):
        return None
    got = _operands(args[:1], ())
    if got is None:
        return None
    (data,), (shape,), dtype = got
    return [data, *args[1:]], shape, dtype


def _mask_times(args):
    """Dropout (x, mask): x's array and the caller's mask, an array of x's shape and dtype."""
    if len(args) != 2 or type(args[1]) is not np.ndarray:
        return None
    got = _operands(args[:1], ())
    if got is None or args[1].shape != got[1][0] or args[1].dtype != got[2]:
        return None
    (data,), (shape,), dtype = got
    return [data, args[1]], shape, dtype


def _lookup(args):
    """Embedding (weight, indices, padding_idx=None): a float 2-D weight's array and int64 indices in
    [0, num_embeddings); the result has shape indices.shape + (embedding_dim,). A padding_idx stays the
    reference's."""
    weight, indices, padding_idx = (*args, None)[:3] if len(args) in (2, 3) else (None, None, 0)
    if padding_idx is not None or not isinstance(indices, TensorBase) or type(indices._data) is not np.ndarray:
        return None
    got = _operands((weight,), ())
    idx = indices._data
    if got is None or got[0][0].ndim != 2 or idx.dtype != np.int64:
        return None
    (data,), _, dtype = got
    if idx.size and (idx.min() < 0 or idx.max() >= data.shape[0]):
        return None  # the reference raises PyTorch's IndexError (or takes negative indices)
    return [data, idx, None], (*idx.shape, data.shape[1]), dtype


def _masked(args):
    """MaskedFill (x, mask, value): x's array, a bool mask that broadcasts to x's shape, a Python number."""
    if len(args) != 3 or type(args[2]) not in (*_NUMBERS, bool) or not isinstance(args[1], TensorBase):
        return None
    got = _operands(args[:1], ())
    mask = args[1]._data
    if got is None or type(mask) is not np.ndarray or mask.dtype != np.bool_:
        return None
    (data,), (shape,), dtype = got
    try:
        if np.broadcast_shapes(shape, mask.shape) != shape:
            return None
    except ValueError:
        return None
    return [data, mask, args[2]], shape, dtype


def _joined(args, kwargs):
    """Cat (*tensors, dim=0): the arrays of float tensors of one dtype and rank, whose sizes match except along
    dim; the result's shape and the `dim=` forward takes. Tensors of another rank (PyTorch's legacy empty 1-D
    ones, which cat skips) stay the reference's."""
    dim = kwargs.get("dim", 0)
    if not args or set(kwargs) - {"dim"} or type(dim) is not int:
        return None
    got = _operands(args, ())
    if got is None:
        return None
    arrays, shapes, dtype = got
    n = len(shapes[0])
    if n == 0 or not -n <= dim < n or any(len(s) != n for s in shapes):
        return None
    d = dim % n
    if any(s[:d] + s[d + 1:] != shapes[0][:d] + shapes[0][d + 1:] for s in shapes):
        return None  # the reference raises PyTorch's error
    return arrays, (*shapes[0][:d], sum(s[d] for s in shapes), *shapes[0][d + 1:]), dtype, {"dim": dim}


def _swapped(args):
    """Transpose (x, dim0, dim1): the array of an x of at least one dimension and two int dims in range (negative
    ones counting from the end); the result has x's shape with those two sizes swapped."""
    if len(args) != 3 or type(args[1]) is not int or type(args[2]) is not int:
        return None
    got = _operands(args[:1], ())
    if got is None:
        return None
    (data,), (shape,), dtype = got
    n = data.ndim
    if n == 0 or not (-n <= args[1] < n and -n <= args[2] < n):
        return None  # a 0-d transpose, or the reference's IndexError
    sizes = list(shape)
    sizes[args[1]], sizes[args[2]] = shape[args[2]], shape[args[1]]
    return [data, args[1], args[2]], tuple(sizes), dtype


def _expanded(args):
    """Expand (x, shape): x's array and a tuple of sizes (no -1) that x's shape broadcasts to; the result has
    that shape."""
    if len(args) != 2 or not isinstance(args[1], tuple) or any(type(s) is not int or s < 0 for s in args[1]):
        return None
    got = _operands(args[:1], ())
    if got is None or len(args[1]) < got[0][0].ndim:
        return None
    (data,), (shape,), dtype = got
    try:
        if np.broadcast_shapes(shape, args[1]) != args[1]:
            return None
    except ValueError:
        return None  # the reference raises PyTorch's error
    return [data, tuple(args[1])], tuple(args[1]), dtype


def _gathered(args):
    """Gather (x, dim, index): x's array, an int dim in range and an int64 index array of x's rank whose sizes
    equal x's except along dim, every index in [0, x.shape[dim]); the result has the index's shape. Smaller
    index sizes (PyTorch allows them) and bad indices stay the reference's."""
    if len(args) != 3 or type(args[1]) is not int or not isinstance(args[2], TensorBase):
        return None
    got = _operands(args[:1], ())
    idx = args[2]._data
    if got is None or type(idx) is not np.ndarray or idx.dtype != np.int64:
        return None
    (data,), (shape,), dtype = got
    n = data.ndim
    if n == 0 or idx.ndim != n or not -n <= args[1] < n:
        return None
    d = args[1] % n
    if idx.shape[:d] + idx.shape[d + 1:] != shape[:d] + shape[d + 1:]:
        return None
    if idx.size and (idx.min() < 0 or idx.max() >= shape[d]):
        return None  # the reference raises PyTorch's error
    return [data, args[1], idx], idx.shape, dtype


def _reshaped(args, op):
    """View (x, shape), and squeeze(x, dim) / unsqueeze(x, dim) as views of x to a shape: the array of a row-major
    x and the new shape (one -1 resolved; an int dim in range); the result has that shape. A strided x, a squeeze
    of several dims and sizes that do not fit stay the reference's (with its errors)."""
    if len(args) != 2:
        return None
    got = _operands(args[:1], ())
    if got is None or not got[0][0].flags.c_contiguous:
        return None
    (data,), (shape,), dtype = got
    n, arg = len(shape), args[1]
    if op == "View":
        if not isinstance(arg, tuple) or any(type(s) is not int or s < -1 for s in arg) or arg.count(-1) > 1:
            return None
        known = math.prod(s for s in arg if s != -1)
        if -1 in arg and not known:
            return None
        new = tuple(data.size // known if s == -1 and known else s for s in arg)
        if math.prod(new) != data.size:
            return None
    elif type(arg) is not int or not -(n + (op == "Unsqueeze")) <= arg < n + (op == "Unsqueeze") or n == 0:
        return None
    elif op == "Squeeze":
        new = shape[:arg % n] + shape[arg % n + 1:] if shape[arg] == 1 else shape
    else:
        d = arg % (n + 1)
        new = shape[:d] + (1,) + shape[d:]
    return [data, new], new, dtype


# chapter 02b's ops: how a call's arguments reach the learner's forward (None: the reference computes it)
KEYWORDS = {"Cat": _joined}  # ops whose options arrive as keywords (`Cat.apply(*tensors, dim=dim)`)
SHAPED = {**KEYWORDS, "Softmax": _along, "LogSoftmax": _along, "Gelu": _gelu, "Dropout": _mask_times, "Embedding": _lookup,
          "MaskedFill": _masked, "Transpose": _swapped, "Expand": _expanded, "Gather": _gathered}
# view ops: their result must share x's memory (the engine makes it a view of x: one version counter, `_base`)
VIEWS = ("Transpose", "Expand", "View")
BY_OP = {"View": _reshaped}  # ops whose reading depends on the framework's op calling (View, Squeeze, Unsqueeze)

# the reference op's name -> which arguments may be Python numbers (element-wise ops), "matmul", "reduce"
# or "shaped" (chapter 02b: SHAPED reads the arguments)
OPS = {"Add": (0, 1), "Sub": (0, 1), "Mul": (0, 1), "Div": (0, 1), "Pow": (1,),
       "Neg": (), "Exp": (), "Log": (), "Tanh": (), "Relu": (), "Sigmoid": (), "Matmul": "matmul",
       "Sum": "reduce", "Mean": "reduce", **{name: "shaped" for name in (*SHAPED, *BY_OP)}}


def reference_op(ctx, *args, **kwargs):
    """What runs when a learner's op raises (build mode leaves it out): the forward call goes back to the
    framework's op (NotImplemented); a backward of a node the learner's forward computed has no reference to
    go back to (what the node saved is the learner's), so the learner's error is raised again."""
    if ctx is _BACKWARD:
        raise  # noqa: PLE0704  (the learner's error, being handled by build mode's guard)
    return NotImplemented


for _name in OPS:
    seams.offer(_name, reference_op)


def _tensor_of(saved, args, arrays):
    """The tensor argument whose array forward saved (`saved` itself when it is none of them: a number);
    `arrays` are what forward received, in the order of `args` (a matrix product's row-contiguous copies)."""
    if isinstance(saved, np.ndarray):
        for t, x in zip(args, arrays):
            if x is saved:
                return t
    return saved


def _forward_problem(name, result, arrays, shape, dtype):
    """Why the array a learner's forward returned is not the op's result (None when it is)."""
    if not isinstance(result, (np.ndarray, np.generic)):
        return TypeError(f"your {name}.forward returned {type(result).__name__}, expected a NumPy array: forward "
                         "computes on the operands' arrays (np.exp(x), a * b, ...)")
    if result.shape != shape or result.dtype != dtype:
        return RuntimeError(f"your {name}.forward returned an array of shape {result.shape} and dtype "
                            f"{result.dtype} for operands of shapes {[np.shape(a) for a in arrays]}, expected "
                            f"shape {shape} and dtype {dtype}")
    if name in VIEWS and arrays[0].size and not np.may_share_memory(result, arrays[0]):
        return RuntimeError(f"your {name}.forward returned a copy of x: {name} returns a view of x's array (no "
                            "numbers move), so that a change of x in place shows in its result as in PyTorch")
    return None


def _keep_saved(ctx, args, arrays):
    """The arrays forward saved are its inputs: backward reads their tensors (and their versions)."""
    saved = tuple(_tensor_of(s, args, arrays) for s in ctx.__dict__["_saved"])
    ctx._saved = saved
    ctx._saved_versions = [t._version[0] if isinstance(t, TensorBase) else None for t in saved]


def _stale_view(args):
    """Whether a tensor argument is a view whose base was modified in place since it was made."""
    return any(isinstance(a, TensorBase) and a._base is not None and a._view_version != a._version[0] for a in args)


def _fits(shape, grad_shape):
    """Whether a gradient of `grad_shape` sums back to an input of `shape` (equal, or broadcast from it)."""
    if len(grad_shape) < len(shape):
        return False
    tail = grad_shape[len(grad_shape) - len(shape):]
    return all(s == g or s == 1 for s, g in zip(shape, tail))


def runner(learner_class, name: str | None = None):
    """The callable build mode installs under the op's name: runs `learner_class`'s forward on the calls it
    covers (NotImplemented for the others) and keeps its backward on the node."""
    name = name or learner_class.__name__
    numbers = OPS[name]
    forward, backward = learner_class.forward, learner_class.backward
    arity = 3 if numbers == "reduce" else None
    number_exponent = name == "Pow"  # the exercise's Pow: a tensor to a Python number's power

    def rule(ctx, *grad_outputs):
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
        n = len(ctx.input_metadata)
        inputs = arity if arity is not None else n  # a reduction's forward takes (x, dim, keepdim)
        if len(grads) == 1 and numbers in ((), "reduce", "shaped"):  # one differentiable input: its gradient alone
            grads = grads + (None,) * (n - 1)
        elif len(grads) == inputs or (numbers == "shaped" and 1 <= len(grads) <= n):
            grads = grads + (None,) * (n - len(grads))
        else:
            raise RuntimeError(f"your {name}.backward returned {len(grads)} gradient(s), but {name} has {inputs} "
                               f"input(s): return one per input of forward (None for one that needs none)")
        shapes = {i: meta[0] for i, meta in enumerate(ctx.input_metadata) if meta is not None}
        out = []
        for i, (g, need) in enumerate(zip(grads, ctx.needs_input_grad)):
            if not need:
                out.append(None)
                continue
            if not isinstance(g, TensorBase):
                raise TypeError(f"your {name}.backward returned {type(g).__name__} as the gradient of input {i}, "
                                "expected a Tensor (compute it with tensor operations on grad and the saved tensors)")
            if not _fits(shapes[i], tuple(g._data.shape)):
                raise RuntimeError(f"your {name}.backward returned a gradient of shape {tuple(g._data.shape)} for "
                                   f"input {i} of shape {tuple(shapes[i])}: a gradient has its input's shape (or "
                                   "the output's, which the engine sums back to the input's)")
            out.append(g)
        return tuple(out)

    through = {}  # what is installed -> the callable a node runs its backward with
    routed = {}  # the reference op -> the op class the learner's Function.apply records

    def checked_forward(ctx, *arrays):
        if checked_forward.contiguous:  # the operands the reference's preparation made contiguous (matmul)
            arrays = tuple(np.ascontiguousarray(a) if isinstance(a, np.ndarray) else a for a in arrays)
        checked_forward.received = arrays
        try:
            result = forward(ctx, *arrays, **checked_forward.options)
            problem = _forward_problem(name, result, arrays, *checked_forward.expect)
            if problem is not None:
                raise problem
        except Exception as error:  # the learner's op failed, not their engine that called it
            error._tc_op_forward = True
            raise
        return np.asarray(result)

    def backward_of():
        """(the learner's backward as the node runs it, a class whose `backward` is that), through what is
        installed (build mode times it and names its errors)."""
        installed = seams.ACTIVE.get(name)
        pair = through.get(installed)
        if pair is None:
            wrapped = getattr(installed, "__wrapped__", installed)
            step = functools.partial(installed, _BACKWARD) if wrapped is run else rule
            pair = through[installed] = (step, type(name, (), {"backward": staticmethod(step)}))
        return pair

    def recorded_by_learner(op, args, arrays, shape, dtype, options):
        """The call recorded by the learner's Function.apply (NotImplemented: the reference records it)."""
        if _anomaly.enabled or _stale_view(args):
            return NotImplemented
        cls = routed.get(op)
        if cls is None:
            cls = routed[op] = type(name, (learner_class,), {"node_name": op._Node.__name__,
                                                             "forward": staticmethod(checked_forward)})
        checked_forward.expect, checked_forward.options = (shape, dtype), options
        checked_forward.contiguous = any(isinstance(t, TensorBase) and x is not t._data for t, x in zip(args, arrays))
        args = tuple(_tensor_of(x, args, arrays) for x in arrays)  # as forward takes them (a reduction's dim, keepdim)
        result = seams.learner("Function.apply")(cls, *args)
        if isinstance(result, OpFailed):
            raise result.error
        if result is NotImplemented:
            return NotImplemented
        if op.view:  # the framework makes a view op's result a view of x (one version counter, `_base`)
            src = args[0]
            result._version, result._view_version = src._version, src._version[0]
            result._base = src if src._base is None else src._base
        node = result.grad_fn
        if node is not None:  # recorded: the framework numbers the node; backward runs the learner's
            node._seq = next(_sequence)
            node.modules = module_stack.modules
            if "_saved" in node.__dict__:  # the arrays forward received, in the order of the tensors passed
                _keep_saved(node, args, checked_forward.received)
            if node.save_output:
                node._out_alias = alias = _wrap(result._data)
                alias._version = result._version
                node._out_version = result._version[0]
            node._learner_backward, node._forward_cls = backward_of()
        seams.count_call(name)
        return result

    def run(ctx, *args, **kwargs):
        if ctx is _BACKWARD:  # a node this op computed runs its backward (through the installed wrapper)
            return rule(*args)
        if name in KEYWORDS:
            got = KEYWORDS[name](args, kwargs)
        elif kwargs and any(k != "alpha" or v != 1 for k, v in kwargs.items()):
            return NotImplemented  # alpha=..., out=...: the reference's
        elif numbers == "matmul":
            got = _matmul(args)
        elif numbers == "reduce":
            got = _reduction(args)
        elif name in BY_OP:
            got = BY_OP[name](args, (ctx if isinstance(ctx, type) else ctx._fn).__name__)
        elif numbers == "shaped":
            got = SHAPED[name](args)
        elif len(args) != (1 if not numbers else 2) or (number_exponent and type(args[1]) not in _NUMBERS):
            return NotImplemented
        else:
            got = _elementwise(args, numbers)
        if got is None:
            return NotImplemented
        arrays, shape, dtype, *options = got  # options: the keywords forward takes (Cat's dim)
        if isinstance(ctx, type):  # the reference op: the learner's Function.apply records the call
            return recorded_by_learner(ctx, args, arrays, shape, dtype, options[0] if options else {})
        recorded = bool(ctx.needs_input_grad)
        kept = ctx.__dict__
        if recorded and "_saved" in kept:  # the reference op saves its inputs; the learner's saves its own
            del kept["_saved"], kept["_saved_versions"]
        result = forward(ctx, *arrays, **options[0]) if options else forward(ctx, *arrays)
        if recorded and "_saved" in kept:
            _keep_saved(ctx, args, arrays)
        problem = _forward_problem(name, result, arrays, shape, dtype)
        if problem is not None:
            raise problem
        if recorded:  # a node's backward runs the learner's
            ctx._learner_backward, ctx._forward_cls = backward_of()
        seams.count_call(name)
        return result

    run.learner_class = learner_class
    return run
