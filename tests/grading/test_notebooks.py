"""Every graded check passes on its solution and fails on its stub; notebooks run (nbval, nbclient)."""
import subprocess
import sys
from pathlib import Path

import pytest

from tinygrad_course.grading.notebook_files import read
from tinygrad_course.grading.registry import chapter_module
from tinygrad_course.grading.sandbox.plan import build_plan
from tinygrad_course.grading.sandbox.runner import Limits, run_submission, trusted_imports
from tinygrad_course.grading.validate import exercise_points

from .conftest import ROOT, notebook_id, solution_notebooks

LIMITS = Limits(timeout=240, cell_timeout=120, memory_mb=4096)


def _grade(solution_path: Path, submission_path: Path):
    solution = read(solution_path)
    report = run_submission(build_plan(solution, read(submission_path)), limits=LIMITS, unreadable=[],
                            preload=["numpy", "tinygrad_course.grading", chapter_module(solution_path.name[:2])],
                            imports=trusted_imports(solution))
    return exercise_points(solution), report


@pytest.mark.notebook
@pytest.mark.parametrize("path", solution_notebooks(), ids=notebook_id)
def test_every_graded_check_passes_on_the_solution(path):
    points, report = _grade(path, path)
    assert not report.problem, report.problem + report.output_tail
    failing = {e: o.message for e, o in report.outcomes.items() if not o.passed}
    assert not failing and set(report.outcomes) == set(points), (failing, report.notes)


@pytest.mark.notebook
@pytest.mark.parametrize("path", solution_notebooks(), ids=notebook_id)
def test_every_graded_check_fails_on_the_released_stub(path):
    points, report = _grade(path, path.parent.parent / "exercises" / path.name)
    free = [e for e in points if e in report.outcomes and report.outcomes[e].passed]
    assert set(report.outcomes) == set(points) and not free, f"exercises passing without any work: {free}"


def _exercise_notebooks():
    return sorted((ROOT / "exercises").glob("[0-9][0-9]_*.ipynb")) + sorted(
        (Path(__file__).parent / "fixtures" / "course" / "exercises").glob("*.ipynb"))


@pytest.mark.notebook
@pytest.mark.parametrize("path", _exercise_notebooks(), ids=notebook_id)
def test_exercise_notebook_runs_up_to_its_stubs(path):
    """Executed in a real kernel, a released notebook fails only with 'not implemented yet'."""
    import nbclient

    nb = read(path)
    nbclient.NotebookClient(nb, timeout=300, allow_errors=True, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT)}}).execute()
    errors = [(o.ename, o.evalue) for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    unexpected = [e for e in errors if not (e[0] == "NotImplementedError" or e[0] == "CheckFailed" and "not implemented yet" in e[1])]
    assert not unexpected, unexpected


def _validated_notebooks():
    return [p for folder in ("notebooks", "solutions") for p in sorted((ROOT / folder).glob("*.ipynb"))]


@pytest.mark.notebook
@pytest.mark.parametrize("path", _validated_notebooks(), ids=notebook_id)
def test_notebook_outputs_match_when_rerun(path):
    """nbval: re-executing the committed notebook reproduces its committed outputs (after sanitizing)."""
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval", str(path), "--nbval-sanitize-with",
         str(ROOT / "tests" / "nbval_sanitize.cfg"), "-q", "-p", "no:cacheprovider", "--rootdir", str(ROOT)],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
