"""Release: write the learners' exercises/ notebooks from the instructor's solutions/ notebooks."""
from __future__ import annotations

import copy
from pathlib import Path

from . import markers
from .notebook_files import dumps, is_solution_cell, is_test_cell, nbgrader_meta, read, write_atomic
from .validate import validate_notebook

# Notebook-level metadata that depends on who last saved the file, not on the exercise.
VOLATILE_NOTEBOOK_METADATA = ("widgets", "toc", "varInspector", "vscode", "execution")


class ReleaseError(ValueError):
    """A solution notebook cannot be released (invalid metadata or markers)."""


def release_notebook(nb):
    """Return the learner's version of a solution notebook: stubs, no hidden tests, no outputs."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        exercise = markers.exercise_of_grade_id(nbgrader_meta(cell).get("grade_id", ""))
        if is_solution_cell(cell):
            cell.source = markers.stub_solutions(cell.source, exercise or "?")
        if is_test_cell(cell):
            cell.source = markers.strip_hidden_tests(cell.source)
        cell.metadata.pop("execution", None)
        cell.metadata.pop("collapsed", None)
    for key in VOLATILE_NOTEBOOK_METADATA:
        nb.metadata.pop(key, None)
    return nb


def release_text(solution_path: str | Path) -> str:
    """The exact bytes (as text) of the released version of one solution notebook."""
    problems = validate_notebook(solution_path)
    if problems:
        raise ReleaseError(f"{solution_path}: " + "; ".join(problems))
    return dumps(release_notebook(read(solution_path)))


def release_all(solutions_dir: str | Path = "solutions", exercises_dir: str | Path = "exercises") -> list[Path]:
    """Write exercises_dir/NN_*.ipynb for every solutions_dir/NN_*.ipynb; return the paths written."""
    written = []
    for source in sorted(Path(solutions_dir).glob("[0-9][0-9]*_*.ipynb")):
        target = Path(exercises_dir) / source.name
        text = release_text(source)
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            write_atomic(target, text)
        written.append(target)
    return written
