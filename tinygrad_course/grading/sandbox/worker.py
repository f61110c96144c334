"""The worker process: runs one notebook's plan and sends plain data about it on the fd in argv[1].

Started by :mod:`.runner` (in its own PID namespace or process group) with the plan on stdin. Learner and
instructor cells run in order in one namespace; a graded test runs as its *probe* (see :mod:`.probe`), whose
observations are the learner's values. The worker holds no secret: no hidden test, no expected value, no
key. It reports ``start``/``end`` of every step so that the grader can time steps from outside.
"""
from __future__ import annotations

import ctypes
import importlib
import json
import linecache
import os
import resource
import signal
import sys
import threading
import types

import numpy as np

from tinygrad_course.grading.check import _learner_error
from tinygrad_course.grading.sandbox import guard, landlock
from tinygrad_course.grading.sandbox.probe import CHECK, OBSERVE
from tinygrad_course.grading.sandbox.recorder import Emitter, run_check

SANDBOX_FAILED_EXIT = 70


class CellTimeout(BaseException):
    """A cell ran past the per-cell time limit (the grader also enforces it from outside)."""


def _limit_resources(limits: dict) -> None:
    """Cap memory, file size (the disk quota of a single file) and CPU time before anything else runs."""
    for kind, value in ((resource.RLIMIT_AS, limits["memory_mb"] * 2**20), (resource.RLIMIT_FSIZE, limits["disk_mb"] * 2**20),
                        (resource.RLIMIT_CORE, 0), (resource.RLIMIT_CPU, limits["cpu_s"])):
        resource.setrlimit(kind, (value, value))


def _private_tmpfs(path: str, megabytes: int) -> str:
    """Mount a size-limited tmpfs on the sandbox folder (possible inside the runner's user+mount namespace)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mount(b"tmpfs", path.encode(), b"tmpfs", 0, f"size={megabytes}m,mode=700".encode()) != 0:
        return f"no private tmpfs ({os.strerror(ctypes.get_errno())}): each file limited to {megabytes} MiB"
    return f"private tmpfs of {megabytes} MiB"


def _confine(spec: dict, emitter: Emitter) -> list[str]:
    """Apply the OS layers the grader asked for; exits before any learner code if a required one fails,
    after telling the grader on the channel (the first event of the run, so no notebook can forge it)."""
    done = []
    try:
        if spec.get("tmpfs"):
            done.append(_private_tmpfs(spec["sandbox"], spec["limits"]["disk_mb"]))
        if spec.get("landlock"):
            if threading.active_count() != 1:
                raise OSError("other threads were running before the restriction")
            done.append(landlock.restrict(readable=spec["readable"], writable=[spec["sandbox"], os.devnull]))
    except Exception as exc:
        why = f"{type(exc).__name__}: {exc}"
        emitter.send("sandbox_failed", why=why[:500])
        print(f"grader: the OS sandbox could not be applied: {why}", file=sys.stderr, flush=True)
        os._exit(SANDBOX_FAILED_EXIT)
    return done


def _trusted_names(imports) -> dict:
    """The instructor's setup imports, resolved before learner code runs (tests see these, not rebindings)."""
    names = {}
    for name, module, attr in imports:
        try:
            value = importlib.import_module(module)
            names[name] = getattr(value, attr) if attr else value
        except Exception:
            continue
    return names


def _load_check_probes(checks: dict) -> None:
    """Register the grader's probe versions of the chapter checks (no expected values in them)."""
    for name, source in checks.items():
        module = types.ModuleType(name)
        module.__package__ = name.rpartition(".")[0]
        exec(compile(source, f"<checks of {name}>", "exec"), module.__dict__)


def _reseed(index: int) -> None:
    """Every graded test starts from the same random state in the learner's and in the solution's run."""
    np.random.seed(index)
    torchlike = sys.modules.get("tinygrad_course")
    if torchlike is not None and hasattr(torchlike, "manual_seed"):
        torchlike.manual_seed(index)


def _on_alarm(signum, frame):
    raise CellTimeout()


def _error_text(exc: BaseException) -> str:
    try:
        return _learner_error(exc)[:1000]
    except BaseException:
        return type(exc).__name__


def main() -> None:
    """Run the plan read from stdin."""
    spec = json.loads(sys.stdin.read())
    sys.stdin.close()
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    _limit_resources(spec["limits"])
    emitter = Emitter(int(sys.argv[1]))
    for module in spec["preload"]:
        try:
            importlib.import_module(module)
        except Exception as exc:
            print(f"grader: could not import {module}: {exc!r}", file=sys.stderr)
    _load_check_probes(spec.get("checks", {}))
    trusted = _trusted_names(spec["trusted_imports"])
    layers = _confine(spec, emitter)
    if spec.get("fences"):
        guard.install(writable=[spec["sandbox"], os.devnull], unreadable=spec["unreadable"],
                      trusted_code=frozenset({_learner_error.__code__}))
        layers.append("audit hook")
    emitter.send("isolation", layers=layers)
    skip, cell_timeout = set(spec["skip"]), float(spec["cell_timeout"])
    steps = spec["steps"]
    del spec
    namespace = {"__name__": "__main__", "__builtins__": __builtins__, "display": print}
    for index, step in enumerate(steps):
        emitter.step = index
        if index in skip:
            continue
        emitter.send("start")
        filename = f"<{step['label']}>"
        linecache.cache[filename] = (len(step["source"]), None, step["source"].splitlines(True), filename)
        scope = namespace
        if step["kind"] == "test":
            _reseed(index)
            scope = dict(namespace)
            scope.update(trusted)
            scope[OBSERVE] = emitter.observe
            scope[CHECK] = lambda exercise_id, *objects: run_check(emitter, exercise_id, *objects)
        error = None
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, cell_timeout)
        try:
            exec(compile(step["source"], filename, "exec"), scope)
        except CellTimeout:
            error = f"stopped after {cell_timeout:g} s (an infinite loop?)"
        except BaseException as exc:  # a failing cell is feedback; later cells still run
            error = _error_text(exc)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        emitter.send("end", error=error)
    emitter.step = -1
    emitter.send("done")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
