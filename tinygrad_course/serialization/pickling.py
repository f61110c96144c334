"""Pickling whole objects (`tc.save(model)`) with PyTorch's class paths, and unpickling them safely.

Tensors inside a pickled object are not pickled: they go into the checkpoint's tensor table (raw bytes,
like a state_dict's) and the pickle holds a reference to them. Classes with a PyTorch twin are written
under PyTorch's module path (`torch.nn.modules.linear.Linear`, see `twins.py`) and mapped back on loading.

With `weights_only=True` the unpickler allows only what PyTorch's weights-only unpickler allows by default
(containers, `OrderedDict`, `Parameter`, `Size`, dtypes, devices) plus the globals allow-listed with
`add_safe_globals` / `safe_globals`; anything else is refused with PyTorch's message naming the global.
Like PyTorch's, it also refuses to set the state of (BUILD) an object whose class is not allowed, such as
the `numpy.dtypes.Float64DType` of a NumPy array's dtype. NumPy arrays and scalars that the checkpoint
stores as raw data are vetted the same way (`vet`), so they load exactly when PyTorch would load them.
"""
from __future__ import annotations

import _compat_pickle
import contextlib
import importlib
import io
import pickle

from .._namespace import namespace
from .twins import OURS, TWINS

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals", "vet"]

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


def _allowed_objects() -> list:
    return [g[0] if isinstance(g, tuple) else g for g in _safe]


def _as_learner_writes_it(name: str, ns: str) -> str:
    """The object to allow-list as the running program can name it: a twin class the file names by PyTorch's
    path (`torch.nn.modules.container.Sequential`) is the framework's own class under `tc.` unless the
    framework stands in for torch."""
    ours = OURS.get(name)
    if ours is None or ns == "torch":
        return name
    module, _, attr = ours.rpartition(".")
    return f"{ns}{module[len(__package__.partition('.')[0]):]}.{attr}"


def refusal(name: str) -> pickle.UnpicklingError:
    """PyTorch's weights-only refusal, naming the global to allow-list (builtins without `builtins.`)."""
    ns = namespace()
    name = name[len("builtins."):] if name.startswith("builtins.") else name
    allow = _as_learner_writes_it(name, ns)
    twin = (f"the file names {allow} by PyTorch's path, so that torch.load reads it too; " if allow != name else "")
    return pickle.UnpicklingError(
        "Weights only load failed. This file can still be loaded, to do so you have two options, do those steps only "
        "if you trust the source of the checkpoint. \n\t(1) In PyTorch 2.6, we changed the default value of the "
        f"`weights_only` argument in `{ns}.load` from `False` to `True`. Re-running `{ns}.load` with `weights_only` "
        "set to `False` will likely succeed, but it can result in arbitrary code execution. Do it only if you got "
        "the file from a trusted source.\n\t(2) Alternatively, to load with `weights_only=True` please check the "
        "recommended steps in the following error message.\n\tWeightsUnpickler error: Unsupported global: GLOBAL "
        f"{name} was not an allowed global by default. Please use `{ns}.serialization.add_safe_globals([{allow}])` "
        f"or the `{ns}.serialization.safe_globals([{allow}])` context manager to allowlist this global if you trust "
        "this class/function.\n\nCheck the documentation of torch.load to learn more about types accepted by default "
        "with weights_only https://pytorch.org/docs/stable/generated/torch.load.html.\n"
        f"Hint: {twin}a checkpoint of model.state_dict() loads with weights_only=True without any allow-listing.")


