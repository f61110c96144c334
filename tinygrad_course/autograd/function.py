"""Graph nodes (`grad_fn` objects) and `Function`, the way every differentiable op is defined.

An op is a `Function` subclass with a `forward` and a `backward` side by side. Calling
`MyOp.apply(*args)` runs `forward`; when gradients are being recorded and an input requires
grad, it also creates the node that `backward` will later run on — the output's `grad_fn`.
The node *is* the `ctx` object both methods receive, as in PyTorch.

Two flavours share this machinery:
- `Function` — the public, PyTorch-compatible API: `forward` takes and returns tensors.
- `Op` — the framework's built-in primitives (in `tinygrad_course/ops/`): `forward` takes tensors and
  returns backend arrays, which keeps per-op overhead low; `backward` is written with framework
  ops, so `create_graph=True` gives higher-order derivatives.
"""
from __future__ import annotations

import itertools
import threading
import weakref

from ..amp._state import autocast_state as _autocast
from ..amp._state import cast_inputs as _autocast_inputs
from .anomaly_mode import state as _anomaly
from .grad_mode import _state

_Tensor = None  # set by tinygrad_course.tensor (avoids a circular import)
_wrap = None

_sequence = itertools.count()


class _ModuleStack(threading.local):
    modules = ()


module_stack = _ModuleStack()  # nn.Module.__call__ pushes/pops; nodes remember it (for tc.viz)

# Active profilers (tc.profiler): each has record(name, fn, args, kwargs) that times one call.
profilers = []

_FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


class RemovableHandle:
    """Handle returned by `register_*hook`; `handle.remove()` unregisters the hook."""

    _ids = itertools.count()

    def __init__(self, hooks_dict):
        self.hooks_dict_ref = weakref.ref(hooks_dict) if hooks_dict is not None else (lambda: None)
        self.id = next(RemovableHandle._ids)

    def remove(self):
        hooks = self.hooks_dict_ref()
        if hooks is not None and self.id in hooks:
            del hooks[self.id]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _HookDict(dict):
    """A dict that can be weak-referenced (dict itself cannot)."""

    __slots__ = ("__weakref__",)


def add_hook(owner, attr, fn):
    """Store `fn` in the hook dict `owner.<attr>` (created on first use); return its handle."""
    hooks = getattr(owner, attr)
    if hooks is None:
        hooks = _HookDict()
        setattr(owner, attr, hooks)
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


def _op_name(node):
    """PyTorch names the op, not its node, in the version error: "Mul" for MulBackward0."""
    name = node.name()
    return name[:name.index("Backward")] if "Backward" in name else name


def _version_error(tensor, saved_version, node):
    desc = f"[{tensor.type()} [{', '.join(map(str, tensor.shape))}]]"
    if tensor.grad_fn is not None and tensor.grad_fn is not node:
        where = f", which is output {tensor._output_nr} of {_op_name(tensor.grad_fn)},"
    elif node is not None and tensor._base is None and tensor.grad_fn is None and not tensor._requires_grad:
        where = f", which is output 0 of {_op_name(node)},"
    else:
        where = ""
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        f"{desc}{where} is at version {tensor._version[0]}; expected version {saved_version} instead. "
        "Hint: the tensor was changed in place (e.g. x += 1, x.add_(...), x[i] = v) after the forward pass "
        "used it; compute a new tensor instead (x = x + 1) or clone it before modifying."
    )


