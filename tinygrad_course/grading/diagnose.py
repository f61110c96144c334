"""Comparing a learner's result with the expected one and explaining the difference in one paragraph."""
from __future__ import annotations

from typing import Iterable

import numpy as np

from . import mistakes
from .arrays import describe, is_array_like, preview, to_numpy


def compare(got, expected, *, rtol: float = 1e-5, atol: float = 1e-6, check_dtype: bool = False,
            detectors: Iterable[mistakes.Detector] = ()) -> str | None:
    """None when `got` matches `expected`; otherwise a specific explanation of the difference.

    Works on NumPy arrays, framework tensors (anything with .detach()/.numpy()), lists and scalars.
    `detectors` are tried before the default ones to turn a mismatch into a targeted hint.
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
    return _join(_value_report(got_a, expected_a), hint)


def _numeric(a: np.ndarray) -> bool:
    return np.issubdtype(a.dtype, np.number) or a.dtype == bool


def _differs(got, expected, rtol, atol, check_dtype) -> bool:
    if got.shape != expected.shape or (check_dtype and got.dtype != expected.dtype):
        return True
    if not (_numeric(got) and _numeric(expected)):
        return not np.array_equal(got, expected)
    return not np.allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)


def _value_report(got: np.ndarray, expected: np.ndarray) -> str:
    if np.isnan(got.astype(np.float64)).any() and not np.isnan(expected.astype(np.float64)).any():
        return f"your result contains NaN ({int(np.isnan(got.astype(np.float64)).sum())} of {got.size} values)"
    diff = np.abs(got.astype(np.float64) - expected.astype(np.float64))
    where = np.unravel_index(int(np.nanargmax(diff)), diff.shape) if diff.ndim else ()
    at = f" at index {tuple(int(i) for i in where)}" if diff.ndim else ""
    wrong = int((diff > 1e-6 + 1e-5 * np.abs(expected)).sum())
    return (f"values differ: max abs difference {float(np.nanmax(diff)):.4g}{at} "
            f"(expected {_scalar(expected[where])}, got {_scalar(got[where])}; {wrong} of {got.size} values wrong)")


def _scalar(value) -> str:
    return f"{float(value):.6g}" if np.issubdtype(np.asarray(value).dtype, np.number) else repr(value)


def _join(message: str, hint: str | None) -> str:
    return f"{message}\n  hint: {hint}" if hint else message
