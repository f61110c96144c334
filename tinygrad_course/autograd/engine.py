"""The autograd engine (chapter 02): how a call of an op is recorded as a graph node, and how `backward` runs the graph.

Recording. An op is a `Function` subclass with `forward` and `backward` side by side (the framework's own ops in
`ops/` subclass `Op`). `MyOp.apply(*args)` runs `forward`; when gradients are enabled and an input requires grad,
`_record` also makes the output's `grad_fn`: a `Node` that holds the graph edges to the inputs (`next_functions`)
and each tensor input's shape and dtype. The node *is* the `ctx` that `forward` and `backward` receive, as in
PyTorch. When nothing is recorded, `apply` makes the result and nothing else.

Running backward. `run_backward` counts, for every node reachable from the outputs, the edges pointing at it; a
node runs once every node that consumes its output has sent its gradient (among ready nodes the most recently
created first, as PyTorch does) -- Kahn's topological sort (`topological_sort.py`), done while running.
`Node.apply` runs an op's `backward` and then, in one place for every op, sums each gradient back to its input's
shape (`sum_to_shape`: broadcasting undone) and casts it to the input's dtype. Leaves receive theirs in
`AccumulateGrad`. A node's saved tensors are freed after it ran (`Node.release_variables`) unless `retain_graph=True`.

Extension points of the loop: tensor and node hooks (`hooks.run_pre_hooks`, node post-hooks), `autograd.grad`'s
capture of the gradients it returns (`grad_capture.Capture`), the profiler (`profilers`), anomaly detection and
`record_backward()` traces; in build mode (`seams`) a learner's ops (looked up by name in `Op._apply`, their
backward kept on the node), backward rules, topological sort and `Function.apply` (every op and custom Function),
and method slots for a node's step (`Node.apply`), its saved tensors (`save_for_backward`, `saved_tensors`,
`release_variables`) and a leaf's `AccumulateGrad.apply` (chapter 02d.2, 02d.3), and for `Tensor.backward` (chapter 02d.1,
in `tensor.py`), which takes a plain call before `backward`/`run_backward` below run at all.
"""
from __future__ import annotations

import contextlib
import heapq
import itertools
import threading
import weakref

import numpy as np

from .. import seams
from ..seams import backward_rule
from ..shapes import broadcast_error, broadcast_shapes_checked
from ..dtypes import _CATEGORY_FLOAT as _FLOAT
from ..tensor_base import TensorBase, _wrap
from .anomaly_mode import check_gradients, remember_forward
from .anomaly_mode import state as _anomaly
from .autocast_state import autocast_state as _autocast
from .function_ctx import FunctionCtx
from .grad_mode import _state
from .grad_storage import owns_storage
from .grad_capture import Capture
from .hooks import add_hook, run_pre_hooks
from .learner_backward import run_learner_pass
from .root_gradient import learner_root_grads, root_grads
from .saved_variable import FREED_MESSAGE, version_error
from .sum_to_shape import sum_to_shape
from .topological_sort import learner_order

_sequence = itertools.count()


class _ModuleStack(threading.local):
    modules = ()


module_stack = _ModuleStack()  # nn.Module.__call__ pushes/pops; nodes remember it (for tc.viz)

# Active profilers (tc.profiler): each has record(name, fn, args, kwargs) that times one call.
profilers = []
_recorders = []  # lists receiving (node, grad_outputs, grad_inputs) while record_backward() is active
_final_callbacks = []  # one list per running backward pass (innermost last)

_ARRAY_TYPES = {}  # type -> whether it is a backend array type (NumPy or CuPy), filled as types are met


def _is_array(value):
    """Whether `value` is a backend array (NumPy or CuPy); remembered per type."""
    t = type(value)
    is_array = _ARRAY_TYPES[t] = hasattr(t, "__array_interface__") or hasattr(t, "__cuda_array_interface__")
    return is_array


