"""check(): run one exercise's visible checks on the learner's objects and explain the result.

Feedback comes in stages. The first failure of an exercise says what is wrong with the learner's value on
the exact input (and names the mistake when it is a known one); the hint, which may state the formula, is
shown on the second failure of the same exercise in this kernel or when the learner calls ``hint("NN.k")``.
"""
from __future__ import annotations

from dataclasses import dataclass

from .checker import Checker, CheckFailed, split_hint
from .errors import describe_error, record_calls
from .registry import get_exercise
from .shortcuts import Tripwire, static_violations

_FAILURES: dict[str, int] = {}   # exercise id -> failed checks in this kernel ("not implemented" excluded)
_HINTS: dict[str, str] = {}      # exercise id -> the hint of its last failure
_IN_FRAMEWORK: list = []         # fn(exercise_id, learner_objects) -> problem or None (build mode's probes)


def also_in_framework(fn) -> None:
    """Register `fn(exercise_id, learner_objects) -> str | None`, run after an exercise's own checks pass:
    build mode plugs a component into the framework and runs it there, so the check that grades a cell is
    the one that decides whether it is installed."""
    if fn not in _IN_FRAMEWORK:
        _IN_FRAMEWORK.append(fn)


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


@dataclass(frozen=True)
class Hint:
    """The hint for an exercise, shown as plain text in a notebook."""

    exercise: str
    text: str

    def __str__(self):
        return f"Hint for exercise {self.exercise}: {self.text}"

    def _repr_pretty_(self, printer, cycle):
        printer.text(str(self))


def _fmt(points: float) -> str:
    return f"{points:g}"


def _learner_error(exc: BaseException) -> str:
    """'TypeError: ... (in broadcast_shape, line 3)' pointing at the deepest frame of the learner's code.

    The batch grader's worker reports errors with this function (the only code it trusts to walk frames);
    check() adds the call and its input with errors.describe_error."""
    where, tb = "", exc.__traceback__
    while tb is not None:  # walked here, not with the traceback module: the grader trusts only this code
        code = tb.tb_frame.f_code
        if "tinygrad_course" not in code.co_filename and "numpy" not in code.co_filename:
            where = f" (in {code.co_name}, line {tb.tb_lineno})"
        tb = tb.tb_next
    return f"your code raised {type(exc).__name__}: {exc}{where}"


def reset_attempts() -> None:
    """Forget every failure and hint of this kernel (the next failure of each exercise is a first one)."""
    _FAILURES.clear()
    _HINTS.clear()


def hint(exercise_id: str) -> Hint:
    """The hint for the last failed check of `exercise_id` (how to fix it; it may give the formula)."""
    exercise = get_exercise(exercise_id)
    if exercise.id in _HINTS:
        return Hint(exercise.id, _HINTS[exercise.id])
    if exercise.id in _FAILURES:
        return Hint(exercise.id, "the last failure speaks for itself: its message above says what to change")
    return Hint(exercise.id, f"no check of {exercise.id} has failed in this session: run "
                             f"check(\"{exercise.id}\", ...) first; the hint is about the problem it finds")


def _run(exercise, checker, learner_objects) -> tuple[str | None, str | None, bool]:
    """(diagnosis, hint, counts_as_attempt) of running the exercise's checks; diagnosis None when they pass."""
    shortcuts = static_violations(learner_objects, exercise.forbidden)
    tripwire = Tripwire(exercise.forbidden)
    try:
        if shortcuts:
            raise CheckFailed(f"your code uses {', '.join(shortcuts)}, which this exercise asks you to write yourself")
        with tripwire.armed():
            exercise.run(checker, *(tripwire.guard(record_calls(obj)) for obj in learner_objects))
        if tripwire.hits:
            raise CheckFailed(f"your code called {', '.join(tripwire.hits)}, which this exercise asks you to write yourself")
        for in_framework in _IN_FRAMEWORK:  # outside the tripwire: the framework's own code may call anything
            problem = in_framework(exercise.id, learner_objects)
            if problem:
                raise CheckFailed(f"inside the framework: {problem}")
    except CheckFailed as exc:
        return (*split_hint(exc.diagnosis, exc.hint), True)
    except NotImplementedError as exc:
        return (f"not implemented yet: {exc}" if str(exc) else "not implemented yet"), None, False
    except RecursionError:
        return "your code recursed too deeply (an infinite recursion?)", None, True
    except Exception as exc:  # learner code failing in any way is a diagnosis, not a crash
        return describe_error(exc, getattr(checker, "context", "")), None, True
    return None, None, False


def verdict(exercise_id: str, *learner_objects) -> str | None:
    """What `check(exercise_id, ...)` finds wrong (None when every check passes), without printing and without
    counting an attempt: build mode decides with it whether a component is installed."""
    exercise = get_exercise(exercise_id)
    return _run(exercise, Checker(exercise.id), learner_objects)[0]


def check(exercise_id: str, *learner_objects) -> CheckResult:
    """Run the visible checks of `exercise_id` on the learner's function(s)/class(es).

    Prints nothing on its own: returns a CheckResult (shown as a one-line success message) or raises
    CheckFailed whose message is the diagnosis and the points (0 of N) for this exercise; the hint is added
    from the second failure of the exercise on (or shown by ``hint(exercise_id)``).
    """
    exercise = get_exercise(exercise_id)
    header = f"\u2718 Exercise {exercise.id} ({exercise.title}): 0/{_fmt(exercise.points)} points"
    checker = Checker(exercise.id)
    problem, fix, attempt = _run(exercise, checker, learner_objects)
    if problem is None:
        return CheckResult(exercise.id, exercise.title, exercise.points, checker.count)
    if attempt:
        _FAILURES[exercise.id] = _FAILURES.get(exercise.id, 0) + 1
        if fix:
            _HINTS[exercise.id] = fix
        else:
            _HINTS.pop(exercise.id, None)
    if fix and _FAILURES.get(exercise.id, 0) >= 2:
        problem += f"\n  hint: {fix}"
    elif fix:
        problem += f"\n  (stuck? hint(\"{exercise.id}\") gives a hint; a second failed check shows it too)"
    raise CheckFailed(f"{header}\n{problem}", fix) from None
