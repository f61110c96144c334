"""Validation of exercise notebooks: nbgrader v3 cell metadata plus the course's own conventions."""
from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from pathlib import Path

import jsonschema

from . import markers
from .notebook_files import chapter_of, is_solution_cell, is_test_cell, nbgrader_meta, read

CHECK_CALL = "check("
# JupyterLab's Run All and nbclient continue past a cell with this tag: an unsolved exercise's failing check
# must not stop the cells after it (nbgrader still scores the failed cell 0).
RAISES_TAG = "raises-exception"


@lru_cache(maxsize=1)
def nbgrader_schema() -> dict:
    """The JSON schema of nbgrader's cell metadata, version 3."""
    text = resources.files(__package__).joinpath("nbgrader_cell_v3.schema.json").read_text()
    return json.loads(text)


def nbgrader_errors(nb) -> list[str]:
    """Problems nbgrader itself would report for this notebook's cell metadata."""
    errors, seen = [], set()
    for index, cell in enumerate(nb.cells):
        if "nbgrader" not in cell.get("metadata", {}):
            continue
        meta = cell.metadata["nbgrader"]
        where = f"cell {index}"
        try:
            jsonschema.validate(meta, nbgrader_schema())
        except jsonschema.ValidationError as exc:
            errors.append(f"{where}: {exc.message}")
            continue
        if (meta["grade"] or meta["solution"] or meta["locked"]):
            grade_id = meta.get("grade_id", "")
            if not grade_id:
                errors.append(f"{where}: grade, solution or locked cell without a grade_id")
            elif grade_id in seen:
                errors.append(f"{where}: duplicate grade_id {grade_id!r}")
            seen.add(grade_id)
        if meta["grade"] and "points" not in meta:
            errors.append(f"{where}: grade cell without points")
        if cell.cell_type == "markdown" and meta["grade"] != meta["solution"] and not meta.get("task"):
            errors.append(f"{where}: a markdown grade cell must also be a solution cell (and vice versa)")
    return errors


def course_errors(nb, path: str | Path | None = None) -> list[str]:
    """Problems with the course's conventions (markers, grade_id naming, one check cell per exercise)."""
    errors: list[str] = []
    chapter = chapter_of(path) if path else None
    solutions: dict[str, int] = {}
    checks: dict[str, int] = {}
    for index, cell in enumerate(nb.cells):
        where = f"cell {index}"
        source = cell.get("source", "")
        try:
            has_solution = markers.has_solution(source)
            has_hidden = markers.has_hidden_tests(source)
        except markers.MarkerError as exc:
            errors.append(f"{where}: {exc}")
            continue
        meta = nbgrader_meta(cell)
        exercise = markers.exercise_of_grade_id(meta.get("grade_id", ""))
        if has_solution and not is_solution_cell(cell):
            errors.append(f"{where}: has a solution region but is not an nbgrader solution cell")
        if has_hidden and not is_test_cell(cell):
            errors.append(f"{where}: has hidden tests but is not an nbgrader grade (test) cell")
        if is_solution_cell(cell):
            if cell.cell_type != "code" or meta.get("grade"):
                errors.append(f"{where}: solution cells must be ungraded code cells (tests grade them)")
            if exercise is None:
                errors.append(f"{where}: solution grade_id {meta.get('grade_id')!r} must look like exNN_K[_part]")
            elif not has_solution:
                errors.append(f"{where}: solution cell without a '{markers.BEGIN_SOLUTION}' region")
            else:
                solutions[exercise] = solutions.get(exercise, 0) + 1
        if "execution" in cell.get("metadata", {}):
            errors.append(f"{where}: has 'execution' metadata (run timestamps, which nbgrader copies into every "
                          "released cell): strip it")
        if is_test_cell(cell):
            if RAISES_TAG not in cell.get("metadata", {}).get("tags", []):
                errors.append(f"{where}: test cells need the {RAISES_TAG!r} tag (Run All continues past a failing check)")
            if not meta.get("locked"):
                errors.append(f"{where}: test cells must be locked")
            if exercise is None or meta.get("grade_id") != markers.check_grade_id(exercise):
                errors.append(f"{where}: test grade_id {meta.get('grade_id')!r} must be exNN_K_check")
            elif CHECK_CALL not in source:
                errors.append(f"{where}: test cell for {exercise} never calls check(...)")
            else:
                checks[exercise] = checks.get(exercise, 0) + 1
        if exercise and chapter and not exercise.startswith(chapter + "."):
            errors.append(f"{where}: exercise {exercise} does not belong to chapter {chapter}")
    for exercise in sorted(set(solutions) | set(checks)):
        if checks.get(exercise, 0) != 1:
            errors.append(f"exercise {exercise}: needs exactly one test cell, found {checks.get(exercise, 0)}")
        if not solutions.get(exercise):
            errors.append(f"exercise {exercise}: has a test cell but no solution cell")
    return errors


def exercise_points(nb) -> dict[str, float]:
    """Points of each exercise, from its test cell's metadata, in notebook order."""
    points = {}
    for cell in nb.cells:
        if is_test_cell(cell):
            exercise = markers.exercise_of_grade_id(nbgrader_meta(cell).get("grade_id", ""))
            if exercise:
                points[exercise] = nbgrader_meta(cell).get("points", 0)
    return points


def validate_notebook(path: str | Path) -> list[str]:
    """All problems with the solution notebook at `path` (empty when it is valid)."""
    nb = read(path)
    return nbgrader_errors(nb) + course_errors(nb, path)
