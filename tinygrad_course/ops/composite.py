"""One graph node for a function composed of several ops, named as PyTorch names its fused kernel.

`mse_loss` is `mean((input - target) ** 2)` here, but PyTorch records a single `MseLossBackward0` node
whose `next_functions` lead straight to the inputs. `@recorded_as("MseLossBackward0")` gives the
composition that shape: forward runs the composition on detached copies of the inputs (keeping that
inner graph), and the node's backward differentiates the inner graph, so gradients are exactly the
composition's (`fused_backward`, which the engine uses when no graph of the backward is recorded). With
`create_graph=True` the backward recomputes the composition on the real inputs, so higher derivatives stay
connected to them.
"""
from __future__ import annotations

import functools

from ..autograd.engine import grad as _grad
from ..autograd.engine import Function
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..tensor_base import TensorBase


class _Composite(Function):
    """A composition of ops recorded as one node (see the module docstring)."""

    @staticmethod
    def forward(ctx, fn, kwargs, *args):
        leaves = [a.detach().requires_grad_(True) if isinstance(a, TensorBase) and a._requires_grad else a for a in args]
        with enable_grad():
            out = fn(*leaves, **kwargs)
        ctx.fn, ctx.kwargs, ctx.args = fn, kwargs, args
        ctx.inner = (out, leaves)
        return out.detach()

    @staticmethod
    def backward(ctx, grad_output):
        """The composition's gradients, differentiated afresh from the real inputs (so a graph of the backward
        leads back to them: higher derivatives)."""
        wanted = [i for i, a in enumerate(ctx.args) if isinstance(a, TensorBase) and a._requires_grad]
        with enable_grad():
            out = ctx.fn(*ctx.args, **ctx.kwargs)
        grads = _grad(out, [ctx.args[i] for i in wanted], grad_output, create_graph=True, allow_unused=True)
        return _by_position(ctx, wanted, grads)

    @staticmethod
    def fused_backward(ctx, grad_output):
        """The same gradients from the inner graph the forward kept (nothing recomputed), as arrays."""
        wanted = [i for i, a in enumerate(ctx.args) if isinstance(a, TensorBase) and a._requires_grad]
        out, leaves = ctx.inner
        grads = _grad(out, [leaves[i] for i in wanted], grad_output, retain_graph=True, allow_unused=True)
        return _by_position(ctx, wanted, [None if g is None else g._data for g in grads])


def _by_position(ctx, wanted, grads):
    """One gradient per argument of `forward(ctx, fn, kwargs, *args)`: `grads` at the tensors in `wanted`."""
    result = [None] * (2 + len(ctx.args))
    for i, g in zip(wanted, grads):
        result[2 + i] = g
    return tuple(result)


_CLASSES: dict[str, type] = {}


def recorded_as(node_name: str):
    """Decorator: record calls of a composite function as one node named `node_name` (e.g. "MseLossBackward0")."""
    cls = _CLASSES.get(node_name) or _CLASSES.setdefault(
        node_name, type(node_name.replace("Backward0", ""), (_Composite,), {"node_name": node_name,
                                                                            "__module__": __name__}))

    def decorate(fn):
        @functools.wraps(fn)
        def recorded(*args, **kwargs):
            if not is_grad_enabled() or not any(isinstance(a, TensorBase) and a._requires_grad
                                                for a in (*args, *kwargs.values())):
                return fn(*args, **kwargs)
            tensor_kwargs = {k: v for k, v in kwargs.items() if isinstance(v, TensorBase)}
            if tensor_kwargs:  # tensors passed by keyword become positional so the node sees them
                names = list(tensor_kwargs)
                plain = {k: v for k, v in kwargs.items() if k not in tensor_kwargs}

                def call(*a, **kw):
                    n = len(a) - len(names)
                    return fn(*a[:n], **dict(zip(names, a[n:])), **kw)
                return cls.apply(call, plain, *args, *tensor_kwargs.values())
            return cls.apply(fn, kwargs, *args)

        return recorded

    return decorate
