"""The authoring markers and the exercise naming convention shared by release, validation and grading."""
from __future__ import annotations

import re

BEGIN_SOLUTION = "### BEGIN SOLUTION"
END_SOLUTION = "### END SOLUTION"
BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"
END_HIDDEN = "### END HIDDEN TESTS"

# Exercise "01.2" <-> grade_id "ex01_2" (nbgrader ids allow only [A-Za-z0-9_-]).
EXERCISE_ID = re.compile(r"^(\d\d[a-z]?)\.(\d+)$")  # "01.2", and "05b.1" for a lab between chapters
GRADE_ID = re.compile(r"^ex(\d\d[a-z]?)_(\d+)(?:_([A-Za-z0-9_\-]+))?$")
CHECK_SUFFIX = "check"


class MarkerError(ValueError):
    """A solution or hidden-test region is malformed (unbalanced or nested markers)."""


def exercise_of_grade_id(grade_id: str) -> str | None:
    """Return the exercise id ("01.2") a grade_id such as "ex01_2" or "ex01_2_check" belongs to."""
    m = GRADE_ID.match(grade_id or "")
    return f"{m.group(1)}.{int(m.group(2))}" if m else None


def assignment_prefix(assignment) -> str:
    """The file-name prefix of an assignment: "1" or "01" -> "01", "05b" (a lab) -> "05b"."""
    return f"{int(assignment):02d}" if str(assignment).isdigit() else str(assignment)


def check_grade_id(exercise: str) -> str:
    """The grade_id of the graded test cell of `exercise` ("01.2" -> "ex01_2_check")."""
    chapter, number = EXERCISE_ID.match(exercise).groups()
    return f"ex{chapter}_{number}_{CHECK_SUFFIX}"


def _regions(lines: list[str], begin: str, end: str) -> list[tuple[int, int]]:
    """(start, stop) line index pairs of each begin...end region, markers included."""
    regions, start = [], None
    for i, line in enumerate(lines):
        text = line.strip()
        if text.startswith(begin):
            if start is not None:
                raise MarkerError(f"nested '{begin}' at line {i + 1}")
            start = i
        elif text.startswith(end):
            if start is None:
                raise MarkerError(f"'{end}' without '{begin}' at line {i + 1}")
            regions.append((start, i))
            start = None
    if start is not None:
        raise MarkerError(f"'{begin}' at line {start + 1} is never closed")
    return regions


def has_solution(source: str) -> bool:
    """Whether `source` contains a solution region."""
    return bool(_regions(source.splitlines(), BEGIN_SOLUTION, END_SOLUTION))


def has_hidden_tests(source: str) -> bool:
    """Whether `source` contains a hidden-test region."""
    return bool(_regions(source.splitlines(), BEGIN_HIDDEN, END_HIDDEN))


def stub_solutions(source: str, exercise: str, name: str | None = None) -> str:
    """Replace every solution region with a line raising NotImplementedError that names the exercise."""
    lines = source.splitlines()
    for start, stop in reversed(_regions(lines, BEGIN_SOLUTION, END_SOLUTION)):
        indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
        owner = name or _enclosing_definition(lines, start, len(indent))
        label = f"Exercise {exercise}" + (f" ({owner})" if owner else "")
        stub = f'{indent}raise NotImplementedError("{label}: write your solution here")'
        lines[start : stop + 1] = [stub]
    return "\n".join(lines)


_DEFINITION = re.compile(r"^(\s*)(?:async\s+)?(?:def|class)\s+(\w+)")


def _enclosing_definition(lines: list[str], index: int, indent: int) -> str | None:
    """Name of the innermost def/class that encloses line `index` (indented by `indent`)."""
    for line in reversed(lines[:index]):
        m = _DEFINITION.match(line)
        if m and len(m.group(1)) < indent:
            return m.group(2)
    return None


def strip_hidden_tests(source: str) -> str:
    """Remove every hidden-test region, markers included."""
    lines = source.splitlines()
    for start, stop in reversed(_regions(lines, BEGIN_HIDDEN, END_HIDDEN)):
        del lines[start : stop + 1]
    return "\n".join(lines).rstrip()


def keep_solutions(source: str) -> str:
    """Drop the marker lines but keep the solution code (the source the instructor's notebook runs)."""
    return "\n".join(
        line for line in source.splitlines()
        if not line.strip().startswith((BEGIN_SOLUTION, END_SOLUTION, BEGIN_HIDDEN, END_HIDDEN))
    )
