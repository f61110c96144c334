"""The execution plan of a submission: the learner's cells where they may edit, the instructor's elsewhere,
and every graded test as its probe (the hidden part's expected values stay with the grader)."""
from __future__ import annotations

from dataclasses import dataclass, field

from .. import markers
from ..notebook_files import is_locked, is_solution_cell, is_test_cell, nbgrader_meta
from .probe import Probe, make_probe


@dataclass(frozen=True)
class Step:
    """One cell to run: learner/instructor code, or a graded test's probe."""

    kind: str  # "code" or "test"
    label: str
    source: str
    exercise: str | None = None
    learner: bool = False


@dataclass
class Plan:
    """The steps, the grader's half of each test (by step index) and what was odd about the submission."""

    steps: list[Step] = field(default_factory=list)
    probes: dict[int, Probe] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


class MalformedNotebook(ValueError):
    """The submission is JSON but not a notebook the grader can read."""


def _without_magics(source: str) -> str:
    """IPython magics and shell escapes have no meaning in the grader: they become comments."""
    lines = source.splitlines()
    if lines and lines[0].lstrip().startswith("%%"):
        lines = lines[1:]
    return "\n".join(f"# {line}" if line.lstrip().startswith(("%", "!")) else line for line in lines)


def _text(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "".join(value)
    raise MalformedNotebook("a cell's source is neither text nor a list of lines")


def learner_cells(submission: dict) -> list[tuple[str | None, str]]:
    """(grade_id or None, source) of every code cell of a submitted notebook (raw JSON), checked for shape."""
    cells = submission.get("cells") if isinstance(submission, dict) else None
    if not isinstance(cells, list):
        raise MalformedNotebook("no list of cells")
    found = []
    for cell in cells:
        if not isinstance(cell, dict):
            raise MalformedNotebook("a cell is not a JSON object")
        if cell.get("cell_type") != "code":
            continue
        metadata = cell.get("metadata")
        meta = metadata.get("nbgrader") if isinstance(metadata, dict) else None
        grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
        found.append((grade_id if isinstance(grade_id, str) else None, _text(cell.get("source", ""))))
    return found


def build_plan(solution_nb, submission: dict) -> Plan:
    """Steps in the instructor's cell order; learner cells replace only solution cells (matched by grade_id).

    Locked and test cells always come from the instructor. Extra cells the learner added run after the
    graded cell they followed; a solution cell duplicated in the submission runs every copy, in order.
    """
    plan = Plan()
    instructor_ids = {nbgrader_meta(c).get("grade_id") for c in solution_nb.cells if nbgrader_meta(c).get("grade_id")}
    learner_by_id: dict[str, list[str]] = {}
    extras_after: dict[str | None, list[str]] = {}
    last_id = None
    for grade_id, source in learner_cells(submission):
        if grade_id in instructor_ids:
            learner_by_id.setdefault(grade_id, []).append(source)
            last_id = grade_id
        else:
            extras_after.setdefault(last_id, []).append(source)
    steps = plan.steps
    steps += [Step("code", f"extra cell {i + 1}", _without_magics(s), learner=True) for i, s in enumerate(extras_after.get(None, []))]
    for index, cell in enumerate(solution_nb.cells):
        if cell.cell_type != "code":
            continue
        grade_id = nbgrader_meta(cell).get("grade_id")
        exercise = markers.exercise_of_grade_id(grade_id or "")
        if is_test_cell(cell):
            plan.probes[len(steps)] = probe = make_probe(markers.keep_solutions(cell.source))
            steps.append(Step("test", grade_id, probe.source, exercise))
        elif is_solution_cell(cell):
            sources = learner_by_id.get(grade_id)
            if not sources:
                plan.problems.append(f"cell {grade_id} is missing (the released stub was run)")
                sources = [markers.stub_solutions(cell.source, exercise or "?")]
            elif len(sources) > 1:
                plan.problems.append(f"cell {grade_id} appears {len(sources)} times (all copies were run, in order)")
            for n, source in enumerate(sources):
                steps.append(Step("code", grade_id if n == 0 else f"{grade_id} (copy {n + 1})", _without_magics(source), exercise, True))
        else:
            label = grade_id if is_locked(cell) and grade_id else f"cell {index}"
            steps.append(Step("code", label, _without_magics(markers.keep_solutions(cell.source))))
        for i, source in enumerate(extras_after.get(grade_id, []) if grade_id else []):
            steps.append(Step("code", f"extra cell after {grade_id} ({i + 1})", _without_magics(source), learner=True))
    return plan
