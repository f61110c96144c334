"""The operating-system layer of the sandbox: Linux Landlock, set up with ctypes (no privileges needed).

A process restricts itself with three system calls: create a ruleset that names the access rights it
*handles* (everything handled is denied unless a rule grants it), add one rule per allowed path, and
enforce it on itself. The restriction is permanent and inherited by any child. See the kernel's
Documentation/userspace-api/landlock.rst; access rights newer than the running kernel's ABI are dropped,
as that document describes.

`restrict(...)` runs in the worker just before learner code (after every trusted import, before the audit
hook forbids ctypes); :mod:`.isolation` decides in the grader whether it is used.
"""
from __future__ import annotations

import errno
import os
import stat
import sys
import sysconfig

REQUIRED_ABI = 4  # files + TCP; what the default isolation insists on

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446  # the same on every Linux architecture
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

# LANDLOCK_ACCESS_FS_*
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15  # ABI 2, 3, 5
# LANDLOCK_ACCESS_NET_* (ABI 4) and LANDLOCK_SCOPE_* (ABI 6)
BIND_TCP, CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # rights a rule on a non-directory may hold
READ = READ_FILE | READ_DIR


def _libc():
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi_version() -> tuple[int, str]:
    """(Landlock ABI version of the running kernel, or 0, and why it is 0)."""
    if not sys.platform.startswith("linux"):
        return 0, f"Landlock is Linux-only (this is {sys.platform})"
    try:
        import ctypes

        libc = _libc()
        version = libc.syscall(ctypes.c_long(SYS_CREATE_RULESET), None, ctypes.c_size_t(0),
                               ctypes.c_uint32(CREATE_RULESET_VERSION))
        code = ctypes.get_errno()
    except Exception as exc:  # no libc, no ctypes
        return 0, f"cannot make system calls ({type(exc).__name__}: {exc})"
    if version >= 1:
        return int(version), ""
    if code == errno.ENOSYS:
        return 0, "this kernel has no Landlock (Linux 5.13 or newer is needed)"
    if code == errno.EOPNOTSUPP:
        return 0, "Landlock is disabled in this kernel (boot option lsm=...)"
    return 0, f"Landlock is unavailable ({errno.errorcode.get(code, code)})"


def _existing(paths) -> list[str]:
    seen, found = set(), []
    for path in paths:
        if path and os.path.exists(path) and path not in seen:
            seen.add(path)
            found.append(path)
    return found


def readable_paths(sandbox: str) -> list[str]:
    """The allow-list of readable paths for a worker: the Python installation, its site-packages, the
    tinygrad_course package, system libraries and /etc, the worker's own /proc entry, a few devices and its
    sandbox directory (the notebook arrives on stdin). Nothing else (solutions, other submissions, feedback,
    caches, the course repository) is readable."""
    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    python = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
              *(sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib"))]
    try:
        import site

        python += site.getsitepackages()
    except Exception:
        pass
    system = ["/usr", "/lib", "/lib64", "/lib32", "/libx32", "/etc", "/proc/self",
              "/dev/null", "/dev/urandom", "/dev/random", "/dev/zero"]
    return _existing([*python, package, *system, sandbox])


def exposed(readable: list[str], secret: list[str]) -> list[str]:
    """Secret paths that lie inside a readable one (which Landlock would therefore let through)."""
    roots = [os.path.realpath(p) for p in readable]
    return [s for s in secret
            if any(os.path.realpath(s) == r or os.path.realpath(s).startswith(r.rstrip(os.sep) + os.sep) for r in roots)]


def restrict(*, readable: list[str], writable: list[str], deny_tcp: bool = True) -> str:
    """Confine this thread and its future children: read only `readable`, write only `writable`, no TCP.

    Returns a description of what the kernel now enforces; raises OSError if any step fails (then the
    process is unchanged, apart from no_new_privs).
    """
    import ctypes

    abi, reason = abi_version()
    if abi < 1:
        raise OSError(errno.ENOSYS, reason)

    class RulesetAttr(ctypes.Structure):
        _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                    ("scoped", ctypes.c_uint64)]

    class PathBeneathAttr(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    libc = _libc()

    def check(result, what):
        if result < 0:
            code = ctypes.get_errno()
            raise OSError(code, f"{what}: {os.strerror(code)}")
        return result

    fs = FS_BY_ABI[max(k for k in FS_BY_ABI if k <= abi)]
    net = (BIND_TCP | CONNECT_TCP) if deny_tcp and abi >= 4 else 0
    scoped = (SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL) if abi >= 6 else 0
    # only the three fields this ABI knows: older kernels reject a larger struct with non-zero tail
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    attr = RulesetAttr(fs, net, scoped)
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1), ctypes.c_ulong(0), ctypes.c_ulong(0),
                     ctypes.c_ulong(0)), "prctl(PR_SET_NO_NEW_PRIVS)")
    ruleset = check(libc.syscall(ctypes.c_long(SYS_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(size),
                                 ctypes.c_uint32(0)), "landlock_create_ruleset")
    try:
        rules = [(p, READ) for p in readable] + [(p, fs & ~(EXECUTE | MAKE_CHAR | MAKE_BLOCK)) for p in writable]
        for path, access in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except FileNotFoundError:
                continue
            try:
                if not stat.S_ISDIR(os.fstat(fd).st_mode):
                    access &= FILE_ONLY
                rule = PathBeneathAttr(access & fs, fd)
                check(libc.syscall(ctypes.c_long(SYS_ADD_RULE), ctypes.c_int(ruleset), ctypes.c_int(RULE_PATH_BENEATH),
                                   ctypes.byref(rule), ctypes.c_uint32(0)), f"landlock_add_rule({path})")
            finally:
                os.close(fd)
        check(libc.syscall(ctypes.c_long(SYS_RESTRICT_SELF), ctypes.c_int(ruleset), ctypes.c_uint32(0)),
              "landlock_restrict_self")
    finally:
        os.close(ruleset)
    parts = ["files"] + (["TCP"] if net else []) + (["signals, abstract sockets"] if scoped else [])
    return f"Landlock ABI {abi}: {', '.join(parts)}"
