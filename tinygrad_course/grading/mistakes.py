"""Detectors for the common mistakes of an exercise.

A detector is a callable ``(got, expected) -> str | None``: it receives NumPy arrays of the same kind the
check compared and, when the learner's result looks like that particular mistake, returns a text that
*names* the mistake (shown on the first failure). It may return a :class:`Finding`, whose ``hint`` says how
to fix it (held back until the learner asks ``hint("NN.k")`` a second time after two failures). Chapter authors
combine the ready-made ones below or write their own with :func:`custom`.
"""
from __future__ import annotations

from itertools import combinations
from typing import Callable, Iterable

import numpy as np

from .arrays import to_numpy

Detector = Callable[[np.ndarray, np.ndarray], "str | None"]


class Finding(str):
    """The name of a recognised mistake (the text), with the fix kept apart in ``hint``."""

    hint: str | None

    def __new__(cls, diagnosis: str, hint: str | None = None):
        finding = super().__new__(cls, diagnosis)
        finding.hint = hint
        return finding


def _finding(default: str, message: str | None, fix: str | None) -> Finding:
    return Finding(message or default, fix)


def _close(a, b, rtol=1e-4, atol=1e-6) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))


def _numeric(*arrays) -> bool:
    return all(np.issubdtype(a.dtype, np.number) or a.dtype == bool for a in arrays)


def custom(predicate: Callable[[np.ndarray, np.ndarray], bool], hint: str, fix: str | None = None) -> Detector:
    """A detector naming the mistake `hint` when `predicate(got, expected)` is true; `fix` is the deferred hint."""
    def detect(got, expected):
        try:
            return Finding(hint, fix) if predicate(got, expected) else None
        except Exception:
            return None
    return detect


def transposed(hint: str | None = None, fix: str | None = None) -> Detector:
    """The result is the transpose of the expected one (e.g. `x @ W` instead of `x @ W.T`)."""
    def detect(got, expected):
        if got.ndim >= 2 and _numeric(got, expected) and _close(np.swapaxes(got, -1, -2), expected):
            return _finding("your result is the transpose of the expected one", hint,
                            fix or "check the order of the last two dimensions")
    return detect


def missing_broadcast_sum(hint: str | None = None, fix: str | None = None) -> Detector:
    """A gradient kept the broadcast shape instead of being summed back to the input's shape."""
    def detect(got, expected):
        if got.shape == expected.shape or got.ndim < expected.ndim or not _numeric(got, expected):
            return None
        lead = got.ndim - expected.ndim
        for k in range(1, got.ndim + 1):
            for axes in combinations(range(got.ndim), k):
                reduced = got.sum(axis=axes, keepdims=True)
                if any(reduced.shape[a] != 1 for a in range(lead)):
                    continue
                if _close(reduced.reshape(reduced.shape[lead:]), expected):
                    dims = ", ".join(str(a) for a in axes)
                    return _finding(f"the gradient was not summed over the broadcast dimension {dims}", hint,
                                    fix or f"sum it back to the input's shape {tuple(expected.shape)}")
        return None
    return detect


def overwrote_instead_of_accumulating(previous, hint: str | None = None, fix: str | None = None) -> Detector:
    """`.grad` was overwritten by the new gradient instead of having it added (`previous` is the old value)."""
    before = to_numpy(previous)

    def detect(got, expected):
        if _numeric(got, expected) and _close(got + before, expected) and not _close(before, 0 * before):
            return _finding("gradients were overwritten instead of accumulated", hint,
                            fix or "add the new gradient to the existing .grad")
    return detect


def probabilities_instead_of_logits(hint: str | None = None, fix: str | None = None) -> Detector:
    """Softmax was applied where raw logits are expected."""
    def detect(got, expected):
        if not (got.ndim >= 1 and np.issubdtype(got.dtype, np.floating) and got.shape == expected.shape):
            return None
        shifted = expected - expected.max(axis=-1, keepdims=True)
        softmax = np.exp(shifted) / np.exp(shifted).sum(axis=-1, keepdims=True)
        if _close(got, softmax):
            return _finding("you returned probabilities (softmax already applied)", hint,
                            fix or "return raw logits: the loss applies softmax itself")
    return detect


def sign_flipped(hint: str | None = None, fix: str | None = None) -> Detector:
    """The result has the wrong sign everywhere (e.g. gradient ascent instead of descent)."""
    def detect(got, expected):
        if _numeric(got, expected) and np.any(expected) and _close(-got, expected):
            return _finding("your result has the opposite sign of the expected one", hint, fix)
    return detect


def constant_factor(hint: str | None = None, fix: str | None = None) -> Detector:
    """The result is off by a constant factor (mean instead of sum, a missing 1/N or 2)."""
    def detect(got, expected):
        if got.shape != expected.shape or not _numeric(got, expected) or not np.any(expected):
            return None
        mask = np.abs(expected) > 1e-12
        ratio = got[mask] / expected[mask]
        if ratio.size and np.allclose(ratio, ratio.flat[0], rtol=1e-4) and not np.isclose(ratio.flat[0], 1.0) and ratio.flat[0] != 0:
            if _close(got, ratio.flat[0] * expected):
                return _finding(f"your result is {ratio.flat[0]:.4g} times the expected one", hint,
                                fix or "mean vs sum? a missing or extra factor?")
    return detect


def off_by_one(hint: str | None = None, fix: str | None = None) -> Detector:
    """Every value (or one dimension of the shape) is off by exactly one."""
    def detect(got, expected):
        if got.shape == expected.shape and _numeric(got, expected) and expected.size:
            diff = got.astype(np.float64) - expected.astype(np.float64)
            if np.allclose(np.abs(diff), 1.0) and np.allclose(diff, diff.flat[0]):
                return _finding(f"every value is off by {diff.flat[0]:+g}", hint, fix or "start at 0? inclusive end?")
        elif got.ndim == expected.ndim and sum(a != b for a, b in zip(got.shape, expected.shape)) == 1:
            axis = next(i for i, (a, b) in enumerate(zip(got.shape, expected.shape)) if a != b)
            if abs(got.shape[axis] - expected.shape[axis]) == 1:
                return _finding(f"dimension {axis} has {got.shape[axis]} entries instead of {expected.shape[axis]} (off by one)",
                                hint, fix)
    return detect


def integer_arithmetic(hint: str | None = None, fix: str | None = None) -> Detector:
    """The learner computed with integers where floats were expected (values truncated)."""
    def detect(got, expected):
        if np.issubdtype(got.dtype, np.integer) and np.issubdtype(expected.dtype, np.floating):
            return _finding(f"your result has integer dtype {got.dtype}, so the fractions were lost", hint,
                            fix or "convert to float32 before computing")
    return detect


DEFAULT: tuple[Detector, ...] = (
    integer_arithmetic(), transposed(), missing_broadcast_sum(), sign_flipped(), constant_factor(), off_by_one(),
)


def first_hint(got, expected, detectors: Iterable[Detector]) -> str | None:
    """What the first detector that recognizes the mistake says (a str or a Finding), or None."""
    for detect in detectors:
        try:
            hint = detect(got, expected)
        except Exception:
            hint = None
        if hint:
            return hint
    return None
