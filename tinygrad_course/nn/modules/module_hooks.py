"""Calling a `Module` and its hooks, like `torch.nn.Module.__call__`: forward pre-hooks, `forward`, forward
hooks, and full backward (pre-)hooks that see the gradients of the module's inputs and outputs.
"""
from __future__ import annotations

from ...autograd.engine import Function, module_stack
from ...autograd.hooks import RemovableHandle
from ...autograd.grad_mode import is_grad_enabled
from ...tensor import Tensor


def _add_hook(hooks, fn, prepend=False):
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    if prepend:
        items = list(hooks.items())
        hooks.clear()
        hooks[handle.id] = fn
        hooks.update((k, v) for k, v in items if k != handle.id)
    return handle


class ModuleHooks:
    """The hook part of `Module`: registering hooks and running them around `forward` on each call."""

    def register_forward_pre_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False):
        """Call `hook(module, args)` before forward; it may return new args. Returns a removable handle."""
        handle = _add_hook(self._forward_pre_hooks, hook, prepend)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False, always_call=False):
        """Call `hook(module, args, output)` after forward; it may return a new output."""
        handle = _add_hook(self._forward_hooks, hook, prepend)
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        return handle

    def register_full_backward_hook(self, hook, prepend: bool = False):
        """Call `hook(module, grad_input, grad_output)` when the gradients w.r.t. the module's inputs are
        computed; it may return a new grad_input tuple."""
        return _add_hook(self._backward_hooks, hook, prepend)

    register_backward_hook = register_full_backward_hook

    def register_full_backward_pre_hook(self, hook, prepend: bool = False):
        """Call `hook(module, grad_output)` when the gradients w.r.t. the module's outputs are known;
        it may return a new grad_output tuple."""
        return _add_hook(self._backward_pre_hooks, hook, prepend)

    # ---- calling ------------------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or self._backward_pre_hooks:
            return self._call_with_hooks(args, kwargs)
        stack = module_stack
        old = stack.modules
        stack.modules = old + (self,)
        try:
            return self.forward(*args, **kwargs)
        finally:
            stack.modules = old

    def _call_with_hooks(self, args, kwargs):
        for hid, hook in list(self._forward_pre_hooks.items()):
            if hid in self._forward_pre_hooks_with_kwargs:
                res = hook(self, args, kwargs)
                if res is not None:
                    args, kwargs = res
            else:
                res = hook(self, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
        backward_state = None
        if (self._backward_hooks or self._backward_pre_hooks) and is_grad_enabled():
            backward_state = _BackwardHookState(self)
            args = backward_state.wrap_inputs(args)
        stack = module_stack
        old = stack.modules
        stack.modules = old + (self,)
        try:
            result = self.forward(*args, **kwargs)
        finally:
            stack.modules = old
        for hid, hook in list(self._forward_hooks.items()):
            if hid in self._forward_hooks_with_kwargs:
                res = hook(self, args, kwargs, result)
            else:
                res = hook(self, args, result)
            if res is not None:
                result = res
        if backward_state is not None:
            result = backward_state.wrap_outputs(result)
        return result


class _BackwardHookFunction(Function):
    """Identity on a group of tensors; its backward is where module backward hooks run."""

    node_name = "BackwardHookFunctionBackward"

    @staticmethod
    def forward(ctx, *tensors):
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return ctx.on_backward(grads)


class _BackwardHookState:
    """Connects one module call's inputs and outputs so full backward hooks see both gradients."""

    def __init__(self, module):
        self.module = module
        self.grad_outputs = None
        self.n_inputs = 0
        self.inputs_need_grad = False

    @staticmethod
    def _tensor_positions(values):
        return [i for i, v in enumerate(values) if isinstance(v, Tensor)]

    def wrap_inputs(self, args):
        pos = self._tensor_positions(args)
        self.n_inputs = len(pos)
        self.inputs_need_grad = any(args[i].requires_grad for i in pos)
        if not self.inputs_need_grad:
            return args
        outs = _apply_identity([args[i] for i in pos], self._on_input_grads)
        args = list(args)
        for i, t in zip(pos, outs):
            args[i] = t
        return tuple(args)

    def wrap_outputs(self, result):
        single = isinstance(result, Tensor)
        values = (result,) if single else result
        if not isinstance(values, tuple):
            return result
        pos = [i for i in self._tensor_positions(values) if values[i].requires_grad]
        if not pos:
            return result
        outs = _apply_identity([values[i] for i in pos], self._on_output_grads)
        values = list(values)
        for i, t in zip(pos, outs):
            values[i] = t
        return values[0] if single else tuple(values)

    def _on_output_grads(self, grads):
        for hook in list(self.module._backward_pre_hooks.values()):
            res = hook(self.module, grads)
            if res is not None:
                grads = tuple(res)
        self.grad_outputs = grads
        if not self.inputs_need_grad:
            grad_inputs = (None,) * max(self.n_inputs, 1)
            for hook in list(self.module._backward_hooks.values()):
                hook(self.module, grad_inputs, grads)
        return grads

    def _on_input_grads(self, grads):
        for hook in list(self.module._backward_hooks.values()):
            res = hook(self.module, grads, self.grad_outputs)
            if res is not None:
                if len(res) != len(grads):
                    raise RuntimeError(
                        f"Backward hook returned an invalid number of grad_input, got {len(res)}, but expected {len(grads)}"
                    )
                grads = tuple(res)
        return grads


def _apply_identity(tensors, on_backward):
    outs = _BackwardHookFunction.apply(*tensors)
    node = outs[0].grad_fn
    if type(node) is _BackwardHookFunction._Node:
        node.on_backward = on_backward
    return outs
