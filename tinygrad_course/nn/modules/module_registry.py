"""How a `Module` knows its parts, like `torch.nn.Module`: parameters, buffers and submodules are registered
when assigned as attributes (`__setattr__`) or with `register_parameter` / `register_buffer` / `add_module`,
and walked by `parameters()`, `named_modules()`, `get_submodule()` and friends.
"""
from __future__ import annotations

from ...seams import ACTIVE, component, learner, offer
from ...tensor import Tensor
from ..parameter import Parameter


def _typename(obj):
    return obj.type() if isinstance(obj, Tensor) else type(obj).__name__


class ModuleRegistry:
    """The registry part of `Module`: the `_parameters`, `_buffers` and `_modules` tables and their traversal."""

    @component("Module.register_parameter")
    def register_parameter(self, name: str, param) -> None:
        """Add a parameter (a `Parameter` or None) under `name`, with PyTorch's checks of the name and value
        (build mode's component: the learner's `Module.register_parameter`)."""
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
                f"explicitly. To express '{name}' as a function of another Tensor, compute the value in the "
                "forward() method."
            )
        self._parameters[name] = param

    @component("Module.register_buffer")
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

    @component("Module.register_module")
    def add_module(self, name: str, module) -> None:
        """Add a child module under `name` (same as assigning it as an attribute); `register_module` is its
        alias (build mode's component: the learner's `Module.register_module`)."""
        if module is not None and not isinstance(module, ModuleRegistry):
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
        if ACTIVE:  # build mode: the learner's Module.__setattr__ (an inline seam: no call when none is installed)
            mine = learner("Module.__setattr__")
            if mine is not None:
                return mine(self, name, value)
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
        elif isinstance(value, ModuleRegistry):
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
        if ACTIVE:  # build mode: the learner's Module.__getattr__ (inline: it runs on every parameter access)
            mine = learner("Module.__getattr__")
            if mine is not None:
                return mine(self, name)
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

    @component("Module.named_parameters")
    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """(name, parameter) pairs, recursively and each parameter once (shared ones are not repeated)."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    @component("Module.parameters")
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

    @component("Module.named_children")
    def named_children(self):
        """(name, module) pairs of the direct submodules."""
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    @component("Module.children")
    def children(self):
        """The direct submodules."""
        for _, m in self.named_children():
            yield m

    @component("Module.named_modules")
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

    @component("Module.modules")
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



# offered as components; their seams are inline (above), so `seams.reference` gives these methods themselves
offer("Module.__setattr__", ModuleRegistry.__setattr__)
offer("Module.__getattr__", ModuleRegistry.__getattr__)
