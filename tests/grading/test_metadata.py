"""nbgrader v3 metadata and course conventions are validated on every solution notebook."""
import copy

import pytest

from tinygrad_course.grading.notebook_files import chapter_of, read
from tinygrad_course.grading.registry import registered
from tinygrad_course.grading.validate import course_errors, exercise_points, nbgrader_errors, validate_notebook

from .conftest import FIXTURE_COURSE, notebook_id, solution_notebooks


@pytest.mark.parametrize("path", solution_notebooks(), ids=notebook_id)
def test_solution_notebook_is_valid(path):
    assert validate_notebook(path) == []


@pytest.mark.parametrize("path", solution_notebooks(), ids=notebook_id)
def test_points_in_metadata_match_the_registered_checks(path):
    points = exercise_points(read(path))
    assert points, "an exercise notebook without graded exercises"
    checks = registered(chapter_of(path))
    assert {e: checks[e].points for e in points} == points
    assert set(checks) == set(points), "every registered exercise needs a test cell, and vice versa"


@pytest.fixture
def demo():
    return read(FIXTURE_COURSE / "solutions" / "99_demo.ipynb")


def _test_cell(nb):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade"))


@pytest.mark.parametrize("change, expected", [
    (lambda m: m.update(points=-1), "minimum"),
    (lambda m: m.update(grade_id="ex99.1 check"), "does not match"),
    (lambda m: m.pop("locked"), "'locked' is a required property"),
    (lambda m: m.update(schema_version=2), "minimum"),
    (lambda m: m.update(colour="red"), "Additional properties"),
    (lambda m: m.pop("points"), "without points"),
])
def test_nbgrader_schema_rejects_bad_metadata(demo, change, expected):
    nb = copy.deepcopy(demo)
    change(_test_cell(nb).metadata["nbgrader"])
    errors = nbgrader_errors(nb)
    assert errors and expected in " ".join(errors)


def test_duplicate_grade_ids_are_rejected(demo):
    nb = copy.deepcopy(demo)
    nb.cells[3].metadata["nbgrader"]["grade_id"] = "setup"
    assert any("duplicate" in e for e in nbgrader_errors(nb))


def test_course_conventions_catch_unlocked_tests_and_missing_markers(demo):
    nb = copy.deepcopy(demo)
    _test_cell(nb).metadata["nbgrader"]["locked"] = False
    nb.cells[3].source = "def broadcast_shape(a, b):\n    return a"
    errors = " ".join(course_errors(nb, "99_demo.ipynb"))
    assert "must be locked" in errors and "without a '### BEGIN SOLUTION' region" in errors


def test_check_cells_need_the_raises_exception_tag_and_no_cell_keeps_run_timestamps(demo):
    nb = copy.deepcopy(demo)
    _test_cell(nb).metadata["tags"] = []
    nb.cells[3].metadata["execution"] = {"iopub.status.busy": "2026-01-01T00:00:00Z"}
    errors = " ".join(course_errors(nb, "99_demo.ipynb"))
    assert "need the 'raises-exception' tag" in errors and "'execution' metadata" in errors
    assert not course_errors(demo, "99_demo.ipynb")
