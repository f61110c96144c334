"""The isolation backend for kernels without Landlock ABI 4: bubblewrap (``bwrap``) and user namespaces.

bwrap starts the worker in fresh user, mount, PID, network, IPC, UTS and cgroup namespaces with every
capability dropped. Its file system is built from read-only bind mounts of the same allow-list Landlock uses
(the Python installation, the course package, /usr, /lib*, /etc), a fresh /proc and a minimal /dev, and a
private tmpfs of `--disk-mb` on the worker's folder, the only writable place. The network namespace has only
its own loopback, so no TCP connection reaches this machine or any other. Nothing needs Linux 6.7: user
namespaces are enough (Debian 12, Ubuntu 22.04), and the distribution's ``bubblewrap`` package provides bwrap.

Features are probed once: ``--disable-userns`` (bwrap 0.8) and ``--size`` for the tmpfs (0.7) are used
when the installed bwrap has them; without ``--size`` the worker's folder is a bind mount of the host
folder, which the grader measures as it does without namespaces.
"""
from __future__ import annotations

import functools
import shutil
import subprocess

BASE = ("--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--cap-drop", "ALL")
OPTIONAL = {"disable-userns": ("--disable-userns",), "size": ("--size", "1048576", "--tmpfs", "/tmp")}


@functools.lru_cache(maxsize=1)
def probe() -> tuple[str, frozenset, str]:
    """(path of a working bwrap or "", the optional features it has, why it cannot be used)."""
    bwrap = shutil.which("bwrap")
    if not bwrap:
        return "", frozenset(), "bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"

    def runs(*extra) -> tuple[bool, str]:
        try:
            run = subprocess.run([bwrap, *BASE, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", *extra,
                                  "--", "true"], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.SubprocessError) as exc:
            return False, f"{type(exc).__name__}: {exc}"
        return run.returncode == 0, run.stderr.strip()[-300:]

    ok, why = runs()
    if not ok:
        return "", frozenset(), (f"bwrap cannot create namespaces here ({why or 'no message'}); "
                                 "unprivileged user namespaces may be disabled")
    return bwrap, frozenset(name for name, flags in OPTIONAL.items() if runs(*flags)[0]), ""


def command(bwrap: str, features: frozenset, sandbox: str, readable: list[str], disk_mb: int) -> list[str]:
    """The bwrap prefix that runs a worker in `sandbox` seeing only `readable` (read-only) and `sandbox`."""
    argv = [bwrap, *BASE, *(("--disable-userns",) if "disable-userns" in features else ())]
    for path in readable:
        if path != sandbox and not path.startswith(("/proc", "/dev")):
            argv += ["--ro-bind", path, path]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    if "size" in features:
        argv += ["--size", str(disk_mb * 2**20), "--perms", "0700", "--tmpfs", sandbox]
    else:
        argv += ["--bind", sandbox, sandbox]
    return [*argv, "--chdir", sandbox, "--"]
