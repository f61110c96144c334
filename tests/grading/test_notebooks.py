"""Every graded check passes on its solution and fails on its stub; notebooks run (nbval, nbclient)."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tinygrad_course.grading.batch import GradeOptions, grade_all, observation_kinds, reference_run
from tinygrad_course.grading.notebook_files import chapter_of, read
from tinygrad_course.grading.sandbox.runner import Limits
from tinygrad_course.grading.validate import exercise_points

from .conftest import ROOT, notebook_id, solution_notebooks
from .test_batch_grader import WITHOUT_AN_OS_SANDBOX

LIMITS = Limits(timeout=240, cell_timeout=120, memory_mb=4096)
# the notebooks are the course's own: without an OS sandbox they may be graded with the hook only
ISOLATION = "unsafe-audit-hook-only" if WITHOUT_AN_OS_SANDBOX else "auto"


def _grade(solution_path: Path, submission_path: Path, tmp_path: Path) -> tuple[dict, dict]:
    """Grade one notebook as the batch grader does (the solution's run is its reference run)."""
    folder = tmp_path / "submitted" / "learner"
    folder.mkdir(parents=True)
    shutil.copy(submission_path, folder / solution_path.name)
    options = GradeOptions(limits=LIMITS, jobs=1, use_cache=False, isolation=ISOLATION)
    results = grade_all(tmp_path / "submitted", chapter_of(solution_path), tmp_path / "grades.csv", solution_path.parent, options)
    return exercise_points(read(solution_path)), results[0]


@pytest.mark.notebook
@pytest.mark.parametrize("path", solution_notebooks(), ids=notebook_id)
def test_every_graded_check_passes_on_the_solution(path, tmp_path):
    points, result = _grade(path, path, tmp_path)
    assert not result["problem"], result["problem"]
    assert result["earned"] == {e: float(p) for e, p in points.items()}, result["verdicts"]


@pytest.mark.notebook
@pytest.mark.parametrize("path", solution_notebooks(), ids=notebook_id)
def test_every_graded_check_fails_on_the_released_stub(path, tmp_path):
    points, result = _grade(path, path.parent.parent / "exercises" / path.name, tmp_path)
    free = [e for e in points if result["earned"][e]]
    assert set(result["earned"]) == set(points) and not free, f"exercises passing without any work: {free}"


@pytest.mark.notebook
@pytest.mark.parametrize("path", solution_notebooks(), ids=notebook_id)
def test_every_graded_test_observes_at_least_one_value(path):
    """A worker can claim "yes" to a yes/no check, never a value it did not compute: every graded test
    must compare at least one value with the solution's, so yes/no claims alone never score."""
    options = GradeOptions(limits=LIMITS, jobs=1, use_cache=False, isolation=ISOLATION)
    for label, (record, probe) in reference_run(path.parent, chapter_of(path), options).items():
        kinds = observation_kinds(record, probe)
        assert {"close", "equal"} & set(kinds), f"{label} observes only {kinds}"


def _exercise_notebooks():
    return sorted((ROOT / "exercises").glob("[0-9][0-9]*_*.ipynb")) + sorted(
        (Path(__file__).parent / "fixtures" / "course" / "exercises").glob("*.ipynb"))


@pytest.mark.notebook
@pytest.mark.parametrize("path", _exercise_notebooks(), ids=notebook_id)
def test_exercise_notebook_runs_up_to_its_stubs(path):
    """Executed in a real kernel as Run All does, a released notebook runs to its end: only cells tagged
    raises-exception may fail (the checks, and the cells that call the learner's code), and only with
    'not implemented yet'."""
    import nbclient

    nb = read(path)
    nbclient.NotebookClient(nb, timeout=300, allow_errors=False, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT)}}).execute()
    errors = [(o.ename, o.evalue) for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    unexpected = [e for e in errors if not (e[0] == "NotImplementedError" or e[0] == "CheckFailed" and "not implemented yet" in e[1])]
    assert not unexpected, unexpected


def _validated_notebooks():
    return [p for folder in ("notebooks", "solutions") for p in sorted((ROOT / folder).glob("*.ipynb"))]


@pytest.mark.notebook
@pytest.mark.parametrize("path", _validated_notebooks(), ids=notebook_id)
def test_notebook_outputs_match_when_rerun(path, tmp_path):
    """nbval: re-executing the committed notebook reproduces its committed outputs (after sanitizing).
    Each notebook gets an empty learner package of its own (build mode): solution notebooks save into it,
    and lecture notebooks must not see what another notebook saved."""
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval", str(path), "--nbval-sanitize-with",
         str(ROOT / "tests" / "nbval_sanitize.cfg"), "-q", "-p", "no:cacheprovider", "--rootdir", str(ROOT)],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
        env={**os.environ, "TC_MYTORCH": str(tmp_path / "mytorch")},
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
