"""Gradient recording switches: `no_grad`, `enable_grad`, `set_grad_enabled`, `inference_mode`.

Each works as a context manager and as a function decorator, like PyTorch's. The flag is
thread-local, as in PyTorch.
"""
from __future__ import annotations

import functools
import threading


class _GradState(threading.local):
    enabled = True


_state = _GradState()


def is_grad_enabled() -> bool:
    """True when operations are currently recorded for autograd."""
    return _state.enabled


class _GradModeContext:
    """Base for the grad-mode context managers; also usable as a decorator."""

    _target = True

    def __enter__(self):
        self._prev = _state.enabled
        _state.enabled = self._target
        return None

    def __exit__(self, *exc):
        _state.enabled = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradModeContext):
    """Context manager / decorator that disables gradient recording, like `torch.no_grad`."""

    _target = False


class enable_grad(_GradModeContext):
    """Context manager / decorator that enables gradient recording, like `torch.enable_grad`."""

    _target = True


class inference_mode(_GradModeContext):
    """Like `torch.inference_mode` (here the same as `no_grad`)."""

    def __init__(self, mode: bool = True):
        self._target = not mode

    def __call__(self, fn):
        mode = not self._target

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(mode):
                return fn(*args, **kwargs)

        return wrapper


class set_grad_enabled(_GradModeContext):
    """Enable or disable gradients: as a function call, a context manager or a decorator."""

    def __init__(self, mode: bool):
        self._prev = _state.enabled
        self._target = bool(mode)
        _state.enabled = self._target

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _state.enabled = self._prev
        return False

    def __call__(self, fn):
        _state.enabled = self._prev
        mode = self._target

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)

        return wrapper
