"""check(): run one exercise's visible checks on the learner's objects and explain the result.

Feedback comes in stages. ``hint("NN.k")`` gives a conceptual nudge at any time, before any check has run.
A failed check says what is wrong with the learner's value on the exact input and names the mistake when it
is a known one. The fix, which may state the formula, is held back until the learner has failed the same
exercise twice in this kernel and then asks ``hint("NN.k")`` a second time.

A check cell ends with nothing to show: ``check`` prints its verdict (nbgrader expects a graded cell's value
to be a number, or none), and warnings raised by the learner's code go to stdout (nbgrader scores a test cell
0 when anything reaches stderr, and a warning is not a failure).
"""
from __future__ import annotations

import sys
import warnings
from contextlib import contextmanager
from dataclasses import dataclass

from .checker import Checker, CheckFailed, split_hint
from .errors import describe_error, record_calls
from .nudges import nudge_for
from .registry import get_exercise
from .shortcuts import Tripwire, static_violations

_FAILURES: dict[str, int] = {}   # exercise id -> failed checks in this kernel ("not implemented" excluded)
_HINTS: dict[str, str] = {}      # exercise id -> the hint of its last failure
_ASKED: dict[str, int] = {}      # exercise id -> hint() calls made after its second failure
_IN_FRAMEWORK: list = []         # fn(exercise_id, learner_objects) -> problem or None (build mode's probes)


def also_in_framework(fn) -> None:
    """Register `fn(exercise_id, learner_objects) -> str | None`, run after an exercise's own checks pass:
    build mode plugs a component into the framework and runs it there, so the check that grades a cell is
    the one that decides whether it is installed."""
    if fn not in _IN_FRAMEWORK:
        _IN_FRAMEWORK.append(fn)


@dataclass(frozen=True)
class CheckResult:
    """The outcome of a passing check, which check() prints (failing checks raise CheckFailed)."""

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
    _ASKED.clear()


def hint(exercise_id: str) -> Hint:
    """A hint for `exercise_id`, in stages: the idea to use (at any time, even before a first check); after
    two failed checks of the exercise, asked a second time, the fix for the last failure (it may give the
    formula)."""
    exercise = get_exercise(exercise_id)
    nudge = nudge_for(exercise.id)
    failures = _FAILURES.get(exercise.id, 0)
    if failures < 2:
        later = ("" if failures == 0 else
                 "\n(your failed check named the mistake; after a second failed check, hint() asked twice gives the fix)")
        return Hint(exercise.id, nudge + later)
    _ASKED[exercise.id] = _ASKED.get(exercise.id, 0) + 1
    if exercise.id not in _HINTS:
        return Hint(exercise.id, nudge + "\n(the last failure's message says what to change)")
    if _ASKED[exercise.id] < 2:
        return Hint(exercise.id, nudge + f"\n(ask hint(\"{exercise.id}\") once more for the fix itself)")
    return Hint(exercise.id, _HINTS[exercise.id])


def _show_on_stdout(message, category, filename, lineno, file=None, line=None):
    sys.stdout.write(warnings.formatwarning(message, category, filename, lineno, line))


@contextmanager
def _warnings_to_stdout():
    """Warnings go to stdout while the block runs; in a notebook kernel, from now on (the hidden tests that
    follow check() in a graded cell call the learner's code too)."""
    if "ipykernel" in sys.modules:
        warnings.showwarning = _show_on_stdout
    with warnings.catch_warnings():
        warnings.showwarning = _show_on_stdout
        yield


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


def check(exercise_id: str, *learner_objects) -> None:
    """Run the visible checks of `exercise_id` on the learner's function(s)/class(es).

    Prints a one-line success message and returns None (a graded cell leaves no value), or raises
    CheckFailed whose message is the diagnosis and the points (0 of N) for this exercise; the fix is held
    back for ``hint(exercise_id)`` (asked twice after two failures).
    """
    exercise = get_exercise(exercise_id)
    header = f"\u2718 Exercise {exercise.id} ({exercise.title}): 0/{_fmt(exercise.points)} points"
    checker = Checker(exercise.id)
    with _warnings_to_stdout():
        problem, fix, attempt = _run(exercise, checker, learner_objects)
    if problem is None:
        print(CheckResult(exercise.id, exercise.title, exercise.points, checker.count))
        return None
    if attempt:
        _FAILURES[exercise.id] = _FAILURES.get(exercise.id, 0) + 1
        if fix:
            _HINTS[exercise.id] = fix
        else:
            _HINTS.pop(exercise.id, None)
    if fix and _FAILURES.get(exercise.id, 0) >= 2:
        problem += f"\n  (hint(\"{exercise.id}\") explains the idea; asked a second time, it gives the fix)"
    else:
        problem += f"\n  (stuck? hint(\"{exercise.id}\") explains the idea)"
    raise CheckFailed(f"{header}\n{problem}", fix) from None
