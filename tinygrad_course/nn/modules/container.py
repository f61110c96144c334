"""Containers: `Sequential`, `ModuleList`, `ModuleDict`, `ParameterList`, `ParameterDict` (like PyTorch's)."""
from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable

from ...seams import ACTIVE, component, learner, offer
from ...tensor import Tensor
from ..parameter import Parameter
from .module import Module, _addindent

__all__ = ["Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


class Container(Module):
    """PyTorch's oldest container: each keyword argument becomes a named submodule."""

    def __init__(self, **kwargs):
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


class _NumberedModules(Module):
    """What Sequential and ModuleList share: submodules kept in order under the keys "0", "1", ..."""

    def _position(self, idx) -> int:
        n = len(self)
        idx = operator.index(idx)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return idx % n

    def _renumber(self, modules):
        self._modules.clear()
        for i, m in enumerate(modules):
            self.add_module(str(i), m)

    def __delitem__(self, idx):
        modules = list(self._modules.values())
        if isinstance(idx, slice):
            del modules[idx]
        else:
            del modules[self._position(idx)]
        self._renumber(modules)  # the keys become 0..n-1 again, as in PyTorch

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        """Add `module` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        """Append every module of an iterable; returns self."""
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        """Insert `module` before position `index`."""
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._renumber(modules)
        return self


class Sequential(_NumberedModules):
    """Modules applied one after another: `Sequential(nn.Linear(2, 3), nn.ReLU())(x)`.

    Also accepts an OrderedDict of named modules. Supports indexing, slicing (a new Sequential),
    `len`, iteration and `append`.
    """

    @component("Sequential.__init__")
    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    @component("Sequential.__getitem__")
    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[self._position(idx)]

    def __setitem__(self, idx, module):
        key = list(self._modules.keys())[self._position(idx)]
        setattr(self, key, module)

    def forward(self, input):
        """Feed `input` through each module in order; returns the last output."""
        if ACTIVE:  # build mode: the learner's Sequential.forward (an inline seam: it runs on every forward pass)
            mine = learner("Sequential.forward")
            if mine is not None:
                return mine(self, input)
        for module in self._modules.values():
            input = module(input)
        return input


offer("Sequential.forward", Sequential.forward)


class ModuleList(_NumberedModules):
    """A list of submodules that are registered (their parameters are the list's parameters)."""

    @component("ModuleList.__init__")
    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    @component("ModuleList.__getitem__")
    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(self._position(idx))]

    @component("ModuleList.__len__")
    def __len__(self):
        return len(self._modules)

    @component("ModuleList.__iter__")
    def __iter__(self):
        return iter(self._modules.values())

    @component("ModuleList.append")
    def append(self, module):
        """Add `module` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    @component("ModuleList.extend")
    def extend(self, modules):
        """Append every module of an iterable (PyTorch's TypeError otherwise); returns self."""
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got " + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self

    def __setitem__(self, idx, module):
        setattr(self, str(self._position(idx)), module)

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        return ModuleList(list(self) + list(other))

    def __repr__(self):
        reprs = [repr(item) for item in self]
        if not reprs:
            return self._get_name() + "()"
        spans, blocks = [[0, 0]], [reprs[0]]
        for i, r in enumerate(reprs[1:], 1):
            if r == blocks[-1]:
                spans[-1][1] += 1
                continue
            spans.append([i, i])
            blocks.append(r)
        lines = []
        for (start, end), b in zip(spans, blocks):
            local = f"({start}): {b}" if start == end else f"({start}-{end}): {end - start + 1} x {b}"
            lines.append(_addindent(local, 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def forward(self, *args, **kwargs):
        """Not callable, like PyTorch: iterate over the list and call each module."""
        raise NotImplementedError("ModuleList is not callable; iterate over it and call each module instead.")


class ModuleDict(Module):
    """A dict of submodules that are registered (keys are strings)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        """Remove every module."""
        self._modules.clear()

    def pop(self, key):
        """Remove the module under `key` and return it."""
        v = self[key]
        del self[key]
        return v

    def keys(self):
        """The keys, in insertion order."""
        return self._modules.keys()

    def items(self):
        """(key, module) pairs, in insertion order."""
        return self._modules.items()

    def values(self):
        """The modules, in insertion order."""
        return self._modules.values()

    def update(self, modules):
        """Add modules from a dict/ModuleDict or an iterable of (key, module) pairs."""
        items = modules.items() if hasattr(modules, "items") else modules
        for key, m in items:
            self[key] = m

    def forward(self, *args, **kwargs):
        """Not callable, like PyTorch: index by key and call the module."""
        raise NotImplementedError("ModuleDict is not callable; index it by key and call the module instead.")


def _describe(value, type_name):
    """One line of ParameterList/ParameterDict's repr, as PyTorch writes it."""
    if isinstance(value, Tensor):
        size = "x".join(str(s) for s in value.shape)
        device = f" ({value.device})" if value.device.type == "cuda" else ""
        kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
        return f"{kind} containing: [{type_name(value)} of size {size}{device}]"
    return f"Object of type: {type(value).__name__}"


def _as_parameter(value):
    """Tensors become Parameters (as PyTorch's containers do); other objects are stored as they are."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


class ParameterList(Module):
    """A list of parameters that are registered (under the names "0", "1", ...): `model.parameters()` sees them."""

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _position(self, idx) -> int:
        idx = operator.index(idx)
        if not -len(self) <= idx < len(self):
            raise IndexError(f"index {idx} is out of range")
        return idx % len(self)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)([self[i] for i in range(len(self))[idx]])
        return getattr(self, str(self._position(idx)))

    def __setitem__(self, idx, param):
        setattr(self, str(self._position(idx)), _as_parameter(param))

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def append(self, value):
        """Add one parameter at the end; returns self."""
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values):
        """Append every parameter of an iterable; returns self."""
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return "\n".join(f"  ({k}): {_describe(p, lambda t: str(t.dtype))}" for k, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """A dict of parameters that are registered under their (string) keys, in insertion order."""

    def __init__(self, parameters=None):
        super().__init__()
        self._keys: dict = {}
        if parameters is not None:
            self.update(parameters)

    def _check_key(self, key):
        if not isinstance(key, str):
            raise TypeError(f"Index given to ParameterDict cannot be used as a key as it is not a string "
                            f"(type is '{type(key).__name__}'). Open an issue on github if you need non-string keys.")

    def __getitem__(self, key):
        self._check_key(key)
        return getattr(self, key)

    def __setitem__(self, key, value):
        self._check_key(key)
        self._keys[key] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, key)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(list(self._keys))

    def __contains__(self, key):
        return key in self._keys

    def keys(self):
        """The keys, in insertion order."""
        return self._keys.keys()

    def values(self):
        """The parameters, in insertion order."""
        return [self[k] for k in self._keys]

    def items(self):
        """(key, parameter) pairs, in insertion order."""
        return [(k, self[k]) for k in self._keys]

    def get(self, key, default=None):
        """The parameter under `key`, or `default` if there is none."""
        return self[key] if key in self else default

    def pop(self, key):
        """Remove `key` and return its parameter."""
        value = self[key]
        del self[key]
        return value

    def clear(self):
        """Remove every parameter."""
        for k in list(self._keys):
            del self[k]

    def setdefault(self, key, default=None):
        """The parameter under `key`, first storing `default` there if the key is new."""
        if key not in self:
            self[key] = default
        return self[key]

    def copy(self):
        """A new ParameterDict holding the same parameters."""
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def update(self, parameters):
        """Add parameters from a mapping or an iterable of (key, parameter) pairs."""
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            items = parameters.items()
        elif hasattr(parameters, "items"):
            items = sorted(parameters.items())  # a plain mapping: PyTorch adds its keys in sorted order
        else:
            items = parameters
        for key, value in items:
            self[key] = value

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return "\n".join(f"  ({k}): {_describe(p, lambda t: t.type())}" for k, p in self.items())

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterDict should not be called.")
