"""The one check of a component: the exercise's graded check (what `check("NN.K", ...)` runs in the
notebook), which ends by running the component inside the framework (its probe) and comparing the result
with the reference's. The cell's grade and whether the component is installed come from this same check,
so a component that scores 0 points is never the one the framework runs.
"""
from __future__ import annotations

import functools
import hashlib
import inspect
from pathlib import Path

from .. import seams
from ..grading.check import also_in_framework, verdict as graded_verdict
from ..grading.registry import get_exercise
from .components import BY_NAME, COMPONENTS, check_names, exercise_id, sources
from .probes import PROBES, compare


def in_framework(name: str, learner_obj) -> str | None:
    """Run component `name`'s probe with the reference and with `learner_obj` installed (in this process):
    None when they agree, else what differs."""
    component = BY_NAME[name]
    probe = PROBES[name]
    try:
        with seams.replaced({component.seam: None}):
            expected = probe()
        with seams.replaced({component.seam: component.adapt(learner_obj)}):
            got = probe()
    except Exception as error:  # the learner's code raised inside the framework: name the component
        return f"raised {type(error).__name__}: {error}"
    return compare(name, got, expected)


def _framework_problem(exercise: str, objects) -> str | None:
    """For grading: every component the graded cell defines, run inside the framework."""
    for component in COMPONENTS:
        if exercise not in {exercise_id(grade_id) for _, grade_id in sources(component)}:
            continue
        names = check_names(component)
        if len(objects) == len(names):
            obj = objects[names.index(component.defines)]
        else:
            obj = next((o for o in objects if getattr(o, "__name__", None) == component.defines), None)
        if obj is None:
            continue
        problem = in_framework(component.name, getattr(obj, "__wrapped__", obj))
        if problem:
            return f"as your {component.name} ({component.contract.split(';')[-1].strip()}): {problem}"
    return None


also_in_framework(_framework_problem)


def verdict(name: str, namespace, chapter: str | None = None) -> str | None:
    """The check of component `name` on the objects of `namespace` (the notebook's, or a saved file's),
    graded as the cell of `chapter` (the component's own by default): None when it passes, else the
    diagnosis the learner's `check(...)` call shows."""
    component = BY_NAME[name]
    grade_id = dict(sources(component)).get(chapter or component.chapter, component.exercise)
    missing = [n for n in check_names(component) if n not in namespace]
    if missing:
        return f"{', '.join(missing)} not defined in the cell"
    try:
        return graded_verdict(exercise_id(grade_id), *(namespace[n] for n in check_names(component)))
    except KeyError as error:  # no graded exercise for this cell in this version of the course
        return f"no check: {error}"


@functools.lru_cache(maxsize=None)
def _checked_against(name: str) -> bytes:
    """What component `name` is checked against: the code of its exercise's check module (the same for every
    method of a class the cell defines)."""
    run = get_exercise(exercise_id(BY_NAME[name].exercise)).run
    return Path(inspect.getsourcefile(run)).read_bytes()


def digest(path, name: str | None = None) -> str:
    """The SHA-256 of a saved component file and, for component `name`, of what it is checked against: a file
    edited by hand, or a course whose check changed since, is checked again before it runs."""
    try:
        h = hashlib.sha256(Path(path).read_bytes())
    except OSError:
        return ""
    if name is not None:
        try:
            h.update(_checked_against(name))
        except (KeyError, OSError, TypeError):  # no check in this version of the course: the file alone
            pass
    return h.hexdigest()