def build_refusal(cls) -> pickle.UnpicklingError:
    """PyTorch's weights-only refusal to set the state of an instance of `cls` (a class not allow-listed)."""
    ns = namespace()
    name = stream_name(cls)
    return pickle.UnpicklingError(
        "Weights only load failed. In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
        f"`{ns}.load` from `False` to `True`. Re-running `{ns}.load` with `weights_only` set to `False` will likely "
        "succeed, but it can result in arbitrary code execution. Do it only if you got the file from a trusted "
        "source.\nPlease file an issue with the following so that we can make `weights_only=True` compatible with "
        "your use case: WeightsUnpickler error: \n\nCan only build Tensor, Parameter, OrderedDict or types "
        f"allowlisted via `add_safe_globals`, but got <class '{name}'>\n\nCheck the documentation of torch.load "
        "to learn more about types accepted by default with weights_only "
        "https://pytorch.org/docs/stable/generated/torch.load.html.\n"
        f"Hint: allow-list the class with `{ns}.serialization.add_safe_globals([{name}])` if you trust the file.")


class TwinPickler(pickle._Pickler):
    """A pickler that writes PyTorch's paths for twin classes and stores tensors through `tensor_ref`."""

    def __init__(self, file, tensor_ref):
        super().__init__(file, protocol=4)
        self._tensor_ref = tensor_ref

    dispatch = dict(pickle._Pickler.dispatch)

    def save_bytes(self, obj):
        if obj:
            return pickle._Pickler.save_bytes(self, obj)
        return self.save_reduce(bytes, (), obj=obj)  # as PyTorch's protocol 2: `bytes` must be allowed to load it

    dispatch[bytes] = save_bytes

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


class _TwinLoading:
    """Maps PyTorch's paths back to the framework's classes; with `weights_only` allows only safe globals."""

    def __init__(self, file, tensor_at, weights_only):
        super().__init__(file)
        self._tensor_at = tensor_at
        self._allowed = _allowed_names() if weights_only else None

    def persistent_load(self, pid):
        if self._tensor_at is not None and isinstance(pid, tuple) and len(pid) == 2 and pid[0] == "tensor":
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


class TwinUnpickler(_TwinLoading, pickle.Unpickler):
    """The unpickler of `weights_only=False`: every global loads (PyTorch's paths mapped to ours)."""


class WeightsOnlyUnpickler(_TwinLoading, pickle._Unpickler):
    """The unpickler of `weights_only=True`: allowed globals only, and, as in PyTorch's weights-only unpickler,
    BUILD (setting an object's state) only on instances of allowed classes."""

    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, file, tensor_at):
        super().__init__(file, tensor_at, True)
        self._objects = _allowed_objects()

    def find_class(self, module, name):
        if self.proto < 3:  # a protocol-2 pickle's Python 2 names (`__builtin__.bytes`), read as pickle reads them
            if (module, name) in _compat_pickle.NAME_MAPPING:
                module, name = _compat_pickle.NAME_MAPPING[(module, name)]
            elif module in _compat_pickle.IMPORT_MAPPING:
                module = _compat_pickle.IMPORT_MAPPING[module]
        return super().find_class(module, name)

    def load_build(self):
        cls = type(self.stack[-2])
        if stream_name(cls) not in self._allowed and not any(cls is obj for obj in self._objects):
            raise build_refusal(cls)
        pickle._Unpickler.load_build(self)

    dispatch[pickle.BUILD[0]] = load_build


def loads(data, tensor_at, weights_only: bool):
    """Unpickle `data`; `tensor_at(i)` gives the checkpoint's i-th tensor."""
    file = io.BytesIO(bytes(data))
    if weights_only:
        return WeightsOnlyUnpickler(file, tensor_at).load()
    return TwinUnpickler(file, tensor_at, False).load()


def vet(obj) -> None:
    """Refuse `obj` (a NumPy array or scalar the checkpoint stores as raw data) with `weights_only=True` exactly
    as PyTorch's weights-only unpickler refuses it: pickled as `torch.save` pickles it (protocol 2), every global
    it names and every class it builds must be allowed. Pass a stand-in of the same dtype (and emptiness)."""
    WeightsOnlyUnpickler(io.BytesIO(pickle.dumps(obj, protocol=2)), None).load()
