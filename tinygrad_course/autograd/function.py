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

from ..shapes import broadcast_shapes_checked
from ..tensor import Tensor, _wrap
from .anomaly_mode import remember_forward
from .anomaly_mode import state as _anomaly
from .autocast_state import autocast_state as _autocast
from .grad_mode import _state
from .hooks import RemovableHandle, _HookDict, add_hook  # noqa: F401  (importers of the old single module)
from .node import AccumulateGrad, Node, _sequence, module_stack, profilers  # noqa: F401


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
    try:
        broadcast_shapes_checked(*(a._data.shape for a in args if isinstance(a, Tensor)))
    except RuntimeError as mismatch:
        return mismatch
    return error


def _link(ctx, args, needs):
    """Connect a new node to the graph: next_functions for each tensor argument."""
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
            args = _autocast.cast_inputs(cls, args)
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
        _link(ctx, args, ctx.needs_input_grad)
        if results is None:
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
