"""The worker's audit hook: a fence around what learner code may do (processes, ctypes, files, frames).

Defence in depth only: the grader decides every verdict outside the worker, so a submission that gets
past this hook can still only send data, never a verdict.
"""
from __future__ import annotations

import os
import sys
import threading

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
LISTING_EVENTS = frozenset({"os.listdir", "os.scandir", "glob.glob", "os.walk"})
FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame"})
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


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


def install(*, writable: list[str], unreadable: list[str], trusted_code: frozenset = frozenset()) -> None:
    """Install the audit hook that refuses processes, ctypes, signals to others, sockets, frame inspection
    and file access outside `writable` (defence in depth: the verdict never depends on it)."""
    writable = [os.path.realpath(p) for p in writable]
    unreadable = [os.path.realpath(p) for p in unreadable]
    state = {"busy": None}
    getframe, get_ident = sys._getframe, threading.get_ident
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    library_roots = sorted({os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, package_root)})

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

    def hook(event: str, args: tuple) -> None:
        if state["busy"] == get_ident():
            return
        if event in ALWAYS_REFUSED:
            refuse(event)
        elif event == "open" and args and not isinstance(args[0], int):
            path, flags = args[0], args[2] if len(args) > 2 and isinstance(args[2], int) else 0
            mode = args[1] if len(args) > 1 and isinstance(args[1], str) else ""
            writing = bool(flags & WRITE_FLAGS) or any(c in mode for c in "wax+")
            if (writing and not _inside(path, writable)) or _inside(path, unreadable) or _secret_proc_file(path):
                refuse(f"open({os.fsdecode(path)!r})")
        elif event in LISTING_EVENTS and args and isinstance(args[0], (str, bytes, os.PathLike)):
            if _inside(args[0], unreadable):
                refuse(f"{event}({os.fsdecode(args[0])!r})")
        elif event in PATH_EVENTS:
            for arg in args:
                if isinstance(arg, (str, bytes, os.PathLike)) and not _inside(arg, writable):
                    refuse(f"{event}({os.fsdecode(arg)!r})")
        elif event == "sys._getframe" or event == "object.__getattr__" and len(args) > 1 and args[1] in FRAME_ATTRIBUTES:
            code = caller_code()
            if code not in trusted_code and not _library_code(code, library_roots):
                where = f" (by {code.co_name} in {code.co_filename})" if code is not None else ""
                refuse(f"inspecting stack frames{where}")

    sys.addaudithook(hook)
