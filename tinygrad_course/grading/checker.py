"""The object a check function receives: expectations that stop at the first failure with a diagnosis."""
from __future__ import annotations

from typing import Callable, Iterable

from . import mistakes
from .arrays import describe
from .diagnose import compare


class CheckFailed(AssertionError):
    """A check found a problem; the message is the diagnosis shown to the learner."""

    def _render_traceback_(self):
        # IPython shows this instead of a traceback: the diagnosis is the useful part.
        return [f"\x1b[31m{line}\x1b[0m" if i == 0 else line for i, line in enumerate(str(self).splitlines())]


class Checker:
    """Expectations for one exercise's check; each raises CheckFailed with a specific diagnosis."""

    def __init__(self, exercise_id: str = ""):
        self.exercise_id = exercise_id
        self.count = 0

    def fail(self, what: str, message: str) -> None:
        """Stop the check with `message` about `what`."""
        raise CheckFailed(f"{what}: {message}" if what else message)

    def close(self, got, expected, what: str = "result", *, rtol: float = 1e-5, atol: float = 1e-6,
              check_dtype: bool = False, mistakes: Iterable[mistakes.Detector] = ()) -> None:
        """Expect arrays/tensors/numbers `got` ~= `expected` (shape, optionally dtype, values)."""
        self.count += 1
        problem = compare(got, expected, rtol=rtol, atol=atol, check_dtype=check_dtype, detectors=mistakes)
        if problem:
            self.fail(what, problem)

    def equal(self, got, expected, what: str = "result", *, hint: str | None = None) -> None:
        """Expect `got == expected` exactly (tuples, ints, strings, shapes)."""
        self.count += 1
        if got is None and expected is not None:
            self.fail(what, "your code returned None: did you forget a `return` statement?")
        try:
            same = type(got) == type(expected) and bool(got == expected) or _as_plain(got) == _as_plain(expected)
        except Exception:
            same = False
        if not same:
            message = f"expected {expected!r}, got {got!r}"
            self.fail(what, f"{message}\n  hint: {hint}" if hint else message)

    def true(self, condition, what: str, *, hint: str | None = None) -> None:
        """Expect `condition` to hold; `what` says in words what should be true."""
        self.count += 1
        if not condition:
            self.fail("", f"expected {what}" + (f"\n  hint: {hint}" if hint else ""))

    def raises(self, exception: type[BaseException], call: Callable, *args, what: str = "", hint: str | None = None, **kwargs):
        """Expect `call(*args, **kwargs)` to raise `exception`; return the exception."""
        self.count += 1
        try:
            result = call(*args, **kwargs)
        except exception as exc:
            return exc
        self.fail(what or getattr(call, "__name__", "call"),
                  f"expected {exception.__name__} to be raised, but it returned {describe(result)}"
                  + (f"\n  hint: {hint}" if hint else ""))


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
