"""The autograd entry points of a tensor (chapter 02): `backward`, `register_hook`, `retain_grad`.

`binding.py` attaches these methods to `Tensor`; they live here, beside the engine they call.
"""
from __future__ import annotations

import weakref

from .engine import backward as run_backward
from .hooks import add_hook
from .node import AccumulateGrad


class AutogradMethods:
    """Tensor methods that reach into the autograd graph."""

    __slots__ = ()

    @property
    def retains_grad(self) -> bool:
        """True when a non-leaf tensor keeps its `.grad` (see `retain_grad`)."""
        fn = self.grad_fn
        return bool(fn is not None and fn._retain_hooks and self._output_nr in fn._retain_hooks)

    def retain_grad(self):
        """Keep `.grad` for this non-leaf tensor during backward (leaves always keep it)."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        fn = self.grad_fn
        if fn is None:
            return
        if fn._retain_hooks is None:
            fn._retain_hooks = {}
        fn._retain_hooks[self._output_nr] = weakref.ref(self)

    def register_hook(self, hook):
        """Call `hook(grad)` whenever this tensor's gradient is computed; it may return a new gradient."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        fn = self.grad_fn
        if fn is None:
            return add_hook(self, "_hooks", hook)
        if fn._tensor_pre_hooks is None:
            fn._tensor_pre_hooks = {}
        holder = _HookSlot(fn._tensor_pre_hooks, self._output_nr)
        return add_hook(holder, "hooks", hook)

    def _grad_accumulator(self):
        acc = self._grad_acc() if self._grad_acc is not None else None
        if acc is None:
            acc = AccumulateGrad(self)
            self._grad_acc = weakref.ref(acc)
        return acc

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute gradients of this tensor w.r.t. the graph leaves and accumulate them into `.grad`."""
        run_backward(self, None if gradient is None else (gradient,), retain_graph, create_graph, inputs=inputs)


class _HookSlot:
    """Adapter so a node's per-output hook dict can be created by `add_hook`."""

    def __init__(self, table, nr):
        self.table, self.nr = table, nr

    @property
    def hooks(self):
        return self.table.get(self.nr)

    @hooks.setter
    def hooks(self, value):
        self.table[self.nr] = value
