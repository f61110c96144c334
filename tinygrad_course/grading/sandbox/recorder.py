"""The worker's side of a graded test: run the checks and *record* the learner's results, decide nothing.

Every expectation of a check (``t.close``, ``t.equal``, ``t.true``, ``t.raises``) becomes one observation
event on the grader's channel carrying the learner's value as plain data. Whether it is right is decided
by the grader, which compares it with the same observation of the solution's run.
"""
from __future__ import annotations

import os

from ..checker import Checker
from ..diagnose import compare
from ..registry import get_exercise
from ..shortcuts import Tripwire
from . import channel


class Emitter:
    """Writes events to the channel file descriptor of this worker (whole lines, retrying short writes)."""

    def __init__(self, fd: int):
        self.fd, self.step = fd, -1

    def send(self, event_type: str, /, **fields) -> None:
        """Write one event for the current step."""
        data = channel.event(event_type, step=self.step, **fields)
        while data:
            data = data[os.write(self.fd, data):]

    def observe(self, site: str, value, **meta) -> None:
        """One observation; a value that is not plain data is sent as the description of its type."""
        try:
            plain = channel.to_plain(value)
        except Exception as exc:  # learner objects that refuse conversion are an observation too
            plain, meta["unplain"] = None, f"{type(value).__name__} ({type(exc).__name__})"
        self.send("obs", site=site, value=plain, **meta)


class RecordingChecker(Checker):
    """A Checker whose expectations send the learner's values to the grader instead of comparing."""

    def __init__(self, exercise_id: str, emitter: Emitter):
        super().__init__(exercise_id)
        self.emitter = emitter

    def _site(self) -> str:
        self.count += 1
        return f"{self.exercise_id}:{self.count}"

    def close(self, got, expected, what: str = "result", *, rtol: float = 1e-5, atol: float = 1e-6,
              check_dtype: bool = False, mistakes=(), given=None) -> None:
        """Record `got` (the grader compares it with the solution's value within rtol/atol). `given`, the input
        a check shows with a failure in the learner's kernel, stays here: the grader's feedback is its own."""
        site, hint = self._site(), ""
        if expected is not None:  # the grader's probes pass None: the expected value is not in this process
            try:
                hint = compare(got, expected, rtol=rtol, atol=atol, check_dtype=check_dtype, detectors=mistakes) or ""
            except Exception:
                hint = ""
        self.emitter.observe(site, got, kind="close", what=str(what), rtol=float(rtol), atol=float(atol),
                             check_dtype=bool(check_dtype), hint=str(hint)[:500])

    def equal(self, got, expected, what: str = "result", *, hint: str | None = None, why: str | None = None,
              given=None) -> None:
        """Record `got` (compared exactly by the grader)."""
        self.emitter.observe(self._site(), got, kind="equal", what=str(what), hint=str(hint or "")[:500])

    def true(self, condition, what: str, *, hint: str | None = None, why: str | None = None, given=None) -> None:
        """Record whether `condition` held."""
        self.emitter.observe(self._site(), bool(condition), kind="true", what=str(what), hint=str(hint or "")[:500])

    def raises(self, exception, call, *args, what: str = "", hint: str | None = None, **kwargs):
        """Record the name of the exception `call` raised ("" when it returned)."""
        site, caught = self._site(), None
        try:
            call(*args, **kwargs)
            name = ""
        except exception as exc:
            name, caught = exception.__name__, exc
        except Exception as exc:
            name = type(exc).__name__
        self.emitter.observe(site, name, kind="equal", what=str(what or getattr(call, "__name__", "call")),
                             hint=f"expected {exception.__name__} to be raised" + (f"; {hint}" if hint else ""))
        return caught


def run_check(emitter: Emitter, exercise_id: str, *learner_objects) -> None:
    """The batch grader's check(): records what the exercise's checks observe about the learner's objects."""
    exercise = get_exercise(exercise_id)
    tripwire = Tripwire(exercise.forbidden)
    checker = RecordingChecker(exercise_id, emitter)
    try:
        with tripwire.armed():
            exercise.run(checker, *(tripwire.guard(obj) for obj in learner_objects))
    finally:
        if tripwire.hits:
            emitter.observe(f"{exercise_id}:tripwire", ", ".join(tripwire.hits), kind="shortcut")
