"""The execution plan of a submission: the learner's cells where they may edit, the instructor's elsewhere."""
from __future__ import annotations

from dataclasses import dataclass

from .. import markers
from ..notebook_files import is_locked, is_solution_cell, is_test_cell, nbgrader_meta


@dataclass(frozen=True)
class Step:
    """One cell to run: learner/instructor code, or a graded test (run by the guard, never as source)."""

    kind: str  # "code" or "test"
    label: str
    source: str
    exercise: str | None = None
    learner: bool = False


def _without_magics(source: str) -> str:
    """IPython magics and shell escapes have no meaning in the grader: they become comments."""
    lines = source.splitlines()
    if lines and lines[0].lstrip().startswith("%%"):
        lines = lines[1:]
    return "\n".join(f"# {line}" if line.lstrip().startswith(("%", "!")) else line for line in lines)


def build_plan(solution_nb, submission_nb) -> list[Step]:
    """Steps in the instructor's cell order; learner cells replace only solution cells (matched by grade_id).

    Locked and test cells always come from the instructor, so deleting or editing them changes nothing.
    Extra cells the learner added run after the graded cell they followed.
    """
    learner_by_id: dict[str, str] = {}
    extras_after: dict[str | None, list[str]] = {}
    instructor_ids = {nbgrader_meta(c).get("grade_id") for c in solution_nb.cells if nbgrader_meta(c).get("grade_id")}
    last_id = None
    for cell in submission_nb.cells:
        if cell.get("cell_type") != "code":
            continue
        grade_id = nbgrader_meta(cell).get("grade_id")
        if grade_id in instructor_ids:
            learner_by_id.setdefault(grade_id, cell.get("source", ""))
            last_id = grade_id
        else:
            extras_after.setdefault(last_id, []).append(cell.get("source", ""))

    steps: list[Step] = [Step("code", f"extra cell {i + 1}", _without_magics(s), learner=True)
                         for i, s in enumerate(extras_after.get(None, []))]
    for index, cell in enumerate(solution_nb.cells):
        if cell.cell_type != "code":
            continue
        grade_id = nbgrader_meta(cell).get("grade_id")
        exercise = markers.exercise_of_grade_id(grade_id or "")
        if is_test_cell(cell):
            steps.append(Step("test", grade_id, markers.keep_solutions(cell.source), exercise))
        elif is_solution_cell(cell):
            stub = markers.stub_solutions(cell.source, exercise or "?")
            steps.append(Step("code", grade_id, _without_magics(learner_by_id.get(grade_id, stub)), exercise, True))
        else:
            label = grade_id if is_locked(cell) and grade_id else f"cell {index}"
            steps.append(Step("code", label, _without_magics(markers.keep_solutions(cell.source))))
        for i, source in enumerate(extras_after.get(grade_id, []) if grade_id else []):
            steps.append(Step("code", f"extra cell after {grade_id} ({i + 1})", _without_magics(source), learner=True))
    return steps