class Node(FunctionCtx):
    """A node of the backward graph, i.e. a tensor's `grad_fn` (also the `ctx` of its `Function`)."""

    _fn = None  # the Function class whose backward this node runs

    # Defaults so that freshly created nodes need few attribute writes.
    _saved = ()
    _saved_versions = ()
    _released = False
    _freed = False  # True once the arrays the op's forward kept on this node were dropped
    _out_alias = None
    _num_outputs = 1
    _tensor_pre_hooks = None  # {output_nr: _HookDict}
    _retain_hooks = None  # {output_nr: weakref to tensor}
    _pre_hooks = None
    _post_hooks = None
    _materialize = True
    view = False
    save_output = False
    modules = ()
    next_functions = ()
    needs_input_grad = ()
    _learner_backward = None  # build mode: set when a learner's op computed this node's forward
    input_metadata = ()  # (shape, dtype) of each argument of forward that is a tensor, None for the others

    def name(self) -> str:
        """PyTorch's name for this node, e.g. "MulBackward0"."""
        return type(self).__name__

    def _sequence_nr(self) -> int:
        return self._seq

    # ---- saving tensors for backward ---------------------------------------------------------
    def save_for_backward(self, *tensors):
        """Save tensors that `backward` needs; read them back with `ctx.saved_tensors`. (Built-in ops may
        also save Python numbers in place of tensors.)"""
        if not self.needs_input_grad and self._fn is not None and not self._fn._check_grads:
            return  # a built-in op whose call is not recorded
        self._saved = tensors
        versions = []
        for t in tensors:
            versions.append(t._version[0] if isinstance(t, TensorBase) else None)
        self._saved_versions = versions

    @property
    def saved_tensors(self):
        """The tensors saved in forward; raises if freed or modified in place since."""
        if self._released:
            raise RuntimeError(FREED_MESSAGE)
        for t, v in zip(self._saved, self._saved_versions):
            if v is not None and t._version[0] != v:
                outs = self.__dict__.get("_saved_outputs") or {}  # {index in _saved: output number}
                raise version_error(t, v, self, any(self._saved[k] is t for k in outs))
        outs = self.__dict__.get("_saved_outputs")
        if outs and _state.enabled:  # create_graph: saved outputs must lead back to this node
            return tuple(self._relinked(t, outs[i]) if i in outs else t for i, t in enumerate(self._saved))
        return self._saved

    @property
    def saved_output(self):
        """The op's own output as saved in forward (built-in ops that set `ctx.save_output = True`)."""
        if self._released:
            raise RuntimeError(FREED_MESSAGE)
        alias = self._out_alias
        if alias._version[0] != self._out_version:
            raise version_error(alias, self._out_version, self, True)
        if _state.enabled:  # create_graph: the output must lead back to this node for higher derivatives
            return self._relinked(alias, 0)
        return alias

    def _relinked(self, saved, output_nr):
        """A tensor sharing a saved output's data whose grad_fn is this node again.

        Saved outputs are stored detached (a saved output holding its own grad_fn would be a reference cycle); double
        backward needs the link back, so it is restored on use, as PyTorch's SavedVariable does."""
        t = _wrap(saved._data)
        t._version = saved._version
        t._requires_grad = True
        t.grad_fn = self
        t._output_nr = output_nr
        return t

    def release_variables(self):
        """Free what this node kept for its backward (after it ran, without retain_graph): its saved tensors
        and the arrays a built-in op's forward stored on it, as PyTorch's engine releases a node's saved variables
        (a custom Function's own ctx attributes stay, as in PyTorch); its backward then raises."""
        self._saved = ()
        self._out_alias = None
        self._released = True
        if self._fn is not None and not self._fn._check_grads:  # a built-in op (an `Op`)
            kept = self.__dict__
            for name, value in list(kept.items()):
                is_array = _ARRAY_TYPES.get(type(value))
                if is_array is None:
                    is_array = _is_array(value)
                if is_array:
                    del kept[name]
                    self._freed = True
            for name in self._fn.released_after_backward:  # what an op keeps in other containers
                if kept.pop(name, None) is not None:
                    self._freed = True

    # ---- hooks --------------------------------------------------------------------------------
    def register_hook(self, fn):
        """Call `fn(grad_inputs, grad_outputs)` after this node runs; it may return new grad_inputs."""
        return add_hook(self, "_post_hooks", fn)

    def register_prehook(self, fn):
        """Call `fn(grad_outputs)` before this node runs; it may return new grad_outputs."""
        return add_hook(self, "_pre_hooks", fn)

    @property
    def metadata(self) -> dict:
        """A free-form dict attached to the node (as in PyTorch)."""
        md = self.__dict__.get("_metadata")
        if md is None:
            md = self._metadata = {}
        return md

    # ---- running backward ---------------------------------------------------------------------
    def apply(self, *grad_outputs):
        """Run this node's backward on the gradients of its outputs; one gradient per next_function, each
        reduced to its input's shape and dtype."""
        if self._freed:
            raise RuntimeError(FREED_MESSAGE)
        fn = self._fn
        # (the engine never runs a node whose gradients are all None, so only multi-output nodes get here)
        if self._num_outputs > 1 and self._materialize and any(g is None for g in grad_outputs):
            grad_outputs = tuple(
                TensorBase._zeros_meta(meta) if g is None else g for g, meta in zip(grad_outputs, self._out_meta)
            )
        grads = NotImplemented
        # build mode: the backward of the learner's op that ran forward, or a learner's backward rule
        learner = self._learner_backward or (backward_rule(fn.__name__) if seams.ACTIVE else None)
        if learner is not None:
            grads = learner(self, *grad_outputs)
        elif fn.fused_backward is not None and not _state.enabled:  # no graph of the backward is recorded
            grads = fn.fused_backward(self, *grad_outputs)
            if grads is not NotImplemented:  # arrays: wrapped here, once for every fused kernel
                grads = tuple(g if g is None else _wrap(g) for g in (grads if type(grads) is tuple else (grads,)))
        if grads is NotImplemented:
            grads = fn.backward(self, *grad_outputs)
        return self._to_inputs(grads if type(grads) is tuple else (grads,))

    def __call__(self, *grad_outputs):
        """`node(*grad_outputs)` runs `node.apply` (the engine calls `apply` itself; build mode may replace it)."""
        return self.apply(*grad_outputs)

    def _to_inputs(self, grads):
        """The gradients of the tensor inputs, each summed back to the input's shape and cast to its dtype."""
        metadata = self.input_metadata
        n, got = len(metadata), len(grads)
        if got != n:
            if self._fn._check_grads and (got < n and got == 1 and n > 1 or got > n and any(g is not None for g in grads[n:])):
                raise RuntimeError(
                    f"function {self.name()} returned an incorrect number of gradients (expected {n}, got {got})"
                )
            grads = grads + (None,) * (n - got) if got < n else grads[:n]
        out = []
        for i, meta in enumerate(metadata):
            if meta is None:  # a Python number or an option: no gradient, no edge
                continue
            shape, dtype = meta
            g = grads[i]
            if g is not None:
                data = getattr(g, "_data", None)
                if data is None:
                    if not isinstance(g, TensorBase) and self._fn._check_grads:
                        raise TypeError(f"function {self.name()} returned a gradient that is not a Tensor or None "
                                        f"at index {i}")
                else:
                    if data.shape != shape:
                        g = self._summed_to(i, g, shape)
                    if g.dtype is not dtype:
                        g = g.to(dtype)
            out.append(g)
        return tuple(out)

    def _summed_to(self, i, g, shape):
        """`g` summed over the dimensions broadcasting added or stretched, to the input's `shape`."""
        data = g._data
        try:
            fits = tuple(broadcast_shapes_checked(shape, data.shape)) == data.shape
        except RuntimeError:
            fits = False
        if fits:
            if _state.enabled or "sum_to_shape" in seams.ACTIVE:  # recorded (or the learner's sum_to_shape)
                return sum_to_shape(g, shape)
            lead = data.ndim - len(shape)  # no graph recorded: the same sums on the array, no op to run
            dims = tuple(range(lead)) + tuple(lead + k for k, n in enumerate(shape)
                                              if n == 1 and data.shape[lead + k] != 1)
            return _wrap(data.sum(axis=dims, keepdims=True).reshape(shape))
        raise RuntimeError(
            f"Function {self.name()} returned an invalid gradient at index {i} - got "
            f"[{', '.join(map(str, g.shape))}] but expected shape compatible with [{', '.join(map(str, shape))}]"
        )

    def __repr__(self):
        return f"<{self.name()} object at {hex(id(self))}>"


