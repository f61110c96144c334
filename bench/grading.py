"""Batch-grading speed: N submissions of assignment 05 (default 200) graded as an instructor would.

The class is built from the released exercises/05_training.ipynb and solutions/05_training.ipynb: a
quarter of the students solve everything, the others a different subset of the seven exercises (the rest
keep the released stubs). Each notebook runs in its own contained worker under the default isolation,
the solution once more as the reference run, and the script prints the wall-clock time and checks that
every student got exactly the points of the exercises they solved.

    python bench/grading.py [--count 200] [--jobs 2]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

from tinygrad_course.grading.batch import GradeOptions, grade_all
from tinygrad_course.grading.markers import keep_solutions
from tinygrad_course.grading.notebook_files import nbgrader_meta, read
from tinygrad_course.grading.validate import exercise_points

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = ROOT / "solutions" / "05_training.ipynb"
EXERCISE = ROOT / "exercises" / "05_training.ipynb"


def build_class(folder: Path, count: int) -> dict[str, set[str]]:
    """Write `count` submissions into `folder`; return student -> exercises they solved."""
    solved_code = {nbgrader_meta(c)["grade_id"]: keep_solutions(c.source)
                   for c in read(SOLUTION).cells if nbgrader_meta(c).get("solution")}
    released = json.loads(EXERCISE.read_text())
    exercises = sorted(f"05.{g[-1]}" for g in solved_code)
    solved = {}
    for i in range(count):
        chosen = set(exercises) if i % 4 == 0 else {e for k, e in enumerate(exercises) if (i >> k) & 1}
        nb = json.loads(json.dumps(released))
        for cell in nb["cells"]:
            grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id")
            if grade_id in solved_code and f"05.{grade_id[-1]}" in chosen:
                cell["source"] = solved_code[grade_id]
        student = f"student{i:03d}"
        (folder / student).mkdir(parents=True)
        (folder / student / EXERCISE.name).write_text(json.dumps(nb))
        solved[student] = chosen
    return solved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="grading-bench-"))
    try:
        solutions = work / "solutions"
        solutions.mkdir()
        shutil.copy(SOLUTION, solutions)
        solved = build_class(work / "submitted", args.count)
        points = exercise_points(read(SOLUTION))
        options = GradeOptions(jobs=args.jobs, use_cache=False)
        started = time.perf_counter()
        results = grade_all(work / "submitted", "05", work / "grades.csv", solutions, options)
        seconds = time.perf_counter() - started
        wrong = [r["student"] for r in results
                 if r["earned"] != {e: float(p) if e in solved[r["student"]] else 0.0 for e, p in points.items()}]
        print(f"{len(results)} submissions of assignment 05 graded in {seconds:.1f} s "
              f"({seconds / len(results):.2f} s per notebook, {args.jobs} jobs, {os.cpu_count()} cores, "
              f"{platform.processor() or platform.machine()}); isolation: {results[0]['isolation']}")
        print(f"graded right: {len(results) - len(wrong)} of {len(results)}" + (f"; wrong: {wrong[:10]}" if wrong else ""))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
