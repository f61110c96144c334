"""The worker process: runs one submission's plan (spec on stdin, signed results on the fd in argv[1]).

Started by :mod:`.runner` with resource limits, in an empty temporary directory. Learner and instructor
cells run in order in one namespace; graded tests are handed to the guard, which runs them from compiled
code that was never source text inside this process.
"""
from __future__ import annotations

import base64
import importlib
import json
import linecache
import marshal
import os
import resource
import signal
import sys
import threading

from tinygrad_course.grading.sandbox.protocol import (AUDIT_HOOK_ONLY, LANDLOCK, SANDBOX_FAILED,
                                                     SANDBOX_FAILED_EXIT)


class CellTimeout(BaseException):
    """A cell ran past the per-cell time limit."""


def _limit_resources(limits: dict) -> None:
    """Cap memory, file size and CPU time of this process before anything else runs."""
    memory = limits["memory_mb"] * 2**20
    output = limits["output_mb"] * 2**20
    for kind, value in ((resource.RLIMIT_AS, memory), (resource.RLIMIT_FSIZE, output),
                        (resource.RLIMIT_CORE, 0), (resource.RLIMIT_CPU, limits["cpu_s"])):
        resource.setrlimit(kind, (value, value))


def _trusted_names(imports) -> dict:
    """Resolve the instructor's setup imports now, before any learner code can interfere."""
    names = {}
    for name, module, attr in imports:
        try:
            value = importlib.import_module(module)
            names[name] = getattr(value, attr) if attr else value
        except Exception:
            continue
    return names


def _confine(os_sandbox: dict, writable: list[str]) -> dict:
    """Apply the Landlock layer if the grader asked for it; returns the isolation level to report.

    Runs before the audit hook is installed (the hook refuses ctypes). In "require" mode a failure ends the
    worker before any learner code runs.
    """
    hook_only = {"level": AUDIT_HOOK_ONLY, "detail": os_sandbox.get("reason", "")}
    if not os_sandbox.get("use"):
        return hook_only
    try:
        from tinygrad_course.grading.sandbox import landlock

        if threading.active_count() != 1:  # Landlock confines the calling thread and threads it starts later
            raise OSError(f"{threading.active_count()} Python threads were running before the restriction")
        detail = landlock.restrict(readable=os_sandbox["readable"], writable=writable)
    except Exception as exc:
        if os_sandbox.get("mode") == "require":
            print(f"grader: {SANDBOX_FAILED}: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
            os._exit(SANDBOX_FAILED_EXIT)
        return {"level": AUDIT_HOOK_ONLY, "detail": f"Landlock could not be applied ({type(exc).__name__}: {exc})"}
    return {"level": LANDLOCK, "detail": detail}


def _prepare(spec: dict) -> tuple[list, float]:
    """Import what grading needs, install the guard and return (steps, cell timeout); drops all secrets."""
    for module in spec["preload"]:
        try:
            importlib.import_module(module)
        except Exception as exc:
            print(f"grader: could not import {module}: {exc!r}", file=sys.stderr)
    check_module = importlib.import_module("tinygrad_course.grading.check")
    from tinygrad_course.grading.checker import CheckFailed
    from tinygrad_course.grading.sandbox import guard

    tests = {i: marshal.loads(base64.b64decode(step["code"])) for i, step in enumerate(spec["steps"]) if step["kind"] == "test"}
    trusted = _trusted_names(spec["trusted_imports"])
    isolation = _confine(spec["os_sandbox"], spec["writable"])  # last: nothing trusted is read after this
    guard.install(
        token=bytes.fromhex(spec["token"]), result_fd=int(sys.argv[1]), tests=tests,
        trusted=trusted, writable=spec["writable"],
        unreadable=spec["unreadable"], test_timeout=spec["test_timeout"],
        trusted_code=frozenset({check_module._learner_error.__code__}), failure_type=CheckFailed,
        isolation=isolation, fences=spec.get("audit_fences", True),
    )
    steps = [{k: v for k, v in step.items() if k != "code"} for step in spec["steps"]]
    return steps, spec["cell_timeout"]


def _on_alarm(signum, frame):
    raise CellTimeout()


def main() -> None:
    """Run the plan read from stdin."""
    spec = json.loads(sys.stdin.read())
    sys.stdin.close()
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    _limit_resources(spec["limits"])
    steps, cell_timeout = _prepare(spec)
    del spec
    from tinygrad_course.grading.sandbox.protocol import DONE, NOTE, RUN_TEST
    audit, set_timer = sys.audit, signal.setitimer  # learner cells may rebind the module attributes

    namespace = {"__name__": "__main__", "__builtins__": __builtins__, "display": print}
    for index, step in enumerate(steps):
        if step["kind"] == "test":
            audit(RUN_TEST, index, namespace)
            continue
        filename = f"<{step['label']}>"
        source = step["source"]
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        signal.signal(signal.SIGALRM, _on_alarm)
        set_timer(signal.ITIMER_REAL, cell_timeout)
        try:
            exec(compile(source, filename, "exec"), namespace)
        except CellTimeout:
            audit(NOTE, f"{step['label']}: stopped after {cell_timeout:g} s (an infinite loop?)")
        except BaseException as exc:  # a failing cell is feedback; later cells still run
            if step.get("learner"):
                audit(NOTE, f"{step['label']}: {type(exc).__name__}: {exc}"[:500])
        finally:
            set_timer(signal.ITIMER_REAL, 0)
    audit(DONE)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