# ---- recording ------------------------------------------------------------------------------------------
def _record(ctx, args, needs):
    """Make `ctx` the graph node of a call of its op on `args`: the edges to each tensor input's node
    (`next_functions`), each argument's shape and dtype (None for one that is no tensor), the node's sequence
    number and modules."""
    nexts, meta = [], []
    for i, a in enumerate(args):
        if isinstance(a, TensorBase):
            meta.append((a._data.shape, a.dtype))
            if needs[i]:
                if a._base is not None and a._view_version != a._version[0]:
                    a._refresh_view_history()  # its base was modified in place after the view was made
                fn = a.grad_fn
                nexts.append((fn, a._output_nr) if fn is not None else (grad_accumulator(a), 0))
            else:
                nexts.append((None, 0))
        else:
            meta.append(None)
    ctx.next_functions = tuple(nexts)
    ctx.input_metadata = tuple(meta)
    ctx._seq = next(_sequence)
    ctx.modules = module_stack.modules
    if _anomaly.enabled:
        remember_forward(ctx)


class _FunctionMeta(type):
    """Gives every Function subclass its own node class, named like PyTorch's."""

    def __init__(cls, name, bases, ns):
        super().__init__(name, bases, ns)
        node_name = ns.get("node_name") or f"{name}Backward"
        attrs = {"_fn": cls, "_forward_cls": cls, "__module__": cls.__module__,
                 "view": getattr(cls, "view", False), "save_output": getattr(cls, "save_output", False)}
        cls._Node = cls._backward_cls = type(node_name, (Node,), attrs)