class Node:
    """A node of the backward graph, i.e. a tensor's `grad_fn` (also the `ctx` of its `Function`)."""

    _fn = None  # the Function class whose backward this node runs

    # Defaults so that freshly created nodes need few attribute writes.
    _saved = ()
    _saved_versions = ()
    _released = False
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

    def name(self) -> str:
        """PyTorch's name for this node, e.g. "MulBackward0"."""
        return type(self).__name__

    def _sequence_nr(self) -> int:
        return self._seq

    # ---- saving tensors for backward ---------------------------------------------------------
    def save_for_backward(self, *tensors):
        """Save tensors that `backward` needs; read them back with `ctx.saved_tensors`."""
        self._saved = tensors
        self._saved_versions = [None if t is None else t._version[0] for t in tensors]

    @property
    def saved_tensors(self):
        """The tensors saved in forward; raises if freed or modified in place since."""
        if self._released:
            raise RuntimeError(_FREED_MESSAGE)
        for t, v in zip(self._saved, self._saved_versions):
            if t is not None and t._version[0] != v:
                raise _version_error(t, v, self)
        outs = self.__dict__.get("_saved_outputs")
        if outs and _state.enabled:  # create_graph: saved outputs must lead back to this node
            return tuple(self._relinked(t, outs[i]) if i in outs else t for i, t in enumerate(self._saved))
        return self._saved

    @property
    def saved_output(self):
        """The op's own output as saved in forward (built-in ops that set `ctx.save_output = True`)."""
        if self._released:
            raise RuntimeError(_FREED_MESSAGE)
        alias = self._out_alias
        if alias._version[0] != self._out_version:
            raise _version_error(alias, self._out_version, self)
        if _state.enabled:  # create_graph: the output must lead back to this node for higher derivatives
            return self._relinked(alias, 0)
        return alias

    def _relinked(self, saved, output_nr):
        """A tensor sharing a saved output's data whose grad_fn is this node again.

        Saved outputs are stored detached (a saved output holding its own grad_fn would be a
        reference cycle); double backward needs the link back, so it is restored on use, as
        PyTorch's SavedVariable does."""
        t = _wrap(saved._data)
        t._version = saved._version
        t._requires_grad = True
        t.grad_fn = self
        t._output_nr = output_nr
        return t

    def _release(self):
        self._saved = ()
        self._out_alias = None
        self._released = True

    def mark_dirty(self, *tensors):
        """Declare inputs modified in place by a custom `forward` (their version is bumped)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        """Declare outputs of a custom `forward` that have no gradient."""
        self._non_diff = tensors

    def set_materialize_grads(self, value: bool):
        """Whether `backward` receives zero tensors (True, default) or None for unused outputs."""
        self._materialize = value

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
        """Run this node's backward on the gradients of its outputs; one gradient per next_function."""
        fn = self._fn
        # (the engine never runs a node whose gradients are all None, so only multi-output nodes get here)
        if self._num_outputs > 1 and self._materialize and any(g is None for g in grad_outputs):
            grad_outputs = tuple(
                _Tensor._zeros_meta(meta) if g is None else g for g, meta in zip(grad_outputs, self._out_meta)
            )
        grads = fn.backward(self, *grad_outputs)
        if type(grads) is not tuple:
            grads = (grads,)
        positions = self._input_pos
        if len(grads) < self._num_args:
            if len(grads) == 1 and self._num_args > 1 and fn._check_grads:
                raise RuntimeError(
                    f"function {self.name()} returned an incorrect number of gradients "
                    f"(expected {self._num_args}, got {len(grads)})"
                )
            grads = grads + (None,) * (self._num_args - len(grads))
        elif len(grads) > self._num_args and fn._check_grads:
            if any(g is not None for g in grads[self._num_args:]):
                raise RuntimeError(
                    f"function {self.name()} returned an incorrect number of gradients "
                    f"(expected {self._num_args}, got {len(grads)})"
                )
        if positions is None:
            out = grads if len(grads) == self._num_args else grads[:self._num_args]
        else:
            out = tuple([grads[i] for i in positions])
        if fn._check_grads:
            out = tuple(self._validate_grad(i, g) for i, g in enumerate(out))
        return out

    __call__ = apply

    def _validate_grad(self, i, g):
        if g is None:
            return None
        if not isinstance(g, _Tensor):
            raise TypeError(f"function {self.name()} returned a gradient that is not a Tensor or None at index {i}")
        shape = self._in_shapes[i]
        if tuple(g.shape) != shape:
            try:
                from ..ops.broadcast_grad import sum_to_shape

                if g.ndim >= len(shape):
                    return sum_to_shape(g, shape)
            except Exception:
                pass
            raise RuntimeError(
                f"Function {self.name()} returned an invalid gradient at index {i} - got "
                f"[{', '.join(map(str, g.shape))}] but expected shape compatible with [{', '.join(map(str, shape))}]"
            )
        return g

    def __repr__(self):
        return f"<{self.name()} object at {hex(id(self))}>"


class AccumulateGrad(Node):
    """The node that accumulates a leaf tensor's gradient into `leaf.grad`."""

    def __init__(self, variable):
        self.variable = variable
        self._seq = float("inf")  # runs as soon as it is ready, like PyTorch's
        self.next_functions = ()

    def name(self):
        return "AccumulateGrad"

    def apply(self, *grads):
        raise RuntimeError("AccumulateGrad is run by the engine")


class _FunctionMeta(type):
    """Gives every Function subclass its own node class, named like PyTorch's."""

    def __init__(cls, name, bases, ns):
        super().__init__(name, bases, ns)
        node_name = ns.get("node_name") or f"{name}Backward"
        attrs = {"_fn": cls, "__module__": cls.__module__,
                 "view": getattr(cls, "view", False), "save_output": getattr(cls, "save_output", False)}
        cls._Node = type(node_name, (Node,), attrs)


