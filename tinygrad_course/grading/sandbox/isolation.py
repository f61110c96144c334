"""Isolation levels: what stands between a submission and the grader's machine.

``auto`` (the default) is ``kernel`` where Linux has Landlock ABI 4 (6.7 or newer), else ``bwrap``; if
neither can run, nothing is graded. ``kernel`` uses Landlock: the worker can read only the Python
installation, the course package and system libraries, write only its private folder, and open no TCP
connection; it runs in its own PID namespace when the system allows unprivileged user namespaces (else in
its own process group, swept by the grader) and behind the audit hook. ``bwrap`` gives the worker the same
allow-list as read-only bind mounts in fresh namespaces, with no network (see :mod:`.bubblewrap`), behind
the audit hook; it needs only user namespaces. Anything weaker must be asked for by name:
``unsafe-audit-hook-only`` (no OS sandbox) or ``unsafe-no-isolation`` (nothing but the process limits).
"""
from __future__ import annotations

from dataclasses import dataclass

from . import bubblewrap, containment, landlock

SAFE_LEVELS = ("auto", "kernel", "bwrap")
LEVELS = (*SAFE_LEVELS, "unsafe-audit-hook-only", "unsafe-no-isolation")


class IsolationUnavailable(RuntimeError):
    """The requested isolation level cannot be provided on this system."""


@dataclass(frozen=True)
class Isolation:
    """The layers used for every worker of a batch."""

    name: str
    landlock: bool
    namespace: bool
    fences: bool
    detail: str = ""
    bwrap: str = ""                     # path of bwrap when the worker runs inside bubblewrap
    bwrap_features: frozenset = frozenset()

    def readable(self, sandbox: str) -> list[str]:
        """The read allow-list for one worker (Landlock rules or bwrap's read-only mounts)."""
        return landlock.readable_paths(sandbox)

    @property
    def private_tmpfs(self) -> bool:
        """Whether the worker's folder is a size-limited tmpfs (else the grader measures the folder)."""
        return "size" in self.bwrap_features if self.bwrap else self.namespace

    def prefix(self, sandbox: str, disk_mb: int) -> list[str] | None:
        """The command prefix that starts a worker in this isolation (None: the default namespaces or group)."""
        if not self.bwrap:
            return None
        return bubblewrap.command(self.bwrap, self.bwrap_features, sandbox, self.readable(sandbox), disk_mb)

    def describe(self) -> str:
        """One line for the CSV, the feedback and the batch summary."""
        box = "PID namespace" if self.namespace else "process group"
        if self.bwrap:
            box = "bubblewrap (read-only mounts, no network, PID namespace)"
        parts = (["Landlock"] if self.landlock else []) + [box] + (["audit hook"] if self.fences else [])
        return f"{self.name}: {' + '.join(parts)}" + (f" ({self.detail})" if self.detail else "")


def _landlock_missing() -> str:
    abi, why = landlock.abi_version()
    if abi >= landlock.REQUIRED_ABI:
        return ""
    return why or f"Landlock ABI {abi} cannot restrict TCP (ABI {landlock.REQUIRED_ABI}, Linux 6.7, is needed)"


def _bwrap() -> Isolation:
    path, features, why = bubblewrap.probe()
    if not path:
        raise IsolationUnavailable(f"the bwrap isolation cannot run: {why}")
    disk = "private tmpfs" if "size" in features else "no tmpfs size limit: the grader measures the folder"
    return Isolation("bwrap", False, True, True, disk, bwrap=path, bwrap_features=features)


def choose(level: str = "auto") -> Isolation:
    """The Isolation for `level` ("auto": Landlock where the kernel has ABI 4, else bubblewrap); raises
    IsolationUnavailable when a safe level cannot be had (never downgrades to an unsafe one)."""
    if level not in LEVELS:
        raise ValueError(f"isolation must be one of {LEVELS}, not {level!r}")
    if level == "auto":
        missing = _landlock_missing()
        if not missing:
            return choose("kernel")
        try:
            return _bwrap()
        except IsolationUnavailable as exc:
            raise IsolationUnavailable(f"no safe isolation here: Linux Landlock is missing ({missing}) "
                                       f"and {exc}") from None
    if level == "bwrap":
        return _bwrap()
    namespace = bool(containment.namespace_prefix())
    if level == "kernel":
        missing = _landlock_missing()
        if missing:
            raise IsolationUnavailable(f"the kernel isolation needs Linux Landlock: {missing}")
        return Isolation(level, True, namespace, True, f"Landlock ABI {landlock.abi_version()[0]}")
    if level == "unsafe-audit-hook-only":
        return Isolation(level, False, namespace, True, "no Landlock: the submission can read and write your files")
    return Isolation(level, False, namespace, False, "no sandbox at all: the submission can do anything you can")