class Function(metaclass=_FunctionMeta):
    """Base class for custom differentiable operations, like `torch.autograd.Function`.

    Subclasses define `forward(ctx, *args)` (computed without recording a graph) and
    `backward(ctx, *grad_outputs)` returning one gradient per forward argument (None for
    non-tensors), and are called through `MyFunction.apply(*args)`.
    """

    _check_grads = True
    fused_backward = None  # see Op

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom autograd.Function to use it with backward mode AD.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward; record a graph node when gradients are enabled and an input requires grad."""
        if seams.ACTIVE and "Function.apply" in seams.ACTIVE and not kwargs and not _anomaly.enabled:
            out = seams.learner("Function.apply")(cls, *args)  # build mode: the learner's engine records it
            if out is not NotImplemented:
                return out
        needs = [isinstance(a, TensorBase) and a._requires_grad for a in args]
        record = _state.enabled and any(needs)
        ctx = cls._Node()
        ctx.needs_input_grad = tuple(needs)
        prev = _state.enabled
        _state.enabled = False
        try:
            if cls.setup_context is not Function.setup_context:
                out = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args, **kwargs)
        finally:
            _state.enabled = prev
        single = not isinstance(out, tuple)
        outs = (out,) if single else out
        for t in getattr(ctx, "_dirty", ()):
            t._version[0] += 1
        if not record:
            return out
        non_diff = {id(t) for t in getattr(ctx, "_non_diff", ())}
        dirty = {id(t) for t in getattr(ctx, "_dirty", ())}
        results = []
        for t in outs:
            if isinstance(t, TensorBase) and id(t) not in dirty:
                if any(t is a for a in args) or t.grad_fn is not None:
                    t = t.detach()  # a fresh output tensor, so the input keeps its own history
            results.append(t)
        _record(ctx, args, needs)
        ctx._num_outputs = len(outs)
        ctx._out_meta = [(t.shape, t.dtype, t.device) if isinstance(t, TensorBase) else None for t in results]
        for i, t in enumerate(results):
            if isinstance(t, TensorBase) and id(t) not in non_diff and t.dtype.is_floating_point:
                t._requires_grad = True
                t.grad_fn = ctx
                t._output_nr = i
        # A saved output would otherwise keep itself alive through its own grad_fn.
        if ctx._saved:
            saved, out_nrs = [], {}
            for k, s in enumerate(ctx._saved):
                nr = next((i for i, r in enumerate(results) if s is not None and s is r), None)
                if nr is not None:
                    out_nrs[k] = nr
                    s = s.detach()
                saved.append(s)
            ctx._saved = tuple(saved)
            if out_nrs:
                ctx._saved_outputs = out_nrs
        return results[0] if single else tuple(results)


class Op(Function):
    """A built-in primitive: `forward` returns backend arrays, `backward` uses framework ops.

    Class options: `differentiable = False` for ops whose outputs never require grad; `view = True` when the output
    shares storage with input 0 (forward may override per call by setting `ctx.view`); forward may set
    `ctx.save_output = True` to keep its output for backward (read it back with `ctx.saved_output`), which avoids a
    reference cycle through the output; `save_inputs = True` saves every argument for backward
    (`ctx.saved_tensors`) when the call is recorded. Multi-output ops return a tuple of arrays;
    `non_differentiable_outputs` lists output indices that never require grad (e.g. the indices of `max`).
    `ctx.needs_input_grad` is empty when the call is not recorded, so `forward` saves nothing then.

    `backward` is the op's math, written with framework ops, so a graph of the backward can be recorded
    (`create_graph=True`, higher derivatives). A fused kernel (convolution, pooling, attention, softmax losses,
    normalisation, GELU, recurrent layers) may also define `fused_backward(ctx, *grads)`: the same gradients
    computed on arrays by a faster algorithm, returning arrays (or NotImplemented for a case it does not cover).
    The engine uses it, in `Node.apply`, whenever no graph of the backward is being recorded.
    """

    _check_grads = False
    differentiable = True
    view = False
    save_output = False
    save_inputs = False
    released_after_backward = ()  # ctx attributes holding arrays in containers, dropped with the saved tensors
    non_differentiable_outputs = ()

    @classmethod
    def apply(cls, *args, **kwargs):
        if profilers:
            return profilers[-1].record(cls.profile_name(), cls._apply, args, kwargs)
        return cls._apply(*args, **kwargs)

    @classmethod
    def profile_name(cls) -> str:
        """The op's name in profiler tables (PyTorch-style, e.g. "aten::mul")."""
        return "aten::" + cls._Node.__name__.rsplit("Backward", 1)[0].lower()

    @classmethod
    def _apply(cls, *args, **kwargs):
        if _autocast.active:  # tc.autocast: matmul/conv in float16/bfloat16, losses in float32
            args = _autocast.cast_inputs(cls, args)
        learner = seams.ACTIVE.get(getattr(cls, "component", cls.__name__)) if seams.ACTIVE else None  # build mode
        if learner is not None and "Function.apply" in seams.ACTIVE:  # the learner's engine records their op
            out = learner(cls, *args, **kwargs)
            if out is not NotImplemented:
                return out
        record = False
        if _state.enabled and cls.differentiable:
            for a in args:
                if isinstance(a, TensorBase) and a._requires_grad:
                    record = True
                    break
        ctx = cls._Node()
        if record:
            ctx.needs_input_grad = tuple([isinstance(a, TensorBase) and a._requires_grad for a in args])
            _record(ctx, args, ctx.needs_input_grad)
            if cls.save_inputs:
                ctx.save_for_backward(*args)
        try:
            out = NotImplemented if learner is None else learner(ctx, *args, **kwargs)
            if out is NotImplemented:
                out = cls.forward(ctx, *args, **kwargs)
        except ValueError as e:
            error = broadcast_error([a._data.shape for a in args if isinstance(a, TensorBase)], e)
            if error is e:
                raise
            raise error from None
        if type(out) is tuple:
            results = tuple(_wrap(o) for o in out)
        else:
            results = None
            res = _wrap(out)
        if ctx.view:
            src = args[0]
            for r in (results if results is not None else (res,)):
                r._version = src._version
                r._view_version = src._version[0]
                r._base = src if src._base is None else src._base
        if not record:
            return res if results is None else results
        if results is None:
            if res.dtype.category != _FLOAT:  # an integer or bool result never requires grad (x.long(), x.to(int))
                return res
            res._requires_grad = True
            res.grad_fn = ctx
            if ctx.save_output:
                ctx._out_alias = alias = _wrap(out)
                alias._version = res._version
                ctx._out_version = res._version[0]
            return res
        ctx._num_outputs = len(results)
        ctx._materialize = False  # multi-output ops' backward accepts None for unused outputs
        skip = cls.non_differentiable_outputs
        for i, r in enumerate(results):
            if i not in skip:
                r._requires_grad = True
                r.grad_fn = ctx
                r._output_nr = i
        return results


