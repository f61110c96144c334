"""The course as a drop-in nbgrader course: what the notebooks carry and what the package does under
nbgrader's autograde (the slow test runs real nbgrader on one assignment)."""
import copy
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tinygrad_course.grading.notebook_files import is_test_cell, read

from .conftest import ROOT, notebook_id, solution_notebooks


@pytest.mark.parametrize("path", solution_notebooks(), ids=notebook_id)
def test_solutions_and_their_releases_carry_no_run_timestamps_and_tag_their_checks(path):
    for notebook in (path, path.parent.parent / "exercises" / path.name):
        cells = read(notebook).cells
        assert not [i for i, c in enumerate(cells) if "execution" in c.metadata], notebook
        untagged = [i for i, c in enumerate(cells) if is_test_cell(c) and "raises-exception" not in c.metadata.get("tags", [])]
        assert not untagged, f"{notebook}: check cells {untagged} would stop Run All"


def test_record_writes_nothing_while_nbgrader_autogrades(tmp_path, monkeypatch, capsys):
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    shell = InteractiveShell.instance()
    try:
        shell.run_cell("from tinygrad_course import build")
        shell.run_cell(f"build.record('02', folder={str(tmp_path)!r}, notebook='02_autograd.ipynb')")
        shell.run_cell("import numpy as np\nfrom tinygrad_course.autograd.engine import Op\n\n\nclass Tanh(Op):\n"
                       "    @staticmethod\n    def forward(ctx, x):\n        ctx.save_output = True\n"
                       "        return np.tanh(x)\n")
    finally:
        shell.events.callbacks["post_run_cell"].clear()
        InteractiveShell.clear_instance()
    assert list(tmp_path.iterdir()) == [] and "check passed" not in capsys.readouterr().out


def test_digits_are_package_data_declared_in_pyproject():
    text = (ROOT / "pyproject.toml").read_text()
    declared = next(line for line in text.splitlines() if line.startswith('"tinygrad_course.datasets" = '))
    assert '"data/*.csv.gz"' in declared
    assert "scikit-learn" not in text.split("[project.optional-dependencies]")[0]
    assert "sklearn" not in (ROOT / "notebooks" / "05_training.ipynb").read_text()


# ---- real nbgrader on assignment 01 -------------------------------------------------------------------------
BROKEN_BROADCAST = '''def broadcast_shape(a, b):
    """The shape broadcasting `a` and `b` produces (a beginner's version: aligned from the left)."""
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            raise ValueError("cannot broadcast")
        out.append(max(x, y))
    return tuple(out) + tuple(a[len(b):]) + tuple(b[len(a):])
'''
WARNING_NORMALIZE = '''import warnings

def normalize_rows(x):
    """Divide each row of the 2-D tensor `x` by its sum (correct, and it warns: a warning costs no points)."""
    warnings.warn("normalizing rows")
    return x / x.sum(dim=1, keepdim=True)
'''


def _nbgrader(course, *args):
    """Run one nbgrader command in `course`; the kernels it starts import this checkout's package."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    result = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout + result.stderr


def _submission(released, source, replace: dict) -> "nbformat.NotebookNode":
    """The released notebook with every solution cell answered as in `source` (markers dropped), and the
    cells named in `replace` (grade_id -> source) answered differently."""
    nb = copy.deepcopy(released)
    answers = {c.metadata["nbgrader"]["grade_id"]: c.source for c in source.cells
               if c.metadata.get("nbgrader", {}).get("solution")}
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.metadata.get("nbgrader", {}).get("solution") and grade_id in answers:
            cell.source = replace.get(grade_id, "\n".join(line for line in answers[grade_id].splitlines()
                                                          if "### BEGIN SOLUTION" not in line
                                                          and "### END SOLUTION" not in line))
    return nb


@pytest.mark.slow
@pytest.mark.notebook
def test_nbgrader_releases_autogrades_and_scores_assignment_01_as_the_course_does(tmp_path):
    pytest.importorskip("nbgrader")
    import nbformat
    from nbgrader.api import Gradebook

    course = tmp_path / "course"
    (course / "source" / "01").mkdir(parents=True)
    (course / "nbgrader_config.py").write_text(f'c = get_config()\nc.CourseDirectory.course_id = "tinygrad_course"\n'
                                               f'c.CourseDirectory.root = {str(course)!r}\n')
    (course / "source" / "01" / "01_tensors.ipynb").write_text((ROOT / "solutions" / "01_tensors.ipynb").read_text())
    _nbgrader(course, "generate_assignment", "01", "--force")
    released_path = course / "release" / "01" / "01_tensors.ipynb"
    released = nbformat.read(released_path, as_version=4)
    assert "### BEGIN HIDDEN TESTS" not in released_path.read_text()
    assert not [c for c in released.cells if "execution" in c.metadata]

    source = nbformat.read(ROOT / "solutions" / "01_tensors.ipynb", as_version=4)
    submissions = {"solution": _submission(released, source, {"ex01_6": WARNING_NORMALIZE}),
                   "stub": released,
                   "one_mistake": _submission(released, source, {"ex01_5": BROKEN_BROADCAST})}
    for student, nb in submissions.items():
        (course / "submitted" / student / "01").mkdir(parents=True)
        nbformat.write(nb, course / "submitted" / student / "01" / "01_tensors.ipynb")
    _nbgrader(course, "autograde", "01", "--create")
    _nbgrader(course, "generate_feedback", "01")

    points = {c.metadata["nbgrader"]["grade_id"]: c.metadata["nbgrader"]["points"] for c in source.cells
              if c.metadata.get("nbgrader", {}).get("grade")}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        scores = {student: {g.name: g.score for g in gradebook.find_submission("01", student).notebooks[0].grades}
                  for student in submissions}
    assert scores["solution"] == points            # full marks, the warning of 01.6 included
    assert set(scores["stub"].values()) == {0}
    assert scores["one_mistake"] == {**points, "ex01_5_check": 0}
    for student in submissions:                    # build mode stays out of the graded folders
        assert not list((course / "autograded" / student).rglob("mytorch"))
        assert (course / "feedback" / student / "01" / "01_tensors.html").is_file()
    # what nbgrader does not protect (docs/instructor_guide.md): its feedback shows the hidden tests' source
    assert "HIDDEN TESTS" in (course / "feedback" / "stub" / "01" / "01_tensors.html").read_text()
    validated = _nbgrader(course, "validate", str(course / "autograded" / "solution" / "01" / "01_tensors.ipynb"))
    assert "cannot be converted to a float" not in validated and "passes all the tests" in validated
