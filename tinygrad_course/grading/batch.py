"""The batch grader: every submission of one assignment -> grades CSV + one feedback file per student."""
from __future__ import annotations

import csv
import io
import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import cache, feedback
from .notebook_files import read, reads, write_atomic
from .registry import chapter_module
from .sandbox import landlock
from .sandbox.plan import build_plan
from .sandbox.runner import Limits, run_submission, trusted_imports
from .validate import exercise_points


@dataclass
class GradeOptions:
    """How to grade: limits per notebook, parallelism, the OS sandbox mode and where side files go."""

    limits: Limits = field(default_factory=Limits)
    jobs: int = os.cpu_count() or 1
    use_cache: bool = True
    feedback_dir: Path | None = None
    cache_dir: Path | None = None
    os_sandbox: str = "auto"   # Landlock: "auto" (when the kernel has it), "require" or "off"
    audit_fences: bool = True  # tests only: False simulates submissions that got past the audit hook


def find_solution(solutions_dir: str | Path, assignment: str) -> Path:
    """The solution notebook NN_*.ipynb of `assignment` ("01" or "1")."""
    matches = sorted(Path(solutions_dir).glob(f"{int(assignment):02d}_*.ipynb"))
    if len(matches) != 1:
        raise FileNotFoundError(f"expected one {int(assignment):02d}_*.ipynb in {solutions_dir}, found {len(matches)}")
    return matches[0]


def find_submissions(submissions_dir: str | Path, assignment: str) -> dict[str, Path | None]:
    """Student name -> submitted notebook: SUBMISSIONS/<student>/**/NN_*.ipynb or SUBMISSIONS/<student>.ipynb."""
    prefix = f"{int(assignment):02d}_"
    found: dict[str, Path | None] = {}
    for entry in sorted(Path(submissions_dir).iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            notebooks = sorted(p for p in entry.rglob(f"{prefix}*.ipynb") if ".ipynb_checkpoints" not in p.parts)
            found[entry.name] = notebooks[0] if notebooks else None
        elif entry.suffix == ".ipynb":
            found[entry.stem] = entry
    return found


def _safe_name(student: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.@-]", "_", student) or "_"


def grade_submission(student: str, path: Path | None, solution_path: Path, assignment: str,
                     options: GradeOptions, unreadable: list[str]) -> dict:
    """Grade one student; the result dict holds earned points, reasons and the feedback Markdown."""
    solution_nb = read(solution_path)
    points = exercise_points(solution_nb)
    earned = {e: 0.0 for e in points}
    reasons: dict[str, str] = {}
    report, problem = None, ""
    if path is None:
        problem = f"no notebook {int(assignment):02d}_*.ipynb was submitted"
    else:
        try:
            submission_nb = reads(path.read_text(encoding="utf-8"))
        except Exception as exc:
            submission_nb, problem = None, f"the submitted file is not a readable notebook ({type(exc).__name__})"
        if submission_nb is not None:
            chapter = f"{int(assignment):02d}"
            report = run_submission(
                build_plan(solution_nb, submission_nb),
                preload=["numpy", "tinygrad_course", "tinygrad_course.grading", chapter_module(chapter)],
                imports=trusted_imports(solution_nb), limits=options.limits, unreadable=unreadable,
                os_sandbox=options.os_sandbox, submission=str(path.resolve()), audit_fences=options.audit_fences,
            )
            problem = report.problem
            for exercise in points:
                outcome = report.outcomes.get(exercise)
                if outcome and outcome.passed:
                    earned[exercise] = float(points[exercise])
                elif outcome:
                    reasons[exercise] = outcome.message or "the test failed"
                else:
                    reasons[exercise] = f"not graded: {problem or 'its test did not run'}"
    for exercise in points:
        if path is None or problem and exercise not in reasons and not earned[exercise]:
            reasons.setdefault(exercise, problem)
    text = feedback.render(student, assignment, points, earned, reasons, report, problem)
    isolation = (report.isolation or "unknown") if report else "not run"
    return {"student": student, "earned": earned, "reasons": reasons, "problem": problem, "feedback": text,
            "isolation": isolation, "isolation_detail": report.isolation_detail if report else ""}


def isolation_summary(results: list[dict]) -> str:
    """One line for the batch report: which isolation level graded how many notebooks, e.g.
    'isolation: landlock + audit hook (Landlock ABI 7: files, TCP, ...) for 12 notebooks'."""
    groups: dict[tuple[str, str], int] = {}
    for result in results:
        if result.get("isolation", "not run") != "not run":
            key = (result["isolation"], result.get("isolation_detail", ""))
            groups[key] = groups.get(key, 0) + 1
    if not groups:
        return "isolation: no notebook was run"
    parts = []
    for (level, detail), count in sorted(groups.items()):
        name = "landlock + audit hook" if level == "landlock" else level
        parts.append(f"{name}{f' ({detail})' if detail else ''} for {count} notebook{'s' * (count != 1)}")
    return "isolation: " + "; ".join(parts)


def _csv_text(results: list[dict], points: dict[str, float]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["student", *points, "total", "max", "problem"])
    for result in sorted(results, key=lambda r: r["student"]):
        earned = result["earned"]
        writer.writerow([result["student"], *(f"{earned.get(e, 0):g}" for e in points),
                         f"{sum(earned.values()):g}", f"{sum(points.values()):g}", result["problem"]])
    return buffer.getvalue()


def grade_all(submissions_dir: str | Path, assignment: str, out: str | Path,
              solutions_dir: str | Path = "solutions", options: GradeOptions | None = None) -> list[dict]:
    """Grade every submission in parallel, write `out` (CSV) atomically and the feedback files."""
    options = options or GradeOptions()
    use_landlock, _ = landlock.decide(options.os_sandbox)  # "require" fails here, before anything is graded
    out = Path(out)
    feedback_dir = Path(options.feedback_dir or out.with_name(out.stem + "_feedback"))
    cache_dir = Path(options.cache_dir or out.with_name("." + out.stem + "_cache"))
    solution_path = find_solution(solutions_dir, assignment)
    points = exercise_points(read(solution_path))
    submissions = find_submissions(submissions_dir, assignment)
    unreadable = [str(Path(p).resolve()) for p in (solutions_dir, submissions_dir, feedback_dir, cache_dir, out)]
    results_cache = cache.ResultCache(cache_dir)
    grader = cache.grader_fingerprint()
    limits = repr(options.limits) + f" os_sandbox={options.os_sandbox}:{use_landlock} fences={options.audit_fences}"

    def grade(item):
        student, path = item
        content = path.read_bytes() if path is not None and path.is_file() else b"<missing>"
        content_key = cache.key(content, solution_path.read_bytes(), grader, limits)
        if options.use_cache:
            cached = results_cache.get(student, content_key)
            if cached is not None:
                return cached
        try:
            result = grade_submission(student, path, solution_path, assignment, options, unreadable)
        except Exception as exc:  # one broken submission must never stop the batch
            earned = {e: 0.0 for e in points}
            problem = f"grader error: {type(exc).__name__}: {exc}"
            result = {"student": student, "earned": earned, "reasons": {e: problem for e in points},
                      "problem": problem, "isolation": "not run", "isolation_detail": "", "feedback": feedback.render(student, assignment, points, earned, {}, None, problem)}
        results_cache.put(student, content_key, result)
        return result

    with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
        results = list(pool.map(grade, submissions.items()))
    for result in results:
        write_atomic(feedback_dir / f"{_safe_name(result['student'])}.md", result["feedback"])
    write_atomic(out, _csv_text(results, points))
    return results