class Function(metaclass=_FunctionMeta):
    """Base class for custom differentiable operations, like `torch.autograd.Function`.

    Subclasses define `forward(ctx, *args)` (computed without recording a graph) and
    `backward(ctx, *grad_outputs)` returning one gradient per forward argument (None for
    non-tensors), and are called through `MyFunction.apply(*args)`.
    """

    _check_grads = True
    _is_view = False

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
        Tensor = _Tensor
        needs = [isinstance(a, Tensor) and a._requires_grad for a in args]
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
            if isinstance(t, Tensor) and id(t) not in dirty:
                if any(t is a for a in args) or t.grad_fn is not None:
                    t = t.detach()  # a fresh output tensor, so the input keeps its own history
            results.append(t)
        _link(ctx, args, needs)
        ctx._num_outputs = len(outs)
        ctx._out_meta = [(t.shape, t.dtype, t.device) if isinstance(t, Tensor) else None for t in results]
        ctx._in_shapes = tuple(tuple(a.shape) for a in args if isinstance(a, Tensor))
        for i, t in enumerate(results):
            if isinstance(t, Tensor) and id(t) not in non_diff and t.dtype.is_floating_point:
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


def _broadcast_error(args, error):
    """PyTorch's RuntimeError for tensor arguments that do not broadcast (NumPy raises ValueError);
    other errors are returned unchanged."""
    if "broadcast" not in str(error):
        return error
    from ..ops._util import broadcast_shapes_checked

    try:
        broadcast_shapes_checked(*(a._data.shape for a in args if isinstance(a, _Tensor)))
    except RuntimeError as mismatch:
        return mismatch
    return error


def _link(ctx, args, needs):
    """Connect a new node to the graph: next_functions for each tensor argument."""
    Tensor = _Tensor
    nexts = []
    pos = []
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            pos.append(i)
            if needs[i]:
                if a._base is not None and a._view_version != a._version[0]:
                    a._refresh_view_history()  # its base was modified in place after the view was made
                fn = a.grad_fn
                nexts.append((fn, a._output_nr) if fn is not None else (a._grad_accumulator(), 0))
            else:
                nexts.append((None, 0))
    ctx.next_functions = tuple(nexts)
    # None: every argument is a tensor, so backward's gradients need no remapping (the common case)
    ctx._input_pos = None if len(pos) == len(args) else tuple(pos)
    ctx._num_args = len(args)
    ctx._seq = next(_sequence)
    ctx.modules = module_stack.modules
    if _anomaly.enabled:
        from .anomaly_mode import remember_forward

        remember_forward(ctx)


class Op(Function):
    """A built-in primitive: `forward` returns backend arrays, `backward` uses framework ops.

    Class options: `differentiable = False` for ops whose outputs never require grad;
    `view = True` when the output shares storage with input 0 (forward may override per call by
    setting `ctx.view`); forward may set `ctx.save_output = True` to keep its output for backward
    (read it back with `ctx.saved_output`), which avoids a reference cycle through the output.
    Multi-output ops return a tuple of arrays; `non_differentiable_outputs` lists output indices
    that never require grad (e.g. the indices of `max`).
    """

    _check_grads = False
    differentiable = True
    view = False
    save_output = False
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
            args = _autocast_inputs(cls, args)
        Tensor = _Tensor
        record = False
        if _state.enabled and cls.differentiable:
            for a in args:
                if isinstance(a, Tensor) and a._requires_grad:
                    record = True
                    break
        ctx = cls._Node()
        if record:
            ctx.needs_input_grad = tuple([isinstance(a, Tensor) and a._requires_grad for a in args])
        try:
            out = cls.forward(ctx, *args, **kwargs)
        except ValueError as e:
            error = _broadcast_error(args, e)
            if error is e:
                raise
            raise error from None
        wrap = _wrap
        if type(out) is tuple:
            results = tuple(wrap(o) for o in out)
        else:
            results = None
            res = wrap(out)
        if ctx.view:
            src = args[0]
            for r in (results if results is not None else (res,)):
                r._version = src._version
                r._view_version = src._version[0]
                r._base = src if src._base is None else src._base
        if not record:
            return res if results is None else results
        _link(ctx, args, ctx.needs_input_grad)
        if results is None:
            res._requires_grad = True
            res.grad_fn = ctx
            if ctx.save_output:
                ctx._out_alias = alias = wrap(out)
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
