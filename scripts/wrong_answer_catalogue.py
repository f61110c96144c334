"""List the exercises whose catalogue of wrong answers is incomplete.

Runs tests/grading/test_wrong_answers_*.py with this file as a pytest plugin that records every `check()`
call: which exercise, which objects, and whether it passed, failed as "not implemented yet" (the stub) or
failed otherwise (a wrong answer). Then, for every graded exercise of solutions/ (the lab included), prints
how many distinct wrong answers failed its check and whether its stub was checked, and marks the exercises
with fewer than two wrong answers or no stub test.

    .venv/bin/python scripts/wrong_answer_catalogue.py           # the table
    .venv/bin/python scripts/wrong_answer_catalogue.py --check   # exit 1 when an exercise is incomplete
"""
from __future__ import annotations

import collections
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
MINIMUM = 2
CALLS: list = []   # (exercise, ids of the objects, "pass" | "stub" | "wrong")
_KEPT: list = []   # the checked objects, kept alive so that their ids stay distinct


def graded_exercises(solutions=ROOT / "solutions") -> list[str]:
    """Exercise ids ("04.2", "05b.6") of every graded test cell in solutions/, in notebook order."""
    ids = []
    for path in sorted(solutions.glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            match = re.fullmatch(r"ex(\d\d[a-z]?)_(\d+)_check", meta.get("grade_id", "")) if meta.get("grade") else None
            if match:
                ids.append(f"{match.group(1)}.{match.group(2)}")
    return ids


def tally(calls, exercises):
    """{exercise: (number of distinct failing wrong answers, stub checked)} for every exercise."""
    wrong, stub = collections.defaultdict(set), set()
    for exercise, objects, kind in calls:
        if kind == "wrong":
            wrong[exercise].add(objects)
        elif kind == "stub":
            stub.add(exercise)
    return {e: (len(wrong[e]), e in stub) for e in exercises}


def incomplete(table):
    return [e for e, (n, stub) in table.items() if n < MINIMUM or not stub]


# ---- the pytest plugin --------------------------------------------------------------------------------------
def pytest_configure(config):
    import tinygrad_course.grading as grading
    original = grading.check

    def recording_check(exercise, *objects, **kwargs):
        _KEPT.append(objects)
        key = tuple(id(o) for o in objects)
        try:
            result = original(exercise, *objects, **kwargs)
        except grading.CheckFailed as failure:
            CALLS.append((exercise, key, "stub" if "not implemented yet" in str(failure) else "wrong"))
            raise
        CALLS.append((exercise, key, "pass"))
        return result

    grading.check = recording_check  # before the test modules import it


def main(argv) -> int:
    import pytest
    files = sorted(str(p) for p in (ROOT / "tests" / "grading").glob("test_wrong_answers_*.py"))
    code = pytest.main(["-q", "-p", "no:cacheprovider", *files], plugins=[sys.modules[__name__]])
    table = tally(CALLS, graded_exercises())
    print(f"\n{'exercise':9}{'wrong answers':>14}  stub checked")
    for exercise, (n, stub) in table.items():
        flag = "  <-- incomplete" if n < MINIMUM or not stub else ""
        print(f"{exercise:9}{n:>14}  {'yes' if stub else 'NO':12}{flag}")
    missing = incomplete(table)
    print(f"\n{len(missing)} of {len(table)} exercises have fewer than {MINIMUM} catalogued wrong answers or no "
          f"stub test{': ' + ', '.join(missing) if missing else ''}")
    return 1 if "--check" in argv and (missing or code) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
