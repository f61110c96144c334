"""Exercises and grading: learner checks, the exercise registry, release and the batch grader.

Learners use :func:`check` (and :func:`hint` when stuck); chapter authors register checks with :func:`exercise` and the detectors in
:mod:`tinygrad_course.grading.mistakes`; instructors use the ``tinygrad-course`` command (see
``docs/instructor_guide.md``).
"""
from . import mistakes
from .arrays import describe, to_numpy
from .check import CheckResult, check, hint, reset_attempts
from .checker import Checker, CheckFailed, expect_close, expect_equal
from .diagnose import compare
from .registry import Exercise, exercise, get_exercise

__all__ = [
    "check", "hint", "reset_attempts", "CheckResult", "Checker", "CheckFailed", "expect_close", "expect_equal", "compare",
    "describe", "to_numpy", "exercise", "Exercise", "get_exercise", "mistakes",
]
