"""The object a check function receives: expectations that stop at the first failure with a diagnosis.

A failure carries two texts: the *diagnosis* (what is wrong with the learner's value on the exact input:
shape, dtype, the elements that differ, the input itself, and the name of a recognised mistake) and the
*hint* (how to fix it, possibly the formula). ``check()`` never shows the hint itself: ``hint("NN.k")`` gives
it when the learner asks a second time after two failures of the same exercise.
"""
from __future__ import annotations

from typing import Callable, Iterable

from . import mistakes
from .arrays import describe, show
from .diagnose import compare

_HINT_MARK = "\n  hint: "


class CheckFailed(AssertionError):
    """A check found a problem; the message is the diagnosis shown to the learner, ``hint`` the deferred fix."""

    def __init__(self, message: str = "", hint: str | None = None):
        super().__init__(message)
        self.diagnosis, self.hint = str(message), hint

    def _render_traceback_(self):
        # IPython shows this instead of a traceback: the diagnosis is the useful part.
        return [f"\x1b[31m{line}\x1b[0m" if i == 0 else line for i, line in enumerate(str(self).splitlines())]


def split_hint(message: str, hint: str | None = None) -> tuple[str, str | None]:
    """(diagnosis, hint) of a message that may carry its hint inline as '...\n  hint: ...'."""
    diagnosis, _, embedded = str(message).partition(_HINT_MARK)
    return diagnosis, "\n".join(h for h in (embedded, hint) if h) or None


def given_text(given) -> str:
    """'  input: a = ..., b = ...' for the inputs a failing expectation was computed from ('' for None)."""
    if given is None:
        return ""
    if isinstance(given, dict):
        return "\n  input: " + ", ".join(f"{name} = {show(value)}" for name, value in given.items())
    return f"\n  input: {given if isinstance(given, str) else show(given)}"


class Checker:
    """Expectations for one exercise's check; each raises CheckFailed with a specific diagnosis.

    `given=` (a dict of input names to values, or a string) adds the exact input to the diagnosis; `why=`
    names the mistake recognised in the learner's value (shown at once); `hint=` is the fix (deferred).
    """

    def __init__(self, exercise_id: str = ""):
        self.exercise_id = exercise_id
        self.count = 0

    def fail(self, what: str, message: str, *, hint: str | None = None, given=None) -> None:
        """Stop the check with `message` about `what`; `hint` is held back for ``hint("NN.k")`` (staged, check.py)."""
        diagnosis, fix = split_hint(message, hint)
        raise CheckFailed((f"{what}: {diagnosis}" if what else diagnosis) + given_text(given), fix)

    def close(self, got, expected, what: str = "result", *, rtol: float = 1e-5, atol: float = 1e-6,
              check_dtype: bool = False, mistakes: Iterable[mistakes.Detector] = (), given=None) -> None:
        """Expect arrays/tensors/numbers `got` ~= `expected` (shape, optionally dtype, values)."""
        self.count += 1
        problem = compare(got, expected, rtol=rtol, atol=atol, check_dtype=check_dtype, detectors=mistakes)
        if problem:
            self.fail(what, problem, hint=getattr(problem, "hint", None), given=given)

    def equal(self, got, expected, what: str = "result", *, hint: str | None = None, why: str | None = None,
              given=None) -> None:
        """Expect `got == expected` exactly (tuples, ints, strings, shapes)."""
        self.count += 1
        if got is None and expected is not None:
            self.fail(what, "your code returned None: did you forget a `return` statement?", given=given)
        try:
            same = type(got) == type(expected) and bool(got == expected) or _as_plain(got) == _as_plain(expected)
        except Exception:
            same = False
        if not same:
            message = f"expected {expected!r}, got {got!r}" + (f"\n  what went wrong: {why}" if why else "")
            self.fail(what, message, hint=hint, given=given)

    def true(self, condition, what: str, *, hint: str | None = None, why: str | None = None, given=None) -> None:
        """Expect `condition` to hold; `what` says in words what should be true."""
        self.count += 1
        if not condition:
            self.fail("", f"expected {what}" + (f"\n  what went wrong: {why}" if why else ""), hint=hint, given=given)

    def raises(self, exception: type[BaseException], call: Callable, *args, what: str = "", hint: str | None = None,
               **kwargs):
        """Expect `call(*args, **kwargs)` to raise `exception`; return the exception."""
        self.count += 1
        try:
            result = call(*args, **kwargs)
        except exception as exc:
            return exc
        except Exception as exc:
            self.fail(what or getattr(call, "__name__", "call"),
                      f"expected {exception.__name__}, but your code raised {type(exc).__name__}: {exc}", hint=hint)
        self.fail(what or getattr(call, "__name__", "call"),
                  f"expected {exception.__name__} to be raised, but it returned {describe(result)}", hint=hint)


def _as_plain(value):
    """Tuples/lists/Size-like objects compare by their items; NumPy scalars by their Python value."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return tuple(_as_plain(v) for v in value)
    return value


def expect_close(got, expected, what: str = "result", **kwargs) -> None:
    """Module-level :meth:`Checker.close`, handy in hidden tests."""
    Checker().close(got, expected, what, **kwargs)


def expect_equal(got, expected, what: str = "result", **kwargs) -> None:
    """Module-level :meth:`Checker.equal`, handy in hidden tests."""
    Checker().equal(got, expected, what, **kwargs)