# ---- leaves: AccumulateGrad ------------------------------------------------------------------------------
class AccumulateGrad(Node):
    """The node that accumulates a leaf tensor's gradient into `leaf.grad` (its hooks run first)."""

    def __init__(self, variable):
        """The gradient node of leaf tensor `variable` (made once per leaf by `grad_accumulator`)."""
        self.variable = variable
        self._seq = float("inf")  # runs as soon as it is ready, like PyTorch's
        self.next_functions = ()

    def name(self):
        return "AccumulateGrad"

    def apply(self, grad):
        """Add `grad` into the leaf's `.grad` (a graph is built while `create_graph=True`)."""
        accumulate(self.variable, grad, _state.enabled)
        return ()


def _engine_takes_it(*args):
    """What runs when no learner's Function.apply takes a call: the engine's own code."""
    return NotImplemented


# Chapter 02d.2: the learner's Node runs a node's backward step (apply) and keeps its saved tensors
# (save_for_backward, saved_tensors, saved_output, release_variables), their AccumulateGrad a leaf's node and gradient: method slots, so
# nothing extra runs while none is installed (build mode's adapters hand the learner the calls they cover).
seams.offer_methods(Node, ("apply", "save_for_backward", "saved_tensors", "saved_output", "release_variables"),
                    "Node.")
