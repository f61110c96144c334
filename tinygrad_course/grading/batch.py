"""The batch grader: every submission of one assignment -> grades CSV + one feedback file per student.

The solution notebook runs once (the reference run); every submission runs in its own contained worker;
the grader compares the two runs' observations and decides the points (see :mod:`.judge`). One bad file
never stops the class; SIGTERM or Ctrl-C stop the batch promptly, kill every worker and write what
finished to a separate partial CSV (the previous complete CSV stays as it was; the cache lets the next run
resume).
"""
from __future__ import annotations

import importlib
import inspect
import json
import os
import signal
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import cache, feedback, outputs, submissions
from .judge import Verdict, judge
from .markers import assignment_prefix
from .notebook_files import read, write_atomic
from .registry import chapter_module, check_modules
from .sandbox import containment
from .sandbox.isolation import Isolation, choose
from .sandbox.plan import MalformedNotebook, Plan, build_plan
from .sandbox.probe import make_check_probe
from .sandbox.runner import Limits, RunReport, run_plan, trusted_imports
from .source_shortcuts import shortcut_findings
from .validate import exercise_points


class Interrupted(RuntimeError):
    """The batch was stopped (SIGTERM / Ctrl-C); finished rows were written."""


class ReferenceFailed(RuntimeError):
    """The solution notebook does not pass its own tests in the grader: nothing can be graded against it."""


@dataclass
class GradeOptions:
    """How to grade: limits per notebook, parallelism, isolation level and where side files go."""

    limits: Limits = field(default_factory=Limits)
    jobs: int = os.cpu_count() or 1
    use_cache: bool = True
    feedback_dir: Path | None = None
    cache_dir: Path | None = None
    # "auto" (Landlock where the kernel has it, else bubblewrap), "kernel" or "bwrap" (each fails before
    # anything runs if it cannot be had) or, asked for by name only, "unsafe-audit-hook-only" /
    # "unsafe-no-isolation"; tests may pass an Isolation
    isolation: str | Isolation = "auto"


def find_solution(solutions_dir: str | Path, assignment: str) -> Path:
    """The solution notebook NN_*.ipynb of `assignment` ("01" or "1"; "05b" for a lab)."""
    prefix = assignment_prefix(assignment)
    matches = sorted(Path(solutions_dir).glob(f"{prefix}_*.ipynb"))
    if len(matches) != 1:
        raise FileNotFoundError(f"expected one {prefix}_*.ipynb in {solutions_dir}, found {len(matches)}")
    return matches[0]


@dataclass
class _Batch:
    assignment: str
    solution_nb: object
    solution_bytes: bytes
    points: dict
    options: GradeOptions
    isolation: object
    unreadable: list
    stop: threading.Event
    reference: dict = field(default_factory=dict)  # test label -> StepRecord of the solution's run

    def run(self, plan: Plan) -> RunReport:
        module = chapter_module(assignment_prefix(self.assignment))
        # every check module of the chapter as a probe (a chNN_<part> module too: it registers after chNN's
        # probe, replacing the real checks that chNN's `from . import` registered)
        checks = {name: make_check_probe(inspect.getsource(importlib.import_module(name)))
                  for name in check_modules(assignment_prefix(self.assignment))}
        preload = ["numpy", "tinygrad_course", "tinygrad_course.grading", module]
        return run_plan(plan.steps, preload=preload, imports=trusted_imports(self.solution_nb), limits=self.options.limits,
                        isolation=self.isolation, unreadable=self.unreadable, checks=checks, stop=self.stop)


def observation_kinds(record, probe) -> list[str]:
    """The kind of each observation of one test's reference record ("close", "equal", "true", ...)."""
    return [probe.sites[o["site"]]["kind"] if probe is not None and o.get("site") in probe.sites else str(o.get("kind"))
            for o in record.observations]


