"""The worker's audit hook: runs graded tests out of the submission's reach and fences what it may do.

Everything secret (the signing token, the compiled tests, the snapshot) lives only in the closure of the
hook installed with ``sys.addaudithook``: no Python object refers to it, and the ways to reach a closure
(gc introspection, frame walking while a test runs, ctypes, /proc/<pid>/mem) are refused.
"""
from __future__ import annotations

import os
import signal
import sys
import threading

from . import protocol, snapshot

ALWAYS_REFUSED = frozenset({
    "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
    "os.kill", "os.killpg", "signal.pthread_kill", "resource.setrlimit", "resource.prlimit",
    "ctypes.dlopen", "ctypes.dlsym", "ctypes.cdata", "ctypes.addressof", "ctypes.string_at",
    "ctypes.wstring_at", "ctypes.call_function", "gc.get_objects", "gc.get_referrers", "gc.get_referents",
    "sys._current_frames", "sys.settrace", "sys.setprofile", "socket.connect", "socket.bind",
    "socket.sendto", "socket.sendmsg", "socket.getaddrinfo", "pty.spawn", "os.chroot", "os.setuid",
})
PATH_EVENTS = frozenset({
    "os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.truncate",
    "os.symlink", "os.link", "os.utime", "os.chflags", "os.lchflags", "shutil.rmtree", "shutil.move",
})
FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame"})
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


class TestTimeout(BaseException):
    """A graded test ran past its time limit."""


def _inside(path, roots) -> bool:
    try:
        real = os.path.realpath(os.fsdecode(path))
    except Exception:
        return False
    return any(real == root or real.startswith(root + os.sep) for root in roots)


def _secret_proc_file(path) -> bool:
    try:
        real = os.path.realpath(os.fsdecode(path))
    except Exception:
        return True
    parts = real.split(os.sep)
    return len(parts) > 2 and parts[1] == "proc" and (parts[-1] in {"mem", "environ", "maps"} or
                                                       (parts[2].isdigit() and parts[2] != str(os.getpid())))


FRAME_HELPERS = frozenset({"inspect.py", "traceback.py"})


def _library_code(code, roots) -> bool:
    """Installed library code (which may look at frames for its own reasons), not notebook code.

    Notebook cells have '<...>' file names; inspect/traceback hand frames to whoever asks, so they count
    as the learner's request.
    """
    if code is None or code.co_filename.startswith("<"):
        return False
    if os.path.basename(code.co_filename) in FRAME_HELPERS:
        return False
    return _inside(code.co_filename, roots)


def _safe_message(exc: BaseException) -> str:
    """Exception text without running code the submission may have put into the exception."""
    args = exc.args if type(exc.args) is tuple else ()
    text = "; ".join(a for a in args if type(a) is str)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def install(*, token: bytes, result_fd: int, tests: dict, trusted: dict, writable: list[str],
            unreadable: list[str], test_timeout: float, trusted_code: frozenset, failure_type: type,
            isolation: dict | None = None, fences: bool = True) -> None:
    """Install the guard hook; afterwards the only way to run graded test `i` is sys.audit(RUN_TEST, i, ns).

    `isolation` (the OS layer in force) is reported first. `fences=False` is for tests only: the hook still
    runs graded tests and signs results but refuses nothing, as if the submission had got past it.
    """
    writable = [os.path.realpath(p) for p in writable]
    unreadable = [os.path.realpath(p) for p in unreadable]
    fingerprint = snapshot.take()
    state = {"in_test": False, "busy": None, "ran": set()}
    getframe, get_ident = sys._getframe, threading.get_ident
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    library_roots = sorted({os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, package_root)})

    def report(payload: dict) -> None:
        os.write(result_fd, protocol.sign(token, payload))

    def refuse(event: str):
        raise PermissionError(f"not allowed while grading: {event}")

    def caller_code():
        state["busy"] = get_ident()
        try:
            return getframe(2).f_code
        except Exception:
            return None
        finally:
            state["busy"] = None

    def on_alarm(signum, frame):
        raise TestTimeout(f"the test ran longer than {test_timeout:g} s (an infinite loop?)")

    def run_test(index, namespace) -> None:
        state["in_test"] = True
        try:
            if index in state["ran"] or index not in tests or type(namespace) is not dict:
                return
            state["ran"].add(index)
            tampered = snapshot.changed(fingerprint)
            if tampered:
                report({"type": "test", "index": index, "passed": False,
                        "message": "the notebook modified the grading machinery or the libraries it relies on: "
                                   + ", ".join(tampered[:5])})
                return
            scope = dict(namespace)
            scope.update(trusted)
            previous = signal.signal(signal.SIGALRM, on_alarm)
            signal.setitimer(signal.ITIMER_REAL, test_timeout)
            try:
                exec(tests[index], scope)
                passed, message = True, ""
            except failure_type as exc:
                passed, message = False, "; ".join(a for a in exc.args if type(a) is str) or "check failed"
            except BaseException as exc:  # anything the submission raises, including SystemExit
                passed, message = False, _safe_message(exc)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
            tampered = snapshot.changed(fingerprint)
            if passed and tampered:
                passed, message = False, "the code under test modified: " + ", ".join(tampered[:5])
            report({"type": "test", "index": index, "passed": passed, "message": message})
        finally:
            state["in_test"] = False

    def hook(event: str, args: tuple) -> None:
        if state["busy"] == get_ident():
            return
        if event == protocol.RUN_TEST and len(args) == 2 and type(args[0]) is int:
            run_test(args[0], args[1])
        elif event == protocol.NOTE and args and type(args[0]) is str:
            report({"type": "note", "text": args[0][:2000]})
        elif event == protocol.DONE:
            report({"type": "done"})
        elif not fences:
            return
        elif event in ALWAYS_REFUSED:
            refuse(event)
        elif event == "open" and args and not isinstance(args[0], int):
            path, flags = args[0], args[2] if len(args) > 2 and isinstance(args[2], int) else 0
            mode = args[1] if len(args) > 1 and isinstance(args[1], str) else ""
            writing = bool(flags & WRITE_FLAGS) or any(c in mode for c in "wax+")
            if (writing and not _inside(path, writable)) or _inside(path, unreadable) or _secret_proc_file(path):
                refuse(f"open({os.fsdecode(path)!r})")
        elif event in PATH_EVENTS:
            for arg in args:
                if isinstance(arg, (str, bytes, os.PathLike)) and not _inside(arg, writable):
                    refuse(f"{event}({os.fsdecode(arg)!r})")
        elif state["in_test"] and (event == "sys._getframe" or
                                   event == "object.__getattr__" and len(args) > 1 and args[1] in FRAME_ATTRIBUTES):
            code = caller_code()
            if code not in trusted_code and not _library_code(code, library_roots):
                where = f" (by {code.co_name} in {code.co_filename})" if code is not None else ""
                refuse(f"inspecting stack frames{where}")

    if isolation is not None:
        report({"type": "isolation", **isolation})
    sys.addaudithook(hook)
