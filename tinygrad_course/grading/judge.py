"""Deciding the points, in the grader's process, from plain data only.

For every graded test, the learner's run and the solution's run each produced a list of observations
(values the test's checks looked at). The learner passes when every observation of the solution's run is
matched, in order and at the same check site, within the tolerance the *solution's* run or the grader's own
probe table states. Nothing the learner's process sent is executed, and its text is only ever quoted.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .diagnose import compare
from .sandbox import channel
from .sandbox.probe import Probe
from .sandbox.runner import StepRecord


@dataclass
class Verdict:
    """The grader's decision on one test: passed, the grader's own diagnosis, and quoted learner text."""

    passed: bool
    message: str = ""
    quoted: str = ""  # text that came from the learner's process (shown escaped, never trusted)


def _plain(value):
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _meta(reference: dict, probe: Probe | None) -> dict:
    site = reference.get("site")
    if probe is not None and site in probe.sites:
        return probe.sites[site]
    return {"kind": reference.get("kind"), "what": reference.get("what", "result"),
            "rtol": reference.get("rtol", 1e-5), "atol": reference.get("atol", 1e-6),
            "check_dtype": reference.get("check_dtype", False)}


def _compare(meta: dict, got, expected) -> str | None:
    kind = meta["kind"]
    if kind == "shortcut":
        return "unexpected"
    if kind == "close":
        if isinstance(expected, (list, np.ndarray, int, float)) and not isinstance(expected, bool):
            if got is None or isinstance(got, (str, dict)):
                return f"expected a number or array, got {type(got).__name__ if got is not None else 'None'}"
            try:
                return compare(np.asarray(got), np.asarray(expected), rtol=float(meta["rtol"]), atol=float(meta["atol"]),
                               check_dtype=bool(meta.get("check_dtype")))
            except Exception as exc:
                return f"cannot compare ({type(exc).__name__})"
    plain_got, plain_expected = _plain(got), _plain(expected)
    if type(plain_got) is bool or type(plain_expected) is bool:
        same = type(plain_got) is type(plain_expected) and plain_got == plain_expected
    else:
        try:
            same = bool(plain_got == plain_expected)
        except Exception:
            same = False
    if same:
        return None
    return f"expected {plain_expected!r:.200}, got {plain_got!r:.200}"


def judge(reference: StepRecord | None, learner: StepRecord | None, probe: Probe | None, skipped: str = "") -> Verdict:
    """The verdict on one graded test (reference = the solution's run of the same probe)."""
    if reference is None or not reference.finished or reference.error:
        why = reference.error if reference is not None and reference.error else "it did not finish"
        return Verdict(False, f"the grader could not run this test on the solution ({why}); ask your instructor")
    if learner is None:
        return Verdict(False, f"the test did not run: {skipped}" if skipped else "the test did not run")
    got = learner.observations
    for shortcut in (o for o in got if o.get("kind") == "shortcut"):
        return Verdict(False, "your code uses the framework's own implementation, which this exercise asks you to write",
                       quoted=str(shortcut.get("value"))[:300])
    for k, expected in enumerate(reference.observations):
        meta = _meta(expected, probe)
        what = str(meta.get("what") or "result")
        if k >= len(got):
            if learner.error:
                return Verdict(False, f"{what}: the test stopped before checking this", quoted=learner.error)
            return Verdict(False, f"{what}: the test stopped before checking this"
                           + ("" if learner.finished else " (the notebook stopped during the test)"))
        observed = got[k]
        if observed.get("site") != expected.get("site"):
            return Verdict(False, f"{what}: the test took a different path than expected")
        if observed.get("unplain"):
            return Verdict(False, f"{what}: your code returned an object that is not a number, list or array",
                           quoted=str(observed["unplain"]))
        try:
            problem = _compare(meta, channel.decode(observed.get("value")), channel.decode(expected.get("value")))
        except Exception:
            problem = "the value could not be read"
        if problem:
            return Verdict(False, f"{what}: {problem}", quoted=str(observed.get("hint") or "")[:500])
    if len(got) > len(reference.observations):
        return Verdict(False, "the test produced more results than it checks (the notebook wrote to the grader's channel)")
    if learner.error:
        return Verdict(False, "your code raised an error during the test", quoted=learner.error)
    if not learner.finished:
        return Verdict(False, "the test did not finish")
    return Verdict(True)
