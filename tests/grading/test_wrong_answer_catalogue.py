"""Every graded exercise of solutions/ (the lab included) has at least two catalogued wrong answers that fail
its check, and its stub is checked to fail (scripts/wrong_answer_catalogue.py counts them by running the
catalogue)."""
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("wrong_answer_catalogue", ROOT / "scripts" / "wrong_answer_catalogue.py")
catalogue = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(catalogue)


def test_the_tally_counts_distinct_wrong_answers_and_the_stub():
    a, b = object(), object()
    calls = [("01.1", (id(a),), "wrong"), ("01.1", (id(a),), "wrong"), ("01.1", (id(b),), "wrong"),
             ("01.1", (0,), "stub"), ("01.2", (id(a),), "wrong"), ("01.2", (id(b),), "pass")]
    table = catalogue.tally(calls, ["01.1", "01.2", "01.3"])
    assert table == {"01.1": (2, True), "01.2": (1, False), "01.3": (0, False)}
    assert catalogue.incomplete(table) == ["01.2", "01.3"]


def test_graded_exercises_include_the_lab():
    ids = catalogue.graded_exercises()
    assert "05b.1" in ids and "01.1" in ids and len(ids) == len(set(ids))


@pytest.mark.slow
def test_every_exercise_has_two_wrong_answers_and_a_failing_stub():
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "wrong_answer_catalogue.py"), "--check"],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]


def test_a_failure_with_numbers_only_is_not_a_named_mistake():
    from .wrong_answers import assert_named

    bare = "✘ Exercise 09.3 (ring): 0/3 points\nrank 0's result: values differ: max abs difference 1.3 (expected 1, got 0)"
    with pytest.raises(AssertionError, match="names no mistake"):
        assert_named(bare)
    assert_named(bare + "\n  what went wrong: only one chunk of the result holds the full sum")
    assert_named("✘ Exercise 01.2 (x): 0/2 points\nf(a): dtype mismatch: expected float32, got float64: the dtype came "
                 "from the NumPy array")
