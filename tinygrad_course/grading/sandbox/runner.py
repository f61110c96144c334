"""Running one notebook's plan in a contained worker and collecting what it observed.

The grader owns the channel (a pipe whose read end only it holds), times every step from outside
(a worker that blocks SIGALRM is still stopped), and restarts the notebook without a step that hung or
crashed the worker, so that one bad cell costs only the tests that depend on it. Events are accepted
only while the worker is alive; after it is killed the pipe is closed.

What the grader says about its own sandbox comes from what it saw before any learner code could run: the
worker's first event is either ``isolation`` (the layers are in place; learner code runs after it) or
``sandbox_failed``. Nothing the notebook prints or sends later, nor its exit status, can change that.
"""
from __future__ import annotations

import ast
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

from ..parsing import parse
from . import channel, containment
from .isolation import Isolation
from .plan import Step

PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
EXIT_GRACE = 5.0  # seconds a worker whose channel closed may take to exit by itself
# -I: no environment, no user site, no current directory on sys.path; the worker runs the grader's own copy
WORKER = [sys.executable, "-I", "-c", "import sys; sys.path.insert(0, sys.argv.pop(1)); "
          "from tinygrad_course.grading.sandbox.worker import main; main()", PACKAGE_PARENT]


@dataclass(frozen=True)
class Limits:
    """Per-notebook limits, all enforced by the grader or the kernel, none by the worker's goodwill."""

    timeout: float = 300.0      # whole notebook, wall clock, across restarts
    cell_timeout: float = 60.0  # one cell or one graded test, wall clock
    memory_mb: int = 2048       # address space of the worker
    disk_mb: int = 64           # private temporary folder (tmpfs size) and largest file
    restarts: int = 2           # reruns without a step that hung or killed the worker


@dataclass
class StepRecord:
    """What the worker said about one step: its observations and how it ended."""

    observations: list[dict] = field(default_factory=list)
    error: str | None = None
    finished: bool = False


@dataclass
class RunReport:
    """Everything the grader learned from running one notebook (all of it untrusted data but `problem`)."""

    steps: dict[int, StepRecord] = field(default_factory=dict)
    skipped: dict[int, str] = field(default_factory=dict)
    problem: str = ""
    isolation: str = ""
    malformed: int = 0


def trusted_imports(solution_nb) -> list[tuple[str, str, str | None]]:
    """(name, module, attribute) bound by import statements in the instructor's locked setup cells."""
    found = []
    for cell in solution_nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type != "code" or not meta.get("locked") or meta.get("grade") or meta.get("solution"):
            continue
        try:
            tree = parse(cell.source)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.Import):
                found += [(a.asname or a.name.split(".")[0], a.name if a.asname else a.name.split(".")[0], None) for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found += [(a.asname or a.name, node.module, a.name) for a in node.names if a.name != "*"]
    return found


def _environment(home: str) -> dict:
    env = {key: os.environ[key] for key in ("PATH", "LANG", "LC_ALL") if key in os.environ}
    env.update(HOME=home, TMPDIR=home, MPLBACKEND="Agg", MPLCONFIGDIR=home, PYTHONHASHSEED="0",
               PYTHONDONTWRITEBYTECODE="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", TINYGRAD_COURSE_GRADING="1")
    return env


class _Attempt:
    """One run of the worker: reads the channel, watches the clocks, kills the whole box at the end."""

    def __init__(self, spec: dict, isolation: Isolation, limits: Limits, deadline: float, stop: threading.Event):
        self.spec, self.isolation, self.limits, self.deadline, self.stop = spec, isolation, limits, deadline, stop
        self.events: list[dict] = []
        self.malformed, self.current, self.started_at = 0, None, 0.0
        self.ending, self.done, self.next_disk_check = "", False, 0.0
        self.confined: bool | None = None  # set by the worker's first event, before any learner code ran
        self.sandbox_failed = ""

    def _take(self, data: bytearray) -> None:
        *lines, rest = bytes(data).split(b"\n")
        data[:] = rest
        events, bad = channel.parse_events(b"\n".join(lines))
        self.malformed += bad
        for item in events:
            self.events.append(item)
            kind, step = item.get("e"), item.get("step")
            if self.confined is None:
                self.confined = kind == "isolation"
                if kind == "sandbox_failed":
                    self.sandbox_failed = str(item.get("why"))[:500]
            if kind == "start" and type(step) is int:
                self.current, self.started_at = step, time.monotonic()
            elif kind == "end" and step == self.current:
                self.current = None
            elif kind == "done":
                self.done = True

    def run(self, sandbox: str) -> None:
        read_fd, write_fd = os.pipe()
        # the notebook's own prints go nowhere: the grader reads only the channel
        process = containment.start([*WORKER, str(write_fd)], use_namespace=self.isolation.namespace,
                                    prefix=self.isolation.prefix(sandbox, self.limits.disk_mb),
                                    stdin=-1, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=sandbox,
                                    env=_environment(sandbox), pass_fds=(write_fd,))
        os.close(write_fd)
        try:
            try:
                process.stdin.write(json.dumps(self.spec).encode())
                process.stdin.close()
            except OSError:
                pass
            self._watch(process, read_fd)
        finally:
            containment.kill(process)
            os.close(read_fd)  # nothing written after this moment can reach the grader
            self.returncode = process.returncode

    def _watch(self, process, read_fd: int) -> None:
        data, total, exited_at = bytearray(), 0, None
        while True:
            # once the worker has exited, what it wrote last may still be in the pipe: read until the pipe is
            # empty (or closed) before concluding, or a worker that finished between two looks would lose its results
            ready, _, _ = select.select([read_fd], [], [], 0.05 if exited_at is None else 0)
            if ready:
                chunk = os.read(read_fd, 1 << 16)
                if not chunk:
                    break
                total += len(chunk)
                if total > channel.MAX_TOTAL:
                    self.ending = f"the notebook sent more than {channel.MAX_TOTAL >> 20} MiB of results"
                    return
                data += chunk
                if b"\n" in chunk:
                    self._take(data)
                continue
            if exited_at is not None:
                break
            now = time.monotonic()
            if self.stop.is_set():
                self.ending = "stopped"
                return
            if now > self.deadline:
                self.ending = f"the notebook did not finish within {self.limits.timeout:g} s and was stopped"
                return
            if self.current is not None and now - self.started_at > self.limits.cell_timeout + 2:
                self.ending = f"stopped after {self.limits.cell_timeout:g} s"
                return
            if process.poll() is not None:
                exited_at = now
                continue
            if not self.isolation.private_tmpfs and now > self.next_disk_check:  # no private tmpfs: measure
                self.next_disk_check = now + 0.5
                if _usage(self.spec["sandbox"]) > self.limits.disk_mb * 2**20:
                    self.ending = f"the notebook wrote more than {self.limits.disk_mb} MiB"
                    return
        try:  # the channel closed: let the worker's launcher report its exit status before the kill
            process.wait(timeout=EXIT_GRACE)
        except subprocess.TimeoutExpired:
            pass
        if data:
            self._take(data + b"\n")


def _usage(folder: str) -> int:
    """Bytes of disk used under `folder` (allocated blocks, so sparse files count as what they use)."""
    total = 0
    for parent, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(parent, name)).st_blocks * 512
            except OSError:
                pass
    return total


