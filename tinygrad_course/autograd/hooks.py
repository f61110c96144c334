"""Hook storage shared by tensors, graph nodes and modules: `register_*hook` returns a `RemovableHandle`."""
from __future__ import annotations

import itertools
import weakref


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


class OutputHooks:
    """The hook dict of one output of a graph node (`node._tensor_pre_hooks[output_nr]`), shaped for `add_hook`:
    `Tensor.register_hook` on a non-leaf tensor stores its hook here."""

    def __init__(self, table, output_nr):
        self.table, self.output_nr = table, output_nr

    @property
    def hooks(self):
        return self.table.get(self.output_nr)

    @hooks.setter
    def hooks(self, value):
        self.table[self.output_nr] = value


def run_pre_hooks(node, grads, create_graph):
    """Hooks on the tensors this node made (`register_hook`, `retain_grad`), then the node's pre-hooks."""
    grads = list(grads)
    if node._tensor_pre_hooks:
        for nr, hooks in node._tensor_pre_hooks.items():
            for hook in list(hooks.values()):
                if grads[nr] is not None:
                    res = hook(grads[nr])
                    if res is not None:
                        grads[nr] = res
    if node._retain_hooks:
        for nr, ref in node._retain_hooks.items():
            t = ref()
            if t is not None and grads[nr] is not None:
                g = grads[nr] if create_graph else grads[nr].detach()
                t.grad = g.clone() if t.grad is None else t.grad + g
    if node._pre_hooks:
        for hook in list(node._pre_hooks.values()):
            res = hook(tuple(grads))
            if res is not None:
                grads = list(res)
    return grads
