"""Containers: `Sequential`, `ModuleList`, `ModuleDict` (like PyTorch's)."""
from __future__ import annotations

import operator
from collections import OrderedDict

from .module import Module, _addindent

__all__ = ["Sequential", "ModuleList", "ModuleDict"]


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

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[self._position(idx)]

    def __setitem__(self, idx, module):
        key = list(self._modules.keys())[self._position(idx)]
        setattr(self, key, module)

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input


class ModuleList(_NumberedModules):
    """A list of submodules that are registered (their parameters are the list's parameters)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(self._position(idx))]

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
        self._modules.clear()

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        """Add modules from a dict/ModuleDict or an iterable of (key, module) pairs."""
        items = modules.items() if hasattr(modules, "items") else modules
        for key, m in items:
            self[key] = m

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleDict is not callable; index it by key and call the module instead.")