def _describe_exit(attempt: _Attempt, limits: Limits) -> str:
    returncode = attempt.returncode
    if attempt.isolation.bwrap and returncode is not None and returncode > 128:
        returncode = 128 - returncode  # bwrap exits with 128 + N when the worker was killed by signal N
    if attempt.sandbox_failed:
        return f"the OS sandbox could not be applied: {attempt.sandbox_failed}; the notebook was not run"
    if not attempt.confined:
        return (f"the grader's worker stopped before the notebook ran (exit code {returncode}; its sandbox or its "
                "imports could not be set up); the notebook was not run")
    if returncode is not None and returncode < 0:
        name = signal.Signals(-returncode).name
        if -returncode in (signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS):
            return f"the notebook process crashed ({name}); a likely cause is running out of memory (limit {limits.memory_mb} MiB)"
        return f"the notebook process was stopped by {name}"
    return f"the notebook process exited early (exit code {returncode})"


def run_plan(steps: list[Step], *, preload: list[str], imports, limits: Limits, isolation: Isolation,
             unreadable: list[str], checks: dict | None = None, stop: threading.Event | None = None) -> RunReport:
    """Run `steps` in contained workers (restarting without a step that hung or crashed); never raises for
    anything the notebook does."""
    stop = stop or threading.Event()
    report = RunReport(isolation=isolation.name)
    deadline = time.monotonic() + limits.timeout
    base = {"steps": [{"kind": s.kind, "label": s.label, "source": s.source} for s in steps], "preload": preload,
            "trusted_imports": imports, "unreadable": unreadable, "cell_timeout": limits.cell_timeout,
            "limits": {"memory_mb": limits.memory_mb, "disk_mb": limits.disk_mb, "cpu_s": int(limits.timeout) + 5},
            "landlock": isolation.landlock, "tmpfs": isolation.namespace and not isolation.bwrap,
            "fences": isolation.fences,
            "checks": checks or {}}
    for _ in range(limits.restarts + 1):
        sandbox = tempfile.mkdtemp(prefix="tinygrad-grade-")
        try:
            spec = dict(base, sandbox=sandbox, skip=sorted(report.skipped),
                        readable=isolation.readable(sandbox) if isolation.landlock else [])
            attempt = _Attempt(spec, isolation, limits, deadline, stop)
            attempt.run(sandbox)
        finally:
            shutil.rmtree(sandbox, ignore_errors=True)
        report.malformed += attempt.malformed
        fresh: dict[int, StepRecord] = {}
        for item in attempt.events:
            step = item.get("step")
            if type(step) is not int or not 0 <= step < len(steps) or step in report.skipped:
                if item.get("e") == "isolation" and type(item.get("layers")) is list and "(" not in report.isolation:
                    report.isolation += " (" + ", ".join(str(x)[:200] for x in item["layers"]) + ")"
                continue
            record = fresh.setdefault(step, StepRecord())
            if item["e"] == "obs" and not record.finished:
                record.observations.append(item)
            elif item["e"] == "end":
                record.finished, record.error = True, str(item.get("error"))[:2000] if item.get("error") else None
        report.steps.update(fresh)
        if attempt.done or attempt.ending == "stopped" or time.monotonic() > deadline:
            report.problem = "" if attempt.done else attempt.ending or _describe_exit(attempt, limits)
            break
        why = attempt.ending or _describe_exit(attempt, limits)
        if attempt.current is None or not attempt.confined:
            report.problem = why
            break
        report.skipped[attempt.current] = why
    else:
        report.problem = "the notebook kept failing after restarts: " + "; ".join(report.skipped.values())
    return report
