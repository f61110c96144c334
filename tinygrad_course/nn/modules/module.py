"""`Module`: the base class of every layer and model, like `torch.nn.Module`.

A module registers parameters, buffers and submodules when they are assigned as attributes, and
everything else (state dicts, `.to()`, `.train()`, hooks, `repr`) walks that registry.
"""
from __future__ import annotations

from collections import OrderedDict, namedtuple

from ...autograd.function import Function, RemovableHandle, _HookDict, module_stack
from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
from ..parameter import Parameter

__all__ = ["Module"]


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s, num_spaces):
    """Indent every line of `s` but the first (PyTorch's helper for nested reprs)."""
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(num_spaces * " " + line for line in lines)


def _typename(obj):
    return obj.type() if isinstance(obj, Tensor) else type(obj).__name__


def _add_hook(hooks, fn, prepend=False):
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    if prepend:
        items = list(hooks.items())
        hooks.clear()
        hooks[handle.id] = fn
        hooks.update((k, v) for k, v in items if k != handle.id)
    return handle


class Module:
    """Base class for all neural network modules; subclasses define `forward`.

    Assign `Parameter`s, submodules and buffers (`register_buffer`) as attributes in `__init__`
    after calling `super().__init__()`; call the module (`model(x)`) rather than `model.forward(x)`
    so that hooks run.
    """

    training: bool
    _version = 1

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        d["_forward_pre_hooks"] = _HookDict()
        d["_forward_pre_hooks_with_kwargs"] = {}
        d["_forward_hooks"] = _HookDict()
        d["_forward_hooks_with_kwargs"] = {}
        d["_backward_hooks"] = _HookDict()
        d["_backward_pre_hooks"] = _HookDict()

    def forward(self, *input):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    # ---- registration -------------------------------------------------------------------------------
    def register_parameter(self, name: str, param) -> None:
        """Add a parameter (a `Parameter` or None) under `name`."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(torch.nn.Parameter or None required). Hint: wrap it as nn.Parameter(tensor)."
            )
        if param is not None and param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                "explicitly. To express '{name}' as a function of another Tensor, compute the value in the "
                "forward() method."
            )
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        """Add a buffer: state that is not trained (e.g. running means); in the state dict if persistent."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' (torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module) -> None:
        """Add a child module under `name` (same as assigning it as an attribute)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {type(name).__name__}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_from(name, d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' (torch.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if params is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._remove_from(name, d, params, self._buffers, self._non_persistent_buffers_set)
            self._modules[name] = value
        elif params is not None and name in d["_modules"]:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' (torch.nn.Module or None expected)")
            self._modules[name] = value
        elif params is not None and name in d["_buffers"]:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' (torch.Tensor or None expected)")
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    @staticmethod
    def _remove_from(name, *containers):
        for c in containers:
            if name in c:
                if isinstance(c, set):
                    c.discard(name)
                else:
                    del c[name]

    def __getattr__(self, name):
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            t = d.get(table)
            if t is not None and name in t:
                return t[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for table in ("_parameters", "_buffers", "_modules"):
            t = self.__dict__.get(table)
            if t is not None and name in t:
                del t[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    # ---- traversal --------------------------------------------------------------------------------------
    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in get_members(module):
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield (module_prefix + ("." if module_prefix else "") + name, value)

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """(name, parameter) pairs, recursively and each parameter once (shared ones are not repeated)."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True):
        """All parameters (what an optimizer trains)."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """(name, buffer) pairs, recursively."""
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True):
        """All buffers."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_children(self):
        """(name, module) pairs of the direct submodules."""
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self):
        """The direct submodules."""
        for _, m in self.named_children():
            yield m

    def named_modules(self, memo=None, prefix: str = "", remove_duplicate: bool = True):
        """(name, module) pairs of this module and all below it, depth first ("" names this module)."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self):
        """This module and all modules below it."""
        for _, m in self.named_modules():
            yield m

    def get_submodule(self, target: str) -> "Module":
        """The submodule at dotted path `target` (e.g. "features.0")."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if item not in mod._modules:
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = mod._modules[item]
        return mod

    def get_parameter(self, target: str):
        """The parameter at dotted path `target` (e.g. "0.weight")."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if name not in mod._parameters:
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return mod._parameters[name]

    # ---- modes and conversions ------------------------------------------------------------------------
    def train(self, mode: bool = True):
        """Set training mode (dropout active, batch norm uses batch statistics) here and below."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            m.training = mode
        return self

    def eval(self):
        """Set evaluation mode (same as `train(False)`)."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True):
        """Set `requires_grad` of every parameter (freeze a model with `requires_grad_(False)`)."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters (to None by default, like PyTorch)."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                if p.grad.grad_fn is not None:
                    p.grad.detach_()
                else:
                    p.grad.requires_grad_(False)
                p.grad.zero_()

    def apply(self, fn):
        """Call `fn(module)` on every submodule (children first) and on this module; returns self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply(self, fn, floating_only=False):
        """Replace the data of every parameter, gradient and buffer by `fn(tensor)`, in place."""
        with no_grad():
            for m in self.modules():
                for table in (m._parameters, m._buffers):
                    for key, t in table.items():
                        if t is None or (floating_only and not t.is_floating_point()):
                            continue
                        t.data = fn(t)
                        if t.grad is not None:
                            t.grad.data = fn(t.grad)
        return self

    def to(self, *args, **kwargs):
        """Move parameters and buffers to a device and/or cast floating ones to a dtype, in place."""
        from ... import dtypes as _dt

        dtype = kwargs.get("dtype")
        device = kwargs.get("device")
        for a in args:
            if isinstance(a, _dt.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                dtype, device = a.dtype, a.device
            else:
                device = a
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dtype}")

        def convert(t):
            if t.is_floating_point():
                return t.to(dtype=dtype, device=device)
            return t.to(device=device)

        return self._apply(convert)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda" if device is None else device)

    def float(self):
        from ... import dtypes as _dt

        return self.to(_dt.float32)

    def double(self):
        from ... import dtypes as _dt

        return self.to(_dt.float64)

    def half(self):
        from ... import dtypes as _dt

        return self.to(_dt.float16)

    # ---- state dict -------------------------------------------------------------------------------------
    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        """An ordered dict of parameters and persistent buffers by dotted name (detached unless keep_vars)."""
        if args:
            destination = args[0] if len(args) > 0 else destination
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs, assign=False):
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in list(self._parameters.items()) + list(persistent.items()) if v is not None}
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like object from '
                    f"checkpoint but received {type(value)}"
                )
                continue
            if tuple(value.shape) != tuple(param.shape):
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape {value.shape} from checkpoint, "
                    f"the shape in current model is {param.shape}."
                )
                continue
            try:
                with no_grad():
                    if assign:
                        new = value if not isinstance(param, Parameter) else Parameter(value, param.requires_grad)
                        setattr(self, name, new)
                    else:
                        param.copy_(value)
            except Exception as ex:
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model are {param.shape} '
                    f"and whose dimensions in the checkpoint are {value.shape}, an exception occurred : {ex.args}."
                )
        if strict:
            for key in state_dict.keys():
                if key.startswith(prefix):
                    input_name = key[len(prefix):].split(".", 1)
                    if input_name[0] in self._modules:
                        continue  # a child's key: the child checks it
                    if input_name[0] not in local_state or len(input_name) > 1:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copy parameters and buffers from `state_dict`; with strict=True keys must match exactly.

        Returns a named tuple `(missing_keys, unexpected_keys)`; raises RuntimeError listing all
        problems (missing/unexpected keys, size mismatches) the way PyTorch does.
        """
        if not isinstance(state_dict, dict):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []

        def load(module, prefix=""):
            module._load_from_state_dict(state_dict, prefix, {}, True, missing, unexpected, errors, assign)
            for name, child in module._modules.items():
                if child is not None:
                    load(child, prefix + name + ".")

        load(self)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(type(self).__name__, "\n\t".join(errors))
            )
        return _IncompatibleKeys(missing, unexpected)

    # ---- hooks --------------------------------------------------------------------------------------------
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
        if (self._backward_hooks or self._backward_pre_hooks) and _grad_enabled():
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

    # ---- printing -----------------------------------------------------------------------------------------
    def _get_name(self):
        return type(self).__name__

    def extra_repr(self) -> str:
        """Extra text shown inside this module's parentheses in `repr` (override in layers)."""
        return ""

    def __repr__(self):
        extra_lines = []
        extra = self.extra_repr()
        if extra:
            extra_lines = extra.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            child_lines.append("(" + key + "): " + _addindent(repr(module), 2))
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def __dir__(self):
        keys = list(object.__dir__(self)) + list(self._parameters) + list(self._modules) + list(self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())


def _grad_enabled():
    from ...autograd.grad_mode import _state

    return _state.enabled


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
