"""Comparing a learner's result with the expected one and explaining the difference in one paragraph."""
from __future__ import annotations

from typing import Iterable

import numpy as np

from . import mistakes
from .arrays import describe, is_array_like, preview, to_numpy


class Diagnosis(str):
    """What is wrong with the learner's value (the text); ``hint`` holds the fix, shown only when asked for."""

    hint: str | None

    def __new__(cls, text: str, hint: str | None = None):
        diagnosis = super().__new__(cls, text)
        diagnosis.hint = hint
        return diagnosis


def compare(got, expected, *, rtol: float = 1e-5, atol: float = 1e-6, check_dtype: bool = False,
            detectors: Iterable[mistakes.Detector] = ()) -> str | None:
    """None when `got` matches `expected`; otherwise a :class:`Diagnosis` of the difference.

    Works on NumPy arrays, framework tensors (anything with .detach()/.numpy()), lists and scalars. The
    text says what differs (shape, dtype, which elements with their values) and, when one of `detectors`
    (tried before the default ones) recognises the mistake, names it; the detector's fix is in ``.hint``.
    """
    if got is None and expected is not None:
        return "your code returned None: did you forget a `return` statement?"
    if not is_array_like(got):
        return f"expected {describe(expected)}, got {describe(got)}"
    got_a, expected_a = to_numpy(got), to_numpy(expected)
    hint = mistakes.first_hint(got_a, expected_a, [*detectors, *mistakes.DEFAULT]) if _differs(got_a, expected_a, rtol, atol, check_dtype) else None
    if got_a.shape != expected_a.shape:
        return _join(f"shape mismatch: expected {tuple(expected_a.shape)}, got {tuple(got_a.shape)}", hint)
    if check_dtype and got_a.dtype != expected_a.dtype:
        return _join(f"dtype mismatch: expected {expected_a.dtype}, got {got_a.dtype}", hint)
    if not _numeric(got_a) or not _numeric(expected_a):
        if np.array_equal(got_a, expected_a):
            return None
        return _join(f"expected {preview(expected_a)}, got {preview(got_a)}", hint)
    if np.allclose(got_a, expected_a, rtol=rtol, atol=atol, equal_nan=True):
        return None
    return _join(_value_report(got_a, expected_a, rtol, atol), hint)


def _numeric(a: np.ndarray) -> bool:
    return np.issubdtype(a.dtype, np.number) or a.dtype == bool


def _differs(got, expected, rtol, atol, check_dtype) -> bool:
    if got.shape != expected.shape or (check_dtype and got.dtype != expected.dtype):
        return True
    if not (_numeric(got) and _numeric(expected)):
        return not np.array_equal(got, expected)
    return not np.allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)


def _value_report(got: np.ndarray, expected: np.ndarray, rtol: float = 1e-5, atol: float = 1e-6) -> str:
    g64, e64 = got.astype(np.float64), expected.astype(np.float64)
    if not np.isfinite(g64).all() and np.isfinite(e64).all():
        bad = ~np.isfinite(g64)
        first = _index(np.argwhere(bad)[0]) if got.ndim else ""
        kinds = " and ".join(k for k, m in (("NaN", np.isnan(g64)), ("inf", np.isinf(g64))) if m.any())
        return (f"your result contains {kinds} ({int(bad.sum())} of {got.size} values"
                + (f", the first at index {first}" if first else "") + ")")
    diff = np.abs(g64 - e64)
    where = np.unravel_index(int(np.nanargmax(diff)), diff.shape) if diff.ndim else ()
    at = f" at index {tuple(int(i) for i in where)}" if diff.ndim else ""
    wrong_mask = ~np.isclose(g64, e64, rtol=rtol, atol=atol, equal_nan=True)
    wrong = int(wrong_mask.sum())
    report = (f"values differ: max abs difference {float(np.nanmax(diff)):.4g}{at} "
              f"(expected {_scalar(expected[where])}, got {_scalar(got[where])}; {wrong} of {got.size} values wrong)")
    if got.ndim and 1 < wrong:
        others = [tuple(i) for i in np.argwhere(wrong_mask)[:4] if tuple(i) != tuple(where)][:3]
        report += "; also " + ", ".join(f"{_index(i)}: expected {_scalar(expected[i])}, got {_scalar(got[i])}"
                                        for i in others)
    return report


def _index(index) -> str:
    return "(" + ", ".join(str(int(i)) for i in index) + ("," if len(index) == 1 else "") + ")"


def _scalar(value) -> str:
    return f"{float(value):.6g}" if np.issubdtype(np.asarray(value).dtype, np.number) else repr(value)


def _join(message: str, finding: str | None) -> Diagnosis:
    """The report, then the name of the recognised mistake; its fix stays in .hint."""
    if not finding:
        return Diagnosis(message)
    return Diagnosis(f"{message}\n  what went wrong: {finding}", getattr(finding, "hint", None))
