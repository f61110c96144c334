"""Graph nodes: a tensor's `grad_fn` (also the `ctx` its op's forward and backward receive) and
`AccumulateGrad`, the node that fills a leaf's `.grad`. Saved tensors and their version checks live here."""
from __future__ import annotations

import itertools
import threading

from ..seams import ACTIVE as _seams
from ..seams import backward_rule
from ..tensor import Tensor, _wrap
from .grad_mode import _state
from .hooks import add_hook
from .sum_to_shape import sum_to_shape

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
    _freed = False  # True once the engine has dropped the arrays the op's forward kept on this node
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
        if self._freed:
            raise RuntimeError(_FREED_MESSAGE)
        fn = self._fn
        # (the engine never runs a node whose gradients are all None, so only multi-output nodes get here)
        if self._num_outputs > 1 and self._materialize and any(g is None for g in grad_outputs):
            grad_outputs = tuple(
                Tensor._zeros_meta(meta) if g is None else g for g, meta in zip(grad_outputs, self._out_meta)
            )
        backward = fn.backward
        if _seams:  # build mode: a learner's backward rule for this op takes the reference's place
            backward = backward_rule(fn.__name__) or backward
        grads = backward(self, *grad_outputs)
        if type(grads) is not tuple:
            grads = (grads,)
        positions = self._input_pos
        n, got = self._num_args, len(grads)
        if got < n:
            if got == 1 and n > 1 and fn._check_grads:
                raise RuntimeError(
                    f"function {self.name()} returned an incorrect number of gradients "
                    f"(expected {n}, got {got})"
                )
            grads = grads + (None,) * (n - got)
        elif got > n and fn._check_grads:
            if any(g is not None for g in grads[n:]):
                raise RuntimeError(
                    f"function {self.name()} returned an incorrect number of gradients "
                    f"(expected {n}, got {got})"
                )
        if positions is None:
            out = grads if got == n else grads[:n]
        else:
            out = tuple([grads[i] for i in positions])
        if fn._check_grads:
            out = tuple(self._validate_grad(i, g) for i, g in enumerate(out))
        return out

    __call__ = apply

    def _validate_grad(self, i, g):
        if g is None:
            return None
        if not isinstance(g, Tensor):
            raise TypeError(f"function {self.name()} returned a gradient that is not a Tensor or None at index {i}")
        shape = self._in_shapes[i]
        if tuple(g.shape) != shape:
            try:
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
