"""Shared fixtures: the fixture course and every solution notebook of the real course."""
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_COURSE = Path(__file__).resolve().parent / "fixtures" / "course"


def course_folders():
    """(solutions_dir, exercises_dir) pairs: the fixture course always, the real course when it has notebooks."""
    return [(FIXTURE_COURSE / "solutions", FIXTURE_COURSE / "exercises"), (ROOT / "solutions", ROOT / "exercises")]


def solution_notebooks():
    """Every solution notebook: the fixture's and the course's (chapters added later are picked up)."""
    return [p for solutions, _ in course_folders() for p in sorted(solutions.glob("[0-9][0-9]*_*.ipynb"))]


def notebook_id(path):
    return f"{path.parent.parent.name}/{path.parent.name}/{path.name}"


@pytest.fixture(scope="session")
def fixture_course():
    return FIXTURE_COURSE