def reference_run(solutions_dir: str | Path, assignment: str, options: GradeOptions | None = None) -> dict:
    """test label -> (the solution's record, the probe): what every submission of `assignment` is compared with."""
    options = options or GradeOptions()
    solution_path = find_solution(solutions_dir, assignment)
    solution_nb = read(solution_path)
    isolation = options.isolation if isinstance(options.isolation, Isolation) else choose(options.isolation)
    batch = _Batch(assignment, solution_nb, solution_path.read_bytes(), exercise_points(solution_nb), options, isolation,
                   [str(Path(solutions_dir).resolve())], threading.Event())
    plan = build_plan(solution_nb, json.loads(batch.solution_bytes))
    records = _reference(batch, plan)
    return {step.label: (records[step.label], plan.probes.get(i)) for i, step in enumerate(plan.steps) if step.kind == "test"}


def _reference(batch: _Batch, plan: Plan | None = None) -> dict:
    plan = plan or build_plan(batch.solution_nb, json.loads(batch.solution_bytes))
    report = batch.run(plan)
    records = {step.label: report.steps.get(i) for i, step in enumerate(plan.steps) if step.kind == "test"}
    broken = [f"{label}: {r.error if r and r.error else 'did not finish'}" for label, r in records.items()
              if r is None or not r.finished or r.error]
    if broken or report.problem:
        raise ReferenceFailed("the solution notebook fails in the grader: " + "; ".join(broken + [report.problem]))
    return records


def _row(student: str, batch: _Batch, verdicts: dict, problems: list[str]) -> dict:
    earned = {e: float(p) if verdicts.get(e) is not None and verdicts[e].passed else 0.0 for e, p in batch.points.items()}
    return {"student": student, "earned": earned, "problem": "; ".join(p for p in problems if p),
            "isolation": batch.isolation.describe(), "verdicts": {e: asdict(v) for e, v in verdicts.items()}}


def grade_submission(found: submissions.Found, root: Path, batch: _Batch, results_cache) -> dict | None:
    """Grade one student (None if the batch was stopped meanwhile); never raises."""
    try:
        return _grade_one(found, root, batch, results_cache)
    except Exception as exc:  # a grader bug on one notebook must not stop the class
        return _row(found.student, batch, {}, [f"grader error: {type(exc).__name__}: {str(exc)[:300]}", found.note])


def _grade_one(found: submissions.Found, root: Path, batch: _Batch, results_cache) -> dict | None:
    if found.parts is None:
        return _row(found.student, batch, {}, [found.problem or f"no notebook {assignment_prefix(batch.assignment)}_*.ipynb was submitted"])
    try:
        data = submissions.read_beneath(root, found.parts)
    except OSError as exc:
        return _row(found.student, batch, {}, [str(exc), found.note])
    key = cache.key(data, batch.solution_bytes, cache.grader_fingerprint(), repr(batch.options.limits), batch.isolation.describe())
    cached = results_cache.get(found.student, key) if batch.options.use_cache else None
    if cached is not None:
        return cached
    try:
        submitted = json.loads(data.decode("utf-8"))
        size = submissions.size_without_outputs(submitted)
        if size > submissions.MAX_CELLS_BYTES:
            why = (f"{found.parts[-1]} is {size / 2**20:.0f} MiB without its outputs, more than the limit of "
                   f"{submissions.MAX_CELLS_BYTES >> 20} MiB")
            return _row(found.student, batch, {}, [why, found.note])
        plan = build_plan(batch.solution_nb, submitted)
    except (ValueError, MalformedNotebook, RecursionError) as exc:
        return _row(found.student, batch, {}, [f"the submitted file is not a readable notebook ({type(exc).__name__}: {str(exc)[:200]})", found.note])
    report = batch.run(plan)
    if batch.stop.is_set():
        return None
    cheats = shortcut_findings(plan, batch.solution_nb)
    verdicts: dict[str, Verdict] = {}
    for index, step in enumerate(plan.steps):
        if step.kind != "test" or step.exercise is None:
            continue
        if cheats.get(step.exercise):
            verdict = Verdict(False, f"your code uses {cheats[step.exercise]}, which this exercise asks you to write yourself")
        else:
            verdict = judge(batch.reference.get(step.label), report.steps.get(index), plan.probes.get(index),
                            report.skipped.get(index, report.problem))
        if step.exercise not in verdicts or verdicts[step.exercise].passed:
            verdicts[step.exercise] = verdict
    problems = [found.note, *plan.problems, report.problem]
    problems += [f"{plan.steps[i].label} was skipped after it {why}" for i, why in report.skipped.items()]
    if report.malformed:
        problems.append(f"{report.malformed} malformed line(s) on the grader's channel were ignored")
    result = _row(found.student, batch, verdicts, problems)
    results_cache.put(found.student, key, result)
    return result