seams.offer_methods(AccumulateGrad, ("__init__", "apply"), "AccumulateGrad.")
seams.offer("Function.apply", _engine_takes_it)


def grad_accumulator(leaf):
    """The leaf's `AccumulateGrad` node, made on first use and shared while anything holds it."""
    acc = leaf._grad_acc() if leaf._grad_acc is not None else None
    if acc is None:
        acc = AccumulateGrad(leaf)
        leaf._grad_acc = weakref.ref(acc)
    return acc


def accumulate(var, grad, create_graph):
    """Add `grad` into `var.grad`, running the leaf's hooks first (PyTorch's AccumulateGrad)."""
    if var._hooks:
        for hook in list(var._hooks.values()):
            res = hook(grad)
            if res is not None:
                grad = res
    if var.grad is None:
        if not create_graph:
            data = grad._data
            if grad._requires_grad or not data.flags.writeable or not data.flags.c_contiguous or (
                    data.base is not None and not owns_storage(grad)):
                grad = _wrap(data.copy())  # its own storage (a clone; no graph is recorded here)
            elif grad._base is not None:
                grad = _wrap(data)  # the same array, no longer a view of a tensor that only it kept alive
        var.grad = grad
    elif create_graph or var.grad._requires_grad:
        var.grad = var.grad + grad
    else:
        data = var.grad._data
        if data.flags.writeable and data.shape == grad._data.shape:
            data += grad._data
            var.grad._version[0] += 1
        else:
            var.grad = (var.grad + grad).detach()


