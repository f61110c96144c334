"""CPU storage in shared memory, for `Tensor.share_memory_()` and `tc.multiprocessing`.

An array is moved into a file-backed memory map in /dev/shm (the system's shared memory; the temp folder
where there is none). Another process that opens the same file and maps it sees, and writes, the same
bytes, which is what Hogwild-style training needs. The process that created a segment removes its file at
exit; mappings other processes still hold stay valid until they end.
"""
from __future__ import annotations

import atexit
import mmap
import os
import tempfile

import numpy as np

_OWNED: dict[str, mmap.mmap] = {}  # path -> mapping created by this process
_PATHS: dict[int, str] = {}  # id(mmap) -> path, for every mapping this process holds
_ATTACHED: dict[str, mmap.mmap] = {}


def _folder() -> str:
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else tempfile.gettempdir()


def _map(path: str, nbytes: int) -> mmap.mmap:
    fd = os.open(path, os.O_RDWR)
    try:
        return mmap.mmap(fd, max(nbytes, 1))
    finally:
        os.close(fd)


def share_array(arr: np.ndarray) -> np.ndarray:
    """A copy of `arr` (same shape and dtype, C order) whose memory is shared between processes."""
    fd, path = tempfile.mkstemp(prefix="tc_shm_", dir=_folder())
    try:
        os.ftruncate(fd, max(arr.nbytes, 1))
    finally:
        os.close(fd)
    mm = _map(path, arr.nbytes)
    _OWNED[path] = mm
    _PATHS[id(mm)] = path
    out = np.ndarray(arr.shape, dtype=arr.dtype, buffer=mm)
    out[...] = arr
    return out


def _root_map(arr):
    base = arr
    while base is not None and not isinstance(base, mmap.mmap):
        base = getattr(base, "base", None) if isinstance(base, np.ndarray) else getattr(base, "obj", None)
    return base


def shared_location(arr) -> tuple | None:
    """(path, byte offset, size of the segment) of a shared array, or None for ordinary memory."""
    if not isinstance(arr, np.ndarray):
        return None
    mm = _root_map(arr)
    if mm is None or id(mm) not in _PATHS:
        return None
    start = np.frombuffer(mm, dtype=np.uint8).__array_interface__["data"][0]
    return _PATHS[id(mm)], arr.__array_interface__["data"][0] - start, len(mm)


def is_shared(arr) -> bool:
    """True when `arr` lives in shared memory."""
    return shared_location(arr) is not None


def attach(path: str, size: int, offset: int, shape, strides, dtype) -> np.ndarray:
    """The array at `offset` in the shared segment `path` (mapped once per process)."""
    mm = _ATTACHED.get(path) or _OWNED.get(path)
    if mm is None:
        mm = _ATTACHED[path] = _map(path, size)
        _PATHS[id(mm)] = path
    return np.ndarray(tuple(shape), dtype=np.dtype(dtype), buffer=mm, offset=offset, strides=tuple(strides))


@atexit.register
def _remove_owned() -> None:
    for path in list(_OWNED):
        try:
            os.unlink(path)
        except OSError:
            pass
