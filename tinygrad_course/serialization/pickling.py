"""Pickling whole objects (`tc.save(model)`) with PyTorch's class paths, and unpickling them safely.

Tensors inside a pickled object are not pickled: they go into the checkpoint's tensor table (raw bytes,
like a state_dict's) and the pickle holds a reference to them. Classes with a PyTorch twin are written
under PyTorch's module path (`torch.nn.modules.linear.Linear`, see `twins.py`) and mapped back on loading.

With `weights_only=True` the unpickler allows only what PyTorch's weights-only unpickler allows by default
(containers, `OrderedDict`, `Parameter`, `Size`, dtypes, devices) plus the globals allow-listed with
`add_safe_globals` / `safe_globals`; anything else is refused with PyTorch's message naming the global.
"""
from __future__ import annotations

import contextlib
import importlib
import io
import pickle

from .._namespace import namespace
from .twins import OURS, TWINS

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals"]

# always allowed with weights_only=True (names as written in the file)
_DEFAULT_ALLOWED = frozenset({
    "builtins.set", "builtins.frozenset", "builtins.bytearray", "builtins.slice", "builtins.complex",
    "collections.OrderedDict", "collections.Counter", "_codecs.encode", "torch.nn.parameter.Parameter", "torch.Size",
    "tinygrad_course.dtypes._dtype_by_name", "tinygrad_course._backend.device",
    "tinygrad_course.autograd.hooks._HookDict",
})
_safe: list = []


def stream_name(obj) -> str:
    """The name `obj` (a class or function) has in a file written by `tc.save`."""
    name = f"{getattr(obj, '__module__', None)}.{getattr(obj, '__qualname__', getattr(obj, '__name__', obj))}"
    return TWINS.get(name, name)


def add_safe_globals(safe_globals) -> None:
    """Allow these classes/functions (or `(obj, "module.name")` pairs) when loading with `weights_only=True`,
    like `torch.serialization.add_safe_globals`."""
    _safe.extend(safe_globals)


def clear_safe_globals() -> None:
    """Forget every global added with `add_safe_globals`."""
    _safe.clear()


def get_safe_globals() -> list:
    """The globals added with `add_safe_globals` (and by enclosing `safe_globals` blocks)."""
    return list(_safe)


@contextlib.contextmanager
def safe_globals(safe_globals):
    """`with tc.serialization.safe_globals([MyClass]): tc.load(path)` allows them only inside the block."""
    n = len(_safe)
    _safe.extend(safe_globals)
    try:
        yield
    finally:
        del _safe[n:]


def _allowed_names() -> set:
    names = set(_DEFAULT_ALLOWED)
    for g in _safe:
        names.add(g[1] if isinstance(g, tuple) else stream_name(g))
    return names


def refusal(name: str) -> pickle.UnpicklingError:
    """PyTorch's weights-only refusal, naming the global to allow-list."""
    ns = namespace()
    return pickle.UnpicklingError(
        "Weights only load failed. This file can still be loaded, to do so you have two options, do those steps only "
        "if you trust the source of the checkpoint. \n\t(1) In PyTorch 2.6, we changed the default value of the "
        f"`weights_only` argument in `{ns}.load` from `False` to `True`. Re-running `{ns}.load` with `weights_only` "
        "set to `False` will likely succeed, but it can result in arbitrary code execution. Do it only if you got "
        "the file from a trusted source.\n\t(2) Alternatively, to load with `weights_only=True` please check the "
        "recommended steps in the following error message.\n\tWeightsUnpickler error: Unsupported global: GLOBAL "
        f"{name} was not an allowed global by default. Please use `{ns}.serialization.add_safe_globals([{name}])` "
        f"or the `{ns}.serialization.safe_globals([{name}])` context manager to allowlist this global if you trust "
        "this class/function.\n\nCheck the documentation of torch.load to learn more about types accepted by default "
        "with weights_only https://pytorch.org/docs/stable/generated/torch.load.html.\n"
        "Hint: a checkpoint of model.state_dict() loads with weights_only=True without any allow-listing.")


class TwinPickler(pickle._Pickler):
    """A pickler that writes PyTorch's paths for twin classes and stores tensors through `tensor_ref`."""

    def __init__(self, file, tensor_ref):
        super().__init__(file, protocol=4)
        self._tensor_ref = tensor_ref

    def persistent_id(self, obj):
        if hasattr(obj, "_data") and hasattr(obj, "grad_fn"):
            return ("tensor", self._tensor_ref(obj))
        return None

    def save_global(self, obj, name=None):
        theirs = TWINS.get(f"{getattr(obj, '__module__', None)}.{getattr(obj, '__qualname__', None)}")
        if theirs is None:
            return super().save_global(obj, name)
        module, _, qualname = theirs.rpartition(".")
        self.write(pickle.GLOBAL + f"{module}\n{qualname}\n".encode())
        self.memoize(obj)


def dumps(obj, tensor_ref) -> bytes:
    """Pickle `obj`; `tensor_ref(t)` stores a tensor elsewhere and returns its index."""
    buf = io.BytesIO()
    TwinPickler(buf, tensor_ref).dump(obj)
    return buf.getvalue()


class TwinUnpickler(pickle.Unpickler):
    """Maps PyTorch's paths back to the framework's classes; with `weights_only` allows only safe globals."""

    def __init__(self, file, tensor_at, weights_only):
        super().__init__(file)
        self._tensor_at = tensor_at
        self._allowed = _allowed_names() if weights_only else None

    def persistent_load(self, pid):
        if isinstance(pid, tuple) and len(pid) == 2 and pid[0] == "tensor":
            return self._tensor_at(pid[1])
        raise pickle.UnpicklingError(f"unknown persistent id {pid!r}")

    def find_class(self, module, name):
        full = f"{module}.{name}"
        if self._allowed is not None and full not in self._allowed:
            raise refusal(full)
        ours = OURS.get(full)
        if ours is not None:
            module, _, name = ours.rpartition(".")
            obj = importlib.import_module(module)
            for part in name.split("."):
                obj = getattr(obj, part)
            return obj
        return super().find_class(module, name)


def loads(data, tensor_at, weights_only: bool):
    """Unpickle `data`; `tensor_at(i)` gives the checkpoint's i-th tensor."""
    return TwinUnpickler(io.BytesIO(bytes(data)), tensor_at, weights_only).load()
