"""Isolation levels: what stands between a submission and the grader's machine.

``kernel`` (the default) needs Linux Landlock: the worker can read only the Python installation, the
course package and system libraries, write only its private folder, and open no TCP connection; it runs
in its own PID namespace when the system allows unprivileged user namespaces (else in its own process
group, swept by the grader) and behind the audit hook. Anything weaker must be asked for by name:
``unsafe-audit-hook-only`` (no Landlock) or ``unsafe-no-isolation`` (nothing but the process limits).
"""
from __future__ import annotations

from dataclasses import dataclass

from . import containment, landlock

LEVELS = ("kernel", "unsafe-audit-hook-only", "unsafe-no-isolation")


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

    def readable(self, sandbox: str) -> list[str]:
        """Landlock's read allow-list for one worker."""
        return landlock.readable_paths(sandbox)

    def describe(self) -> str:
        """One line for the CSV, the feedback and the batch summary."""
        box = "PID namespace" if self.namespace else "process group"
        parts = (["Landlock"] if self.landlock else []) + [box] + (["audit hook"] if self.fences else [])
        return f"{self.name}: {' + '.join(parts)}" + (f" ({self.detail})" if self.detail else "")


def choose(level: str = "kernel") -> Isolation:
    """The Isolation for `level`; raises IsolationUnavailable when `kernel` cannot be had (never downgrades)."""
    if level not in LEVELS:
        raise ValueError(f"isolation must be one of {LEVELS}, not {level!r}")
    namespace = bool(containment.namespace_prefix())
    if level == "kernel":
        abi, why = landlock.abi_version()
        if abi < landlock.REQUIRED_ABI:
            why = why or f"Landlock ABI {abi} cannot restrict TCP (ABI {landlock.REQUIRED_ABI}, Linux 6.7, is needed)"
            raise IsolationUnavailable(f"the default isolation needs Linux Landlock: {why}")
        return Isolation(level, True, namespace, True, f"Landlock ABI {abi}")
    if level == "unsafe-audit-hook-only":
        return Isolation(level, False, namespace, True, "no Landlock: the submission can read and write your files")
    return Isolation(level, False, namespace, False, "no sandbox at all: the submission can do anything you can")
