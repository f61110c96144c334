"""Detecting a learner who calls the framework's (or NumPy's) own implementation instead of writing it."""
from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import types

from .source_shortcuts import function_violations


class ShortcutUsed(Exception):
    """The learner's code called a function the exercise asks them to write themselves."""


def learner_functions(objects) -> list[types.FunctionType]:
    """The Python functions behind learner objects: functions, methods of classes, helpers they call."""
    found: list[types.FunctionType] = []

    def add(fn):
        fn = inspect.unwrap(fn) if callable(fn) else fn
        if isinstance(fn, types.FunctionType) and fn not in found:
            found.append(fn)
            for name in fn.__code__.co_names:  # one level of user-defined helpers
                helper = fn.__globals__.get(name)
                if isinstance(helper, types.FunctionType) and helper.__module__ == fn.__module__ and helper not in found:
                    found.append(helper)

    for obj in objects:
        if inspect.isclass(obj):
            for value in vars(obj).values():
                add(value.__func__ if isinstance(value, (staticmethod, classmethod)) else value)
        else:
            add(obj)
    return found


def static_violations(objects, forbidden) -> list[str]:
    """Forbidden implementations the learner's functions reach (resolved by scope, see source_shortcuts)."""
    return function_violations(learner_functions(objects), forbidden) if objects and forbidden else []


def _resolve(dotted: str):
    """(owner object, attribute name) for a dotted path such as 'numpy.linalg.norm', or None."""
    parts = dotted.split(".")
    for split in range(len(parts) - 1, 0, -1):
        try:
            owner = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        try:
            for attr in parts[split:-1]:
                owner = getattr(owner, attr)
            getattr(owner, parts[-1])
        except AttributeError:
            return None
        return owner, parts[-1]
    return None


class Tripwire:
    """Counts calls to forbidden functions made while a guarded learner function is running."""

    def __init__(self, forbidden):
        self.forbidden = list(forbidden)
        self.depth = 0
        self.hits: list[str] = []

    def guard(self, obj):
        """Wrap a learner function so that forbidden calls during it are recorded (classes pass unchanged)."""
        if not isinstance(obj, types.FunctionType) or not self.forbidden:
            return obj

        @functools.wraps(obj)
        def guarded(*args, **kwargs):
            self.depth += 1
            try:
                return obj(*args, **kwargs)
            finally:
                self.depth -= 1
        return guarded

    @contextlib.contextmanager
    def armed(self):
        """Replace each forbidden function by a recording wrapper for the duration of the block."""
        restore = []
        for name in self.forbidden:
            target = _resolve(name)
            if target is None:
                continue
            owner, attr = target
            original = getattr(owner, attr)
            setattr(owner, attr, self._wire(name, original))
            restore.append((owner, attr, original))
        try:
            yield self
        finally:
            for owner, attr, original in reversed(restore):
                setattr(owner, attr, original)

    def _wire(self, name, original):
        @functools.wraps(original)
        def wire(*args, **kwargs):
            if self.depth and name not in self.hits:
                self.hits.append(name)
            return original(*args, **kwargs)
        return wire
