"""Keeping every process a submission starts inside one box that the grader can kill as a whole.

Preferred: a PID namespace of its own (``unshare --user --pid --mount --fork --kill-child``, no privileges
needed where unprivileged user namespaces are enabled). The worker is PID 1 there; when it dies, or when
the grader kills the ``unshare`` process, the kernel kills everything in the namespace, including
processes that called ``setsid`` or double-forked. Where namespaces are unavailable: a process group of
its own, the grader as child subreaper (orphans become its children) and a sweep that kills them.
"""
from __future__ import annotations

import ctypes
import functools
import os
import shutil
import signal
import subprocess
import threading
import time

PR_SET_CHILD_SUBREAPER = 36
_live: set[int] = set()
_lock = threading.Lock()


@functools.lru_cache(maxsize=1)
def namespace_prefix() -> tuple[str, ...]:
    """The command prefix that starts a process in fresh user, PID and mount namespaces, or () if impossible."""
    unshare = shutil.which("unshare")
    if not unshare:
        return ()
    prefix = (unshare, "--user", "--map-root-user", "--pid", "--mount", "--fork", "--kill-child")
    try:
        ok = subprocess.run([*prefix, "true"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.SubprocessError):
        ok = False
    return prefix if ok else ()


@functools.lru_cache(maxsize=1)
def become_subreaper() -> bool:
    """Make this (grader) process adopt the orphans of its workers, so that the sweep can find them."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def start(argv: list[str], *, use_namespace: bool, prefix: list[str] | None = None, **popen) -> subprocess.Popen:
    """Start a worker in its own session (and namespaces when `use_namespace`, through `prefix` when given:
    bubblewrap), registered as live."""
    if not use_namespace:
        become_subreaper()
    if prefix is None:
        prefix = namespace_prefix() if use_namespace else ()
    with _lock:  # held so that a concurrent sweep never mistakes the new worker for an orphan
        process = subprocess.Popen([*prefix, *argv], start_new_session=True, **popen)
        _live.add(process.pid)
    return process


def _children_of(parents: set[int]) -> set[int]:
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) in parents:
            found.add(int(entry))
    return found


def _descendants(root: int) -> set[int]:
    seen, frontier = set(), {root}
    while frontier:
        frontier = _children_of(frontier) - seen
        seen |= frontier
    return seen


def kill(process: subprocess.Popen) -> None:
    """Kill the worker, its process group, every descendant and every orphan it left; then reap it."""
    for _ in range(20):  # repeated: a fork loop may add processes while we kill
        victims = _descendants(process.pid) if process.poll() is None else set()
        for pid in victims | {process.pid}:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        orphans = _orphans()
        for pid in orphans:
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        _reap(orphans)
        if process.poll() is not None and not victims and not orphans:
            break
        time.sleep(0.02)
    process.wait()
    with _lock:
        _live.discard(process.pid)


def _orphans() -> set[int]:
    """Processes adopted by this grader (subreaper) that are not one of its live workers, and their children."""
    with _lock:
        adopted = _children_of({os.getpid()}) - _live
    return adopted | {d for pid in adopted for d in _descendants(pid)}


def _reap(pids) -> None:
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass


def kill_all() -> None:
    """Kill every live worker (SIGTERM / Ctrl-C of the grader)."""
    with _lock:
        pids = list(_live)
    for pid in pids:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
