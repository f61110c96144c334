"""The seam where a learner's component takes the place of the framework's own (build mode).

A *component* is a named piece of the framework that a learner writes in an exercise: a function such as
`"sum_to_shape"`, an op such as `"Mul"` (its forward and backward), a backward rule such as `"Mul.backward"`,
a method such as `"Linear.forward"`. The framework never calls such a piece directly. Functions and methods
are wrapped by `@component(name)`, ops (`Op._apply`) look a learner's op up by the op's name and the graph
nodes a backward rule, so that while a learner's implementation is installed under that name it runs
instead of the reference:

    seams.install("sum_to_shape", my_sum_to_shape)   # the learner's code now runs inside backward
    seams.uninstall("sum_to_shape")                  # and the reference again

This module sits at the bottom of the package and imports nothing from it, so every layer can offer
components without importing a layer above it, and swapping one needs no monkey-patching. `calls()`
counts how often each installed component ran since `reset_calls()` (the build-mode status table).

Methods on the hottest paths (`Tensor.__add__`, `Tensor.view`, ...) are *slots* instead: the class offers
them with `offer_methods(Tensor, names, "Tensor.")`, and installing one replaces the class attribute itself
(restored by `uninstall`), so that a method call costs nothing extra while nothing is installed.
"""
from __future__ import annotations

import contextlib
import functools

ACTIVE: dict = {}  # name -> the learner's implementation currently installed
_calls: dict = {}
_known: dict = {}  # name -> the reference implementation, for every component the framework offers
_slots: dict = {}  # name -> (class, attribute, the class's own value or _ABSENT), for the slots classes offer
_ABSENT = object()  # a slot whose class inherits the method (uninstalling deletes the class's attribute)


def component(name):
    """Decorator: make a function or method a swappable component called `name` (the reference stays the
    decorated code; `install(name, fn)` replaces it until `uninstall`)."""

    def wrap(reference):
        _known[name] = reference

        @functools.wraps(reference)
        def dispatch(*args, **kwargs):
            if ACTIVE:
                implementation = learner(name)
                if implementation is not None:
                    return implementation(*args, **kwargs)
            return reference(*args, **kwargs)

        dispatch.component_name = name
        return dispatch

    return wrap


def member(name):
    """Decorator for the methods of a class that a learner writes as one component `name` (the optimizer's
    base class `Optimizer`, the scheduler's `LRScheduler`): while one is installed, a decorated method runs
    the learner's method of the same name on the framework's own object, as
    `ACTIVE[name](method_name, self, *args, **kwargs)`; `reference("<name>.<method>")` is the reference."""

    def wrap(reference):
        method = reference.__name__
        _known[f"{name}.{method}"] = reference

        @functools.wraps(reference)
        def dispatch(*args, **kwargs):
            if ACTIVE:
                implementation = learner(name)
                if implementation is not None:
                    return implementation(method, *args, **kwargs)
            return reference(*args, **kwargs)

        dispatch.component_name = name
        return dispatch

    return wrap


def backward_rule(name):
    """The learner's backward rule installed as `"<Op>.backward"` (`name` is the op's class name), or None.
    Graph nodes call this before their op's own backward."""
    return learner(name + ".backward")


def count_call(name: str) -> None:
    """Count one run of installed component `name` (for components that are not `@component` functions,
    such as a learner's op, which `Op._apply` looks up by its name)."""
    _calls[name] = _calls.get(name, 0) + 1


def offer(name: str, reference) -> None:
    """Offer component `name` whose seam the framework writes itself: an op that `Op._apply` looks up by
    name, or an inline `if ACTIVE:` then `learner(name)` on a hot path (nothing more is called while no
    component is installed). `reference` is what runs when none is installed or the learner's raises."""
    _known[name] = reference


def offer_methods(cls, names, prefix: str) -> None:
    """Offer the methods `names` of `cls` as slots called `prefix + name` ("Tensor.__add__"): installing one
    sets the class attribute itself to the learner's function (a property's getter stays a property, its setter
    the class's own), so subclasses inherit it, and uninstalling puts the class's own value back; the reference
    path calls nothing extra. `reference(prefix + name)` is the method's function (a property's getter)."""
    for attr in names:
        found = next(vars(klass)[attr] for klass in cls.__mro__ if attr in vars(klass))
        _slots[prefix + attr] = (cls, attr, vars(cls).get(attr, _ABSENT))
        _known[prefix + attr] = found.fget if isinstance(found, property) else found


def is_slot(name: str) -> bool:
    """True when component `name` is a method slot (see `offer_methods`)."""
    return name in _slots


def _put(name: str, implementation) -> None:
    ACTIVE[name] = implementation
    slot = _slots.get(name)
    if slot is not None:
        cls, attr, own = slot
        # a property's getter is the learner's; its setter (requires_grad's) stays the class's own
        setattr(cls, attr, property(implementation, own.fset, own.fdel) if isinstance(own, property) else implementation)


def _remove(name: str) -> None:
    if ACTIVE.pop(name, None) is not None and name in _slots:
        cls, attr, own = _slots[name]
        if own is _ABSENT:
            delattr(cls, attr)
        else:
            setattr(cls, attr, own)


def set_aside(name: str, reference):
    """`reference` (a method whose inline seam looks up `name`) run with the learner's `name` set aside for the
    call: what runs in place of a learner's component that raised (`Node.apply`)."""

    @functools.wraps(reference)
    def run(*args, **kwargs):
        implementation = ACTIVE.pop(name, None)
        try:
            return reference(*args, **kwargs)
        finally:
            if implementation is not None:
                ACTIVE[name] = implementation

    return run


def learner(name: str):
    """The learner's implementation installed as `name` (its call counted), or None; for inline seams."""
    implementation = ACTIVE.get(name)
    if implementation is not None:
        _calls[name] = _calls.get(name, 0) + 1
    return implementation


def install(name: str, implementation) -> None:
    """Use `implementation` for component `name` from now on."""
    if not callable(implementation):
        raise TypeError(f"the implementation of component {name!r} must be callable, not {type(implementation).__name__}")
    _remove(name)
    _put(name, implementation)


def uninstall(name: str | None = None) -> None:
    """Go back to the reference for component `name` (every component when `name` is None)."""
    for each in list(ACTIVE) if name is None else [name]:
        _remove(each)


@contextlib.contextmanager
def replaced(implementations: dict):
    """Within the block, each component named in `implementations` runs the implementation given (None: the
    reference); afterwards whatever was installed before is back."""
    previous = {name: ACTIVE.get(name) for name in implementations}
    for name, implementation in implementations.items():
        if implementation is None:
            _remove(name)
        else:
            install(name, implementation)
    try:
        yield
    finally:
        for name, implementation in previous.items():
            _remove(name)
            if implementation is not None:
                _put(name, implementation)


def installed() -> dict:
    """{name: implementation} of the components currently replaced."""
    return dict(ACTIVE)


def reference(name: str):
    """The framework's own implementation of a function or method component (KeyError if there is none)."""
    return _known[name]


def offered() -> list[str]:
    """Names of the function and method components the framework offers (backward rules are named
    `"<Op>.backward"` for every op class and are not listed)."""
    return sorted(_known)


def calls() -> dict:
    """How many times each installed component ran since the last `reset_calls()`."""
    return dict(_calls)


def reset_calls() -> None:
    """Start counting calls from zero."""
    _calls.clear()
