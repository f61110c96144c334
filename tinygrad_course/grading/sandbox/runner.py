"""Grading one submission: a fresh worker process with resource limits, a timeout and signed results."""
from __future__ import annotations

import ast
import base64
import json
import marshal
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

from ..notebook_files import is_locked, is_solution_cell, is_test_cell
from . import landlock, protocol
from .plan import Step


@dataclass(frozen=True)
class Limits:
    """Per-submission limits."""

    timeout: float = 300.0       # whole notebook, seconds (wall clock)
    cell_timeout: float = 60.0   # one cell or one graded test, seconds
    memory_mb: int = 2048        # address space of the worker process
    output_mb: int = 64          # largest file the worker may write


@dataclass
class TestOutcome:
    """What happened to one graded test cell."""

    exercise: str
    passed: bool
    message: str


@dataclass
class RunReport:
    """Everything the grader learned from running one submission."""

    outcomes: dict[str, TestOutcome] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    problem: str = ""
    output_tail: str = ""
    isolation: str = ""         # protocol.LANDLOCK or protocol.AUDIT_HOOK_ONLY; "" if the worker never said
    isolation_detail: str = ""  # what the kernel enforces, or why Landlock was not used


def trusted_imports(solution_nb) -> list[tuple[str, str, str | None]]:
    """(name, module, attribute) bound by import statements in the instructor's locked setup cells."""
    found = []
    for cell in solution_nb.cells:
        if cell.cell_type != "code" or not is_locked(cell) or is_test_cell(cell) or is_solution_cell(cell):
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.Import):
                found += [(a.asname or a.name.split(".")[0], a.name if a.asname else a.name.split(".")[0], None) for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found += [(a.asname or a.name, node.module, a.name) for a in node.names if a.name != "*"]
    return found


def _environment(home: str) -> dict:
    env = {key: os.environ[key] for key in ("PATH", "LANG", "LC_ALL", "SYSTEMROOT") if key in os.environ}
    env.update(HOME=home, TMPDIR=home, MPLBACKEND="Agg", MPLCONFIGDIR=home, PYTHONHASHSEED="0",
               PYTHONDONTWRITEBYTECODE="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", TINYGRAD_COURSE_GRADING="1")
    return env


def _describe_exit(returncode: int | None, timed_out: bool, limits: Limits, output: str) -> str:
    if returncode == protocol.SANDBOX_FAILED_EXIT:
        why = [line for line in output.splitlines() if line.startswith(f"grader: {protocol.SANDBOX_FAILED}")]
        return why[-1][len("grader: "):] if why else protocol.SANDBOX_FAILED
    if timed_out:
        return f"the notebook did not finish within {limits.timeout:g} s and was stopped"
    if returncode is not None and returncode < 0:
        name = signal.Signals(-returncode).name
        if -returncode in (signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS):
            return f"the notebook process crashed ({name}); a likely cause is running out of memory (limit {limits.memory_mb} MiB)"
        return f"the notebook process was stopped by {name}"
    return f"the notebook process exited early (exit code {returncode})"


def run_submission(steps: list[Step], *, preload: list[str], imports, limits: Limits,
                   unreadable: list[str], os_sandbox: str = "auto", submission: str | None = None,
                   audit_fences: bool = True) -> RunReport:
    """Run `steps` in a fresh, limited worker; never raises for anything the submission does.

    `os_sandbox` ("auto", "require", "off") chooses the Landlock layer (see landlock.decide); `submission`
    is the graded notebook's path, readable by the worker. `audit_fences=False` is for tests only: it
    simulates a submission that got past the audit hook.
    """
    token = secrets.token_bytes(32)
    tests = {i: s for i, s in enumerate(steps) if s.kind == "test"}
    spec_steps = []
    for i, step in enumerate(steps):
        if step.kind == "test":
            code = compile(step.source, f"<graded test {step.label}>", "exec")
            spec_steps.append({"kind": "test", "label": step.label, "code": base64.b64encode(marshal.dumps(code)).decode()})
        else:
            spec_steps.append({"kind": "code", "label": step.label, "source": step.source, "learner": step.learner})
    sandbox = tempfile.mkdtemp(prefix="tinygrad-grade-")
    report = RunReport()
    try:
        use_landlock, reason = landlock.decide(os_sandbox)
        readable = landlock.readable_paths(sandbox, submission)
        spec = {"token": token.hex(), "steps": spec_steps, "preload": preload, "trusted_imports": imports,
                "writable": [sandbox, os.devnull], "unreadable": unreadable, "audit_fences": audit_fences,
                "os_sandbox": {"use": use_landlock, "mode": os_sandbox, "reason": reason, "readable": readable},
                "cell_timeout": limits.cell_timeout, "test_timeout": limits.cell_timeout,
                "limits": {"memory_mb": limits.memory_mb, "output_mb": limits.output_mb, "cpu_s": int(limits.timeout) + 5}}
        with tempfile.TemporaryFile() as results, open(os.path.join(sandbox, "output.log"), "w+b") as log:
            process = subprocess.Popen(
                [sys.executable, "-I", "-m", "tinygrad_course.grading.sandbox.worker", str(results.fileno())],
                stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, cwd=sandbox,
                env=_environment(sandbox), pass_fds=(results.fileno(),), start_new_session=True,
            )
            timed_out = False
            try:
                process.stdin.write(json.dumps(spec).encode())
                process.stdin.close()
            except BrokenPipeError:
                pass
            try:
                process.wait(timeout=limits.timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                process.wait()
            results.seek(0)
            payloads, forged = protocol.verify_lines(token, results.read())
            log.seek(0)
            report.output_tail = log.read()[-4000:].decode("utf-8", "replace")
        done = False
        for payload in payloads:
            if payload.get("type") == "test" and payload.get("index") in tests:
                step = tests[payload["index"]]
                report.outcomes.setdefault(step.exercise, TestOutcome(step.exercise, bool(payload["passed"]), payload.get("message", "")))
            elif payload.get("type") == "note":
                report.notes.append(payload.get("text", ""))
            elif payload.get("type") == "done":
                done = True
            elif payload.get("type") == "isolation" and not report.isolation:
                report.isolation, report.isolation_detail = str(payload.get("level")), str(payload.get("detail"))
        leaks = landlock.exposed(readable, unreadable) if report.isolation == protocol.LANDLOCK else []
        if leaks:
            report.isolation_detail += f"; readable because they lie inside allowed paths: {', '.join(leaks)}"
        if forged:
            report.notes.append(f"the notebook wrote {forged} line(s) imitating grader results; they were ignored")
        if not done:
            report.problem = _describe_exit(process.returncode, timed_out, limits, report.output_tail)
    except Exception as exc:  # the grader itself must not stop the batch
        report.problem = f"could not run the notebook: {type(exc).__name__}: {exc}"
    finally:
        shutil.rmtree(sandbox, ignore_errors=True)
    return report