def partial_path(out: str | Path) -> Path:
    """Where a stopped batch writes the rows that finished: grades.csv -> grades.partial.csv."""
    out = Path(out)
    return out.with_name(out.stem + ".partial" + out.suffix)


def _write(out: Path, feedback_dir: Path, results: list[dict], batch: _Batch) -> None:
    names = outputs.feedback_names([r["student"] for r in results])
    for result in results:
        verdicts = {e: Verdict(**v) for e, v in result.get("verdicts", {}).items()}
        text = feedback.render(result["student"], batch.assignment, batch.points, result["earned"], verdicts,
                               result["problem"], result["isolation"])
        write_atomic(feedback_dir / f"{names[result['student']]}.md", text)
    write_atomic(out, outputs.csv_text(results, batch.points))


def isolation_summary(results: list[dict]) -> str:
    """One line for the batch report: which isolation graded how many notebooks."""
    groups: dict[str, int] = {}
    for result in results:
        groups[result["isolation"]] = groups.get(result["isolation"], 0) + 1
    return "isolation: " + ("; ".join(f"{k} for {n} notebook{'s' * (n != 1)}" for k, n in sorted(groups.items())) or "none")


def grade_all(submissions_dir: str | Path, assignment: str, out: str | Path,
              solutions_dir: str | Path = "solutions", options: GradeOptions | None = None) -> list[dict]:
    """Grade every submission, write `out` (CSV) atomically and the feedback files. When SIGTERM/SIGINT
    arrive, leave `out` as it was, write what finished to :func:`partial_path` and raise Interrupted."""
    options = options or GradeOptions()
    isolation = options.isolation if isinstance(options.isolation, Isolation) else choose(options.isolation)
    out = Path(out)
    feedback_dir = Path(options.feedback_dir or out.with_name(out.stem + "_feedback"))
    cache_dir = Path(options.cache_dir or out.with_name("." + out.stem + "_cache"))
    solution_path = find_solution(solutions_dir, assignment)
    solution_bytes = solution_path.read_bytes()
    solution_nb = read(solution_path)
    partial = partial_path(out)
    unreadable = [str(Path(p).resolve())
                  for p in (solutions_dir, submissions_dir, feedback_dir, cache_dir, out, partial)]
    batch = _Batch(assignment, solution_nb, solution_bytes, exercise_points(solution_nb), options, isolation,
                   unreadable, threading.Event())
    previous = _install_stop_handlers(batch.stop)
    results: list[dict] = []
    try:
        batch.reference = _reference(batch)
        found = submissions.find(submissions_dir, assignment)
        results_cache = cache.ResultCache(cache_dir)
        with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
            futures = [pool.submit(grade_submission, f, Path(submissions_dir), batch, results_cache) for f in found]
            for future in as_completed(futures):
                if batch.stop.is_set():
                    for pending in futures:
                        pending.cancel()
                if not future.cancelled() and future.result() is not None:
                    results.append(future.result())
    finally:
        _restore(previous)
        if batch.reference:
            _write(partial if batch.stop.is_set() else out, feedback_dir, results, batch)
    if batch.stop.is_set():
        kept = f"{out} was left as it was" if out.exists() else f"no {out} was written"
        raise Interrupted(f"stopped: {len(results)} notebook(s) graded and written to {partial} ({kept}); "
                          "run again to resume")
    partial.unlink(missing_ok=True)
    return results


def _install_stop_handlers(stop: threading.Event) -> dict:
    if threading.current_thread() is not threading.main_thread():
        return {}

    def handler(signum, frame):
        stop.set()
        containment.kill_all()
    return {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGINT)}


def _restore(previous: dict) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler)
