"""`tc.jit`: TorchScript is not part of this framework. `import tinygrad_course.jit` works, the helpers
that only mark code (`is_scripting`, `ignore`, `unused`) behave as in eager PyTorch, and compiling
(`script`, `trace`, `save`, `load`, ...) raises NotImplementedError saying what to use instead."""
from __future__ import annotations

__all__ = [
    "ScriptFunction",
    "ScriptModule",
    "compile",
    "export",
    "freeze",
    "ignore",
    "is_scripting",
    "is_tracing",
    "load",
    "optimize_for_inference",
    "save",
    "script",
    "trace",
    "trace_module",
    "unused",
]

_EAGER = "run the model eagerly (it is already a Python module)"


def _unsupported(name: str, instead: str):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"tc.jit.{name} is not supported: tinygrad_course has no TorchScript. "
                                  f"Instead, {instead}.")

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"`torch.jit.{name}`: not supported here; raises NotImplementedError ({instead})."
    return fn


script = _unsupported("script", _EAGER)
trace = _unsupported("trace", _EAGER)
trace_module = _unsupported("trace_module", _EAGER)
freeze = _unsupported("freeze", _EAGER)
optimize_for_inference = _unsupported("optimize_for_inference", _EAGER)
save = _unsupported("save", "save the weights with tc.save(model.state_dict(), path) (or the whole model with "
                            "tc.save(model, path))")
load = _unsupported("load", "load the weights with model.load_state_dict(tc.load(path))")


def export(fn):
    """`@torch.jit.export` marks a method for scripting; eagerly it changes nothing."""
    return fn


def ignore(drop=False, **kwargs):
    """`@torch.jit.ignore`: leaves the function as it is (eager code is never compiled)."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    """`@torch.jit.unused`: leaves the function as it is."""
    return fn


def is_scripting() -> bool:
    """False: code here is never running under TorchScript."""
    return False


def is_tracing() -> bool:
    """False: code here is never being traced."""
    return False


class ScriptModule:
    """Placeholder type so `isinstance(m, torch.jit.ScriptModule)` is False for every module."""


class ScriptFunction:
    """Placeholder type so `isinstance(f, torch.jit.ScriptFunction)` is False for every function."""


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,  # noqa: A001
            disable=False):
    """`torch.compile`: returns `model` unchanged (the framework always runs eagerly, and compiling never
    changes a result in PyTorch either); used as `@tc.compile` or `@tc.compile(mode=...)` it leaves the
    function as it is."""
    if model is None:
        return lambda fn: fn
    if not callable(model):
        raise RuntimeError(f"torch.compile: expected a callable (a module or function), got {type(model).__name__}")
    return model