# ---- running backward ------------------------------------------------------------------------------------
def queue_callback(callback):
    """Run `callback()` once the current backward pass has finished, like PyTorch's
    `Variable._execution_engine.queue_callback` (DDP uses it to wait for its gradient all-reduces)."""
    if not _final_callbacks:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    _final_callbacks[-1].append(callback)


@contextlib.contextmanager
def _callbacks_at_end():
    """Collect callbacks queued during the block and run them in order when it ends without error."""
    queue = []
    _final_callbacks.append(queue)
    try:
        yield
        i = 0
        while i < len(queue):  # a callback may queue further callbacks
            queue[i]()
            i += 1
    finally:
        _final_callbacks.remove(queue)


@contextlib.contextmanager
def record_backward():
    """Record every node the engine executes: yields a list of (node, grad_outputs, grad_inputs)."""
    events = []
    _recorders.append(events)
    try:
        yield events
    finally:
        _recorders.remove(events)


def _root_node(t, i):
    if t._base is not None and t._view_version != t._version[0]:
        t._refresh_view_history()
    if t.grad_fn is not None:
        return t.grad_fn
    if t._requires_grad:
        return grad_accumulator(t)
    raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")


def _count_dependencies(roots):
    """Number of graph edges pointing at each node reachable from `roots`, and the set of those nodes."""
    deps = {}
    seen = set(roots)
    stack = list(seen)  # a node reached from two roots (outputs of one multi-output op) is walked once
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is None:
                continue
            deps[child] = deps.get(child, 0) + 1
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return deps, seen


def _input_key(t):
    """Where the gradient of `autograd.grad`'s input `t` arrives: (its node, its output number)."""
    if not t._requires_grad:
        raise RuntimeError("One of the differentiated Tensors does not require grad")
    return (t.grad_fn, t._output_nr) if t.grad_fn is not None else (grad_accumulator(t), 0)


def _sum_of(a, b):
    """Two gradients reaching one output, added: on their arrays when no graph is recorded and they agree in
    shape, device and a float32/float64 dtype (no op to run), else with the `+` op."""
    if not _state.enabled and a.dtype is b.dtype and a.dtype.name in ("float32", "float64") and \
            a._device is b._device and a._data.shape == b._data.shape:
        return _wrap(a._data + b._data)
    return a + b


def _run_node(node, grads):
    """Run one node's backward, with the profiler, anomaly check and post-hooks around it."""
    if profilers:
        out = profilers[-1].record(node.name(), node.apply, grads, {})
    else:
        out = node.apply(*grads)
    if _anomaly.enabled:
        check_gradients(node, out)
    if node._post_hooks:
        for hook in list(node._post_hooks.values()):
            res = hook(out, tuple(grads))
            if res is not None:
                out = tuple(res)
    return out


