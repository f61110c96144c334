"""check(): run one exercise's visible checks on the learner's objects and explain the result."""
from __future__ import annotations

from dataclasses import dataclass

from .checker import Checker, CheckFailed
from .registry import get_exercise
from .shortcuts import Tripwire, static_violations


@dataclass(frozen=True)
class CheckResult:
    """The outcome of a passing check (failing checks raise CheckFailed)."""

    exercise: str
    title: str
    points: float
    expectations: int

    def __str__(self):
        return (f"\u2714 Exercise {self.exercise} ({self.title}): all {self.expectations} checks passed "
                f"\u2014 {_fmt(self.points)}/{_fmt(self.points)} points")

    def _repr_pretty_(self, printer, cycle):
        printer.text(str(self))


def _fmt(points: float) -> str:
    return f"{points:g}"


def _learner_error(exc: BaseException) -> str:
    """'TypeError: ... (in broadcast_shape, line 3)' pointing at the deepest frame of the learner's code."""
    where, tb = "", exc.__traceback__
    while tb is not None:  # walked here, not with the traceback module: the grader trusts only this code
        code = tb.tb_frame.f_code
        if "tinygrad_course" not in code.co_filename and "numpy" not in code.co_filename:
            where = f" (in {code.co_name}, line {tb.tb_lineno})"
        tb = tb.tb_next
    return f"your code raised {type(exc).__name__}: {exc}{where}"


def check(exercise_id: str, *learner_objects) -> CheckResult:
    """Run the visible checks of `exercise_id` on the learner's function(s)/class(es).

    Prints nothing on its own: returns a CheckResult (shown as a one-line success message) or raises
    CheckFailed whose message is the diagnosis and the points (0 of N) for this exercise.
    """
    exercise = get_exercise(exercise_id)
    header = f"\u2718 Exercise {exercise.id} ({exercise.title}): 0/{_fmt(exercise.points)} points"
    shortcuts = static_violations(learner_objects, exercise.forbidden)
    tripwire = Tripwire(exercise.forbidden)
    checker = Checker(exercise.id)
    problem = None
    try:
        if shortcuts:
            raise CheckFailed(f"your code uses {', '.join(shortcuts)}, which this exercise asks you to write yourself")
        with tripwire.armed():
            exercise.run(checker, *(tripwire.guard(obj) for obj in learner_objects))
        if tripwire.hits:
            raise CheckFailed(f"your code called {', '.join(tripwire.hits)}, which this exercise asks you to write yourself")
    except CheckFailed as exc:
        problem = str(exc)
    except NotImplementedError as exc:
        problem = f"not implemented yet: {exc}" if str(exc) else "not implemented yet"
    except RecursionError:
        problem = "your code recursed too deeply (an infinite recursion?)"
    except Exception as exc:  # learner code failing in any way is a diagnosis, not a crash
        problem = _learner_error(exc)
    if problem is not None:
        raise CheckFailed(f"{header}\n{problem}") from None
    return CheckResult(exercise.id, exercise.title, exercise.points, checker.count)
