"""The exercise registry: which check function, points and forbidden shortcuts belong to an exercise id."""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Callable

from .markers import EXERCISE_ID


@dataclass(frozen=True)
class Exercise:
    """One graded exercise: `run(t, *learner_objects)` performs its visible checks."""

    id: str
    title: str
    points: float
    run: Callable
    forbidden: tuple[str, ...] = field(default=())


_REGISTRY: dict[str, Exercise] = {}


def exercise(id: str, *, title: str, points: float, forbidden: tuple[str, ...] | list[str] = ()):
    """Decorator registering a check function for exercise `id` ("NN.K").

    The function receives a :class:`~tinygrad_course.grading.checker.Checker` and the learner's objects in
    the order the notebook's ``check(id, ...)`` call passes them. `forbidden` lists dotted names of
    framework/NumPy functions the learner must not call (e.g. ``"numpy.broadcast_shapes"``).
    """
    if not EXERCISE_ID.match(id):
        raise ValueError(f"exercise id {id!r} must look like 'NN.K' (chapter, number), e.g. '01.2'")

    def register(run: Callable) -> Callable:
        _REGISTRY[id] = Exercise(id, title, points, run, tuple(forbidden))
        return run
    return register


def chapter_module(chapter: str) -> str:
    """Dotted name of the module holding the checks of `chapter` ("01" -> ...exercises.ch01)."""
    return f"{__package__}.exercises.ch{chapter}"


def check_modules(chapter: str) -> list[str]:
    """Dotted names of every module holding checks of `chapter`: chNN itself, then the chNN_<part> modules it
    imports (a chapter whose checks outgrew one file)."""
    main = chapter_module(chapter)
    package = importlib.import_module(main.rpartition(".")[0])
    parts = sorted(info.name for info in pkgutil.iter_modules(package.__path__)
                   if info.name.startswith(f"ch{chapter}_"))
    return [main] + [f"{package.__name__}.{name}" for name in parts]


def get_exercise(id: str) -> Exercise:
    """The registered exercise `id`, importing its chapter's check module on first use."""
    if id not in _REGISTRY:
        match = EXERCISE_ID.match(id)
        if not match:
            raise KeyError(f"unknown exercise {id!r}: ids look like '01.2'")
        try:
            importlib.import_module(chapter_module(match.group(1)))
        except ModuleNotFoundError as exc:
            raise KeyError(f"no checks for chapter {match.group(1)} ({chapter_module(match.group(1))})") from exc
    if id not in _REGISTRY:
        raise KeyError(f"exercise {id!r} is not registered in {chapter_module(match.group(1))}")
    return _REGISTRY[id]


def registered(chapter: str) -> dict[str, Exercise]:
    """All exercises of `chapter`, importing its check module."""
    importlib.import_module(chapter_module(chapter))
    return {k: v for k, v in sorted(_REGISTRY.items()) if k.startswith(chapter + ".")}
