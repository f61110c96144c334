"""Check of chapter 08's exercise on anomaly detection (08.7): run a backward pass under
`tc.autograd.detect_anomaly()` and name the backward node that produced the NaN. `ch08` imports this module, so
it registers with the chapter's other checks.

Every loss here is finite in the forward pass and NaN only in the backward pass (a masked square root, a
masked entropy term, a "safe" division), so a search for NaN in the outputs (08.2) finds nothing: only anomaly
mode names the operation.
"""
from __future__ import annotations

import warnings

import tinygrad_course as tc

from ..registry import exercise

_ANOMALY_ERROR = "returned nan values"


def _cases():
    """(the loss as the learner reads it, its inputs, a function building it, the node anomaly mode names)."""
    x, mask = tc.tensor([4.0, 0.0, 1.0], requires_grad=True), tc.tensor([1.0, 0.0, 1.0])
    p = tc.tensor([0.0, 0.25, 0.75], requires_grad=True)
    n, d = tc.tensor([1.0, 2.0, 3.0], requires_grad=True), tc.tensor([2.0, 0.0, 4.0])
    w = tc.tensor([0.5, -1.0, 2.0], requires_grad=True)
    return [
        ("(x.sqrt() * mask).sum()", {"x": x, "mask": mask}, lambda: (x.sqrt() * mask).sum(), "SqrtBackward0"),
        ("tc.where(p > 0, p * p.log(), tc.zeros(3)).sum()  # an entropy term that skips p = 0", {"p": p},
         lambda: tc.where(p > 0, p * p.log(), tc.zeros(3)).sum(), "MulBackward0"),
        ("tc.where(d != 0, n / d, tc.zeros(3)).sum()  # a division that skips d = 0", {"n": n, "d": d},
         lambda: tc.where(d != 0, n / d, tc.zeros(3)).sum(), "DivBackward0"),
        ("(w * w).sum()  # nothing wrong", {"w": w}, lambda: (w * w).sum(), None),
    ]


def _watched(build, seen):
    """build, wrapped to record whether anomaly mode was on when the loss was built and when backward reached it."""
    def loss_fn():
        seen["forward"] = tc.autograd.is_anomaly_enabled()
        loss = build()
        loss.register_hook(lambda grad: seen.__setitem__("backward", tc.autograd.is_anomaly_enabled()))
        return loss
    return loss_fn


def _why(got, expected):
    """The name of the mistake behind a wrong result (None when it is not a known one)."""
    if isinstance(got, BaseException):
        return "you returned the exception itself, not the name of the node"
    if isinstance(got, str) and expected is not None and expected in got:
        if got.strip("'\" ") == expected:
            return "the name still has its quotes"
        if _ANOMALY_ERROR in got:
            return "that is the whole error message, not the name of the node"
    return None


def _fix(got, expected):
    if isinstance(got, str) and expected is not None and expected in got:
        return "the message reads Function 'NAME' returned nan values ...: keep only the text between the quotes"
    return None


@exercise("08.7", title="which operation made the NaN? (anomaly mode)", points=2)
def nan_source_check(t, nan_source):
    anomaly = tc.autograd.anomaly_mode.state
    before = (anomaly.enabled, anomaly.check_nan)
    try:
        for source, given, build, expected in _cases():
            seen = {}
            what = f"nan_source(loss_fn) for loss_fn = lambda: {source}"
            t.context = what
            with warnings.catch_warnings():  # anomaly mode warns that it is slow, on every entry
                warnings.simplefilter("ignore", UserWarning)
                try:
                    got = nan_source(_watched(build, seen))
                except RuntimeError as exc:
                    if _ANOMALY_ERROR not in str(exc):
                        raise
                    t.fail(what, f"the anomaly error escaped from nan_source: RuntimeError: {str(exc).splitlines()[0]}",
                           hint="catch the RuntimeError backward raises and read the node's name from its message",
                           given=given)
            left_on = anomaly.enabled
            anomaly.enabled, anomaly.check_nan = before
            t.equal(left_on, False, what=f"anomaly detection still on after {what} returned",
                    hint="use it as a context manager, `with tc.autograd.detect_anomaly():`, which turns it off at "
                         "the end", given=given)
            t.true("backward" in seen, f"{what} to call .backward() on the loss that loss_fn() returns",
                   hint="anomaly detection checks the gradients, so the NaN is found only by a backward pass",
                   given=given)
            t.true(seen["backward"], f"anomaly detection to be on while backward ran ({what})",
                   why="backward ran with anomaly detection off, so nothing stopped it at the NaN",
                   hint="call .backward() inside `with tc.autograd.detect_anomaly():`", given=given)
            t.true(seen["forward"], f"loss_fn() to run with anomaly detection on ({what})",
                   why="the loss was built before anomaly detection was switched on, so the error cannot point "
                       "at the forward line that made the NaN",
                   hint="call loss_fn() inside the `with` block too, then .backward() on its result",
                   given=given)
            t.equal(got, expected, what=what, why=_why(got, expected), hint=_fix(got, expected), given=given)
    finally:
        t.context = ""
        anomaly.enabled, anomaly.check_nan = before
