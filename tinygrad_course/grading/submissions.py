"""Finding and reading submitted notebooks without trusting the file system they come in.

Only regular files are read: nothing is followed through a symbolic link (every path component is opened
with O_NOFOLLOW relative to its parent), FIFOs and devices are refused before a read could block, files
with other hard links are refused (they could be the solutions or another student's notebook), and reads
have a size limit and a time limit. Every refusal becomes a reason, never an exception.

Two sizes are limited: the file on disk (MAX_FILE_BYTES, generous, because outputs such as images and long
prints make honest notebooks large) and the notebook without its outputs (MAX_CELLS_BYTES): outputs are
never graded, the cells' sources and metadata are what the grader runs.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

from .markers import assignment_prefix

MAX_FILE_BYTES = 128 * 2**20   # the file as submitted, outputs included
MAX_CELLS_BYTES = 20 * 2**20   # the notebook without outputs and attachments
READ_TIMEOUT = 10.0
COPY = re.compile(r"-Copy\d+(?=\.ipynb$)")


@dataclass
class Found:
    """One student's submission: the relative path of the notebook to grade (or None) and why not / what was odd."""

    student: str
    parts: tuple[str, ...] | None
    problem: str = ""
    note: str = ""


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"),
                       (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a regular file"


def _candidates(folder: Path, prefix: str, rel: tuple[str, ...], depth: int = 0) -> list[tuple[tuple[str, ...], os.stat_result]]:
    found = []
    if depth > 6:
        return found
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return found
    for entry in entries:
        if entry.name.startswith(".") or entry.name == ".ipynb_checkpoints":
            continue
        info = entry.stat(follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            found += _candidates(folder / entry.name, prefix, (*rel, entry.name), depth + 1)
        elif entry.name.startswith(prefix) and entry.name.endswith(".ipynb"):
            found.append(((*rel, entry.name), info))
    return found


def _choose(student: str, candidates) -> Found:
    if not candidates:
        return Found(student, None, "")
    refused = [(p, i) for p, i in candidates if not stat.S_ISREG(i.st_mode)]
    usable = [(p, i) for p, i in candidates if stat.S_ISREG(i.st_mode)]
    originals = [c for c in usable if not COPY.search(c[0][-1])]
    pool = originals or usable
    if not pool:
        path, info = refused[0]
        return Found(student, None, f"{'/'.join(path)} is {_kind(info.st_mode)}; it was not read")
    chosen = pool[0]
    others = [c for c in candidates if c[0] != chosen[0]]
    note = ""
    if others:
        note = f"graded {'/'.join(chosen[0])}; also found {', '.join('/'.join(p) for p, _ in others)} (not graded)"
    return Found(student, chosen[0], "", note)


def find(submissions_dir: str | Path, assignment: str) -> list[Found]:
    """One Found per entry of SUBMISSIONS/: <student>/**/NN_*.ipynb or <student>.ipynb, nothing followed."""
    prefix = f"{assignment_prefix(assignment)}_"
    root = Path(submissions_dir)
    found, seen = [], set()
    for entry in sorted(os.scandir(root), key=lambda e: e.name):
        if entry.name.startswith("."):
            continue
        info = entry.stat(follow_symlinks=False)
        name = _printable(entry.name)
        if stat.S_ISDIR(info.st_mode):
            item = _choose(name, _candidates(root / entry.name, prefix, (entry.name,)))
        elif entry.name.endswith(".ipynb"):
            item = _choose(name[: -len(".ipynb")], [((entry.name,), info)])
        elif stat.S_ISLNK(info.st_mode):
            item = Found(name, None, f"{name} is a symbolic link; it was not followed")
        else:
            continue
        if item.student in seen:  # alice/ and alice.ipynb: two rows, told apart
            item.student = f"{item.student} ({name})"
        seen.add(item.student)
        found.append(item)
    return found


def _printable(name: str) -> str:
    """A file name as text: bytes that are not UTF-8 become U+FFFD plus a short hash (names stay distinct)."""
    raw = os.fsencode(name)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("utf-8", "replace") + "~" + hashlib.sha256(raw).hexdigest()[:8]


def size_without_outputs(notebook) -> int:
    """Bytes of a parsed notebook's JSON once every cell's outputs and attachments are left out."""
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if isinstance(cells, list):
        notebook = dict(notebook, cells=[{k: v for k, v in c.items() if k not in ("outputs", "attachments")}
                                         if isinstance(c, dict) else c for c in cells])
    return len(json.dumps(notebook, ensure_ascii=False).encode("utf-8", "replace"))


def read_beneath(root: str | Path, parts: tuple[str, ...], max_bytes: int = MAX_FILE_BYTES,
                 timeout: float = READ_TIMEOUT) -> bytes:
    """The bytes of root/parts..., opened component by component without following links; OSError with a
    reason for anything that is not a small regular file with a single link, or takes too long."""
    result: dict = {}

    def work():
        try:
            result["data"] = _read(root, parts, max_bytes)
        except BaseException as exc:  # handed to the caller
            result["error"] = exc

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise OSError(f"reading the file took longer than {timeout:g} s")
    if "error" in result:
        raise result["error"]
    return result["data"]


def _read(root, parts, max_bytes) -> bytes:
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            try:
                next_fd = os.open(part, flags | os.O_DIRECTORY, dir_fd=fd)
            except OSError as exc:
                raise OSError(f"{part} is not a plain folder (a link?)") from exc
            os.close(fd)
            fd = next_fd
        try:
            file_fd = os.open(parts[-1], flags | os.O_NONBLOCK, dir_fd=fd)
        except OSError as exc:
            raise OSError(f"{parts[-1]} cannot be opened as a plain file (a symbolic link?)") from exc
    finally:
        os.close(fd)
    try:
        info = os.fstat(file_fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{parts[-1]} is {_kind(info.st_mode)}; it was not read")
        if info.st_nlink > 1:
            raise OSError(f"{parts[-1]} has {info.st_nlink} hard links (it may be another person's file); it was not read")
        if info.st_size > max_bytes:
            raise OSError(f"{parts[-1]} is {info.st_size / 2**20:.0f} MiB, more than the limit of {max_bytes >> 20} MiB")
        chunks, total = [], 0
        while True:
            chunk = os.read(file_fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > max_bytes:
                raise OSError(f"{parts[-1]} grew past the limit of {max_bytes >> 20} MiB while being read")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(file_fd)
