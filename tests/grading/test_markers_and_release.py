"""Markers, release determinism and the committed exercises being up to date."""
import pytest

from tinygrad_course.cli import main
from tinygrad_course.grading import markers
from tinygrad_course.grading.notebook_files import is_solution_cell, is_test_cell, read, reads
from tinygrad_course.grading.release import release_text

from .conftest import course_folders, notebook_id, solution_notebooks


def test_stub_names_the_exercise_and_the_function_and_keeps_indentation():
    source = "def f(x):\n    y = 1\n    ### BEGIN SOLUTION\n    return x + y\n    ### END SOLUTION\n"
    stub = markers.stub_solutions(source, "01.2")
    assert stub == 'def f(x):\n    y = 1\n    raise NotImplementedError("Exercise 01.2 (f): write your solution here")'


def test_hidden_tests_are_removed_with_their_markers():
    source = "check('01.1', f)\n### BEGIN HIDDEN TESTS\nassert f(2) == 3\n### END HIDDEN TESTS\n"
    assert markers.strip_hidden_tests(source) == "check('01.1', f)"


@pytest.mark.parametrize("source", [
    "### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION",
    "### END SOLUTION",
    "x = 1\n### BEGIN SOLUTION\n",
])
def test_unbalanced_markers_are_rejected(source):
    with pytest.raises(markers.MarkerError):
        markers.stub_solutions(source, "01.1")


def test_exercise_ids_map_to_nbgrader_safe_grade_ids():
    assert markers.check_grade_id("01.2") == "ex01_2_check"
    assert markers.exercise_of_grade_id("ex01_2") == "01.2"
    assert markers.exercise_of_grade_id("ex01_2_helper") == "01.2"
    assert markers.exercise_of_grade_id("setup") is None


@pytest.mark.parametrize("path", solution_notebooks(), ids=notebook_id)
def test_committed_exercise_is_exactly_the_release_of_its_solution(path):
    exercise = path.parent.parent / "exercises" / path.name
    assert exercise.exists(), f"{exercise} is missing: run `tinygrad-course release`"
    assert exercise.read_text(encoding="utf-8") == release_text(path), f"{exercise} is stale: run `tinygrad-course release`"


@pytest.mark.parametrize("path", solution_notebooks(), ids=notebook_id)
def test_release_is_deterministic_and_removes_every_secret(path):
    first, second = release_text(path), release_text(path)
    assert first == second
    released = reads(first)
    for cell in released.cells:
        assert markers.BEGIN_SOLUTION not in cell.source and markers.BEGIN_HIDDEN not in cell.source
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
        if is_solution_cell(cell):
            assert "raise NotImplementedError(\"Exercise " in cell.source
    hidden = [c.source for c in read(path).cells if is_test_cell(c) and markers.has_hidden_tests(c.source)]
    for source in hidden:
        secret = source.split(markers.BEGIN_HIDDEN)[1].split(markers.END_HIDDEN)[0].strip()
        assert secret not in first


def test_release_command_writes_and_checks(tmp_path, fixture_course, capsys):
    exercises = tmp_path / "exercises"
    assert main(["release", "--solutions", str(fixture_course / "solutions"), "--exercises", str(exercises)]) == 0
    written = exercises / "99_demo.ipynb"
    assert written.read_bytes() == (fixture_course / "exercises" / "99_demo.ipynb").read_bytes()
    assert main(["release", "--check", "--solutions", str(fixture_course / "solutions"), "--exercises", str(exercises)]) == 0
    written.write_text(written.read_text().replace("broadcast", "BROADCAST"))
    assert main(["release", "--check", "--solutions", str(fixture_course / "solutions"), "--exercises", str(exercises)]) == 1
    assert "out of date" in capsys.readouterr().out


@pytest.mark.parametrize("solutions, exercises", course_folders(), ids=["fixture", "course"])
def test_release_check_passes_on_the_committed_folders(solutions, exercises):
    assert main(["release", "--check", "--solutions", str(solutions), "--exercises", str(exercises)]) == 0