def run_backward(outputs, grad_outputs, retain_graph, create_graph, inputs=None, allow_unused=False,
                 accumulate=True):
    """Backpropagate from `outputs`. With `accumulate`, leaf grads go into `.grad` (tensor.backward);
    otherwise the gradients of `inputs` are returned (autograd.grad)."""
    grads = (seams.ACTIVE and learner_root_grads(outputs, grad_outputs, create_graph)) or \
        root_grads(outputs, grad_outputs, create_graph)  # build mode: the learner's root gradient, one dict test
    roots = [_root_node(t, i) for i, t in enumerate(outputs)]
    deps, nodes = _count_dependencies(roots)
    capture = Capture([_input_key(t) for t in inputs], nodes) if inputs is not None else None
    if seams.ACTIVE and run_learner_pass(roots, grads, nodes, retain_graph, create_graph, capture, profilers + _recorders):
        return None  # build mode: the learner's backward pass ran (the plain case it covers)
    buffers = {}  # node -> the gradients of its outputs received so far
    for node, t, g in zip(roots, outputs, grads):
        buf = buffers.setdefault(node, [None] * node._num_outputs)
        nr = t._output_nr if t.grad_fn is not None else 0
        buf[nr] = g if buf[nr] is None else buf[nr] + g

    tie = itertools.count()
    ready = [(-node._seq, next(tie), node) for node in buffers if deps.get(node, 0) == 0]
    heapq.heapify(ready)
    order = learner_order(roots, nodes) if seams.ACTIVE else None  # build mode: a learner's order, checked
    prev_mode = _state.enabled
    _state.enabled = create_graph
    try:
        while True:
            if order is None:
                if not ready:
                    break
                node = heapq.heappop(ready)[2]
            else:
                node = next(order, None)
                if node is None:
                    break
                if node not in buffers:  # no gradient reached it
                    continue
            node_grads = buffers.pop(node)
            if capture is not None and node not in capture.needed:
                out = (None,) * len(node.next_functions)
            else:
                if node._tensor_pre_hooks or node._retain_hooks or node._pre_hooks:
                    node_grads = run_pre_hooks(node, node_grads, _state.enabled)
                if capture is not None:
                    capture.take(node, node_grads)
                if type(node) is AccumulateGrad:
                    if accumulate and node_grads[0] is not None:
                        node.apply(node_grads[0])
                    for events in _recorders:
                        events.append((node, tuple(node_grads), ()))
                    continue
                # `is None`, never `==`: comparing tensors would run the element-wise comparison op
                no_grads = node_grads[0] is None if node._num_outputs == 1 else all(g is None for g in node_grads)
                if no_grads or (capture is not None and capture.skips(node)):
                    out = (None,) * len(node.next_functions)
                else:
                    out = _run_node(node, node_grads)
                for events in _recorders:
                    events.append((node, tuple(node_grads), tuple(out)))
                if not retain_graph:
                    node.release_variables()
            for (child, nr), g in zip(node.next_functions, out):
                if child is None:
                    continue
                buf = buffers.get(child)
                if buf is None:
                    buf = buffers[child] = [None] * child._num_outputs
                if g is not None:
                    buf[nr] = g if buf[nr] is None else _sum_of(buf[nr], g)
                deps[child] -= 1
                if deps[child] == 0 and order is None:
                    heapq.heappush(ready, (-child._seq, next(tie), child))
    finally:
        _state.enabled = prev_mode
    return capture.result(allow_unused, create_graph) if capture is not None else None


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate gradients of `tensors` into the leaves' `.grad`, like `torch.autograd.backward`."""
    tensors = (tensors,) if isinstance(tensors, TensorBase) else tuple(tensors)
    if grad_tensors is None:
        grad_tensors = (None,) * len(tensors)
    elif isinstance(grad_tensors, TensorBase):
        grad_tensors = (grad_tensors,)
    else:
        grad_tensors = tuple(grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    with _callbacks_at_end():
        if inputs is not None:
            inputs = (inputs,) if isinstance(inputs, TensorBase) else tuple(inputs)
            grads = run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs=inputs,
                                 allow_unused=True, accumulate=False)
            for t, g in zip(inputs, grads):
                if g is not None:
                    accumulate(t, g, create_graph)
            return
        run_backward(tensors, grad_tensors, retain_graph, create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=None,
         is_grads_batched=False, materialize_grads=False):
    """Gradients of `outputs` with respect to `inputs`, returned (not accumulated), like `torch.autograd.grad`."""
    outputs = (outputs,) if isinstance(outputs, TensorBase) else tuple(outputs)
    inputs = (inputs,) if isinstance(inputs, TensorBase) else tuple(inputs)
    grad_outputs = ((None,) * len(outputs) if grad_outputs is None else
                    (grad_outputs,) if isinstance(grad_outputs, TensorBase) else tuple(grad_outputs))
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    with _callbacks_at_end():
        result = run_backward(outputs, grad_outputs, retain_graph, create_graph, inputs=inputs,
                              allow_unused=allow_unused, accumulate=False)
    if materialize_grads:
        result = tuple(_wrap(t._xp.zeros(t._data.shape, dtype=t.dtype.np_dtype)) if g is None else g
                       for t, g in zip(inputs, result))
    return result
