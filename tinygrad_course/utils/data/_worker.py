"""What runs inside a DataLoader worker process: the loop that turns index batches into collated batches.

Protocol (same shape as PyTorch's): the main process puts `(task_idx, indices)` on the worker's own index
queue; the worker puts `(task_idx, batch)` on the shared result queue. `None` asks the worker to exit, a
`_ResumeIteration` (persistent workers) starts a new epoch and is echoed back as an acknowledgement.
A failure becomes an `ExceptionWrapper` carrying the worker's formatted traceback, re-raised by the main
process.
"""
from __future__ import annotations

import os
import queue
import random
import sys
import traceback
from dataclasses import dataclass

import numpy as np

from ...generator import manual_seed

_worker_info = None
_POLL_SECONDS = 1.0


@dataclass(frozen=True)
class WorkerInfo:
    """Describes the current DataLoader worker: `id`, `num_workers`, `seed` and its copy of `dataset`."""

    id: int
    num_workers: int
    seed: int
    dataset: object


def get_worker_info():
    """Inside a DataLoader worker: its `WorkerInfo`; in the main process: `None`."""
    return _worker_info


class ExceptionWrapper:
    """An exception caught in a worker, with its traceback as text (exceptions' tracebacks can't be pickled)."""

    def __init__(self, exc_info=None, where="in background"):
        exc_type, exc_value, tb = exc_info if exc_info is not None else sys.exc_info()
        self.exc_type = exc_type
        self.exc_msg = "".join(traceback.format_exception(exc_type, exc_value, tb))
        self.where = where

    def reraise(self):
        """Raise the same exception type in this process, with the worker's traceback in its message."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


class _KeyErrorMessage(str):
    """KeyError quotes its message with repr; this keeps the traceback readable."""

    def __repr__(self):
        return self


class _ResumeIteration:
    """Sent to persistent workers to start a new epoch."""


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    """A worker's iterable dataset ran out."""

    worker_id: int


class _MapFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn

    def fetch(self, index):
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            data = getitems(index) if callable(getitems) else [self.dataset[i] for i in index]
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


class _IterableFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.iterator = iter(dataset)
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.iterator))
        data = []
        for _ in index:
            try:
                data.append(next(self.iterator))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        return self.collate_fn(data)


def create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last):
    """The fetcher that turns indices (map-style) or an iterator (iterable-style) into batches."""
    cls = _IterableFetcher if is_iterable else _MapFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


def seed_worker(seed: int):
    """Seed Python's, NumPy's and the framework's generators in a worker (each worker gets base_seed + id)."""
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(seed % (2 ** 32))


def worker_loop(is_iterable, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn, drop_last,
                base_seed, init_fn, worker_id, num_workers):
    """Serve index batches until told to stop (or until the parent process disappears)."""
    global _worker_info
    parent = os.getppid()
    try:
        seed = base_seed + worker_id
        seed_worker(seed)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        where = f"in DataLoader worker process {worker_id}"
        init_error = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_error = ExceptionWrapper(where=where)
        iteration_end = False
        while os.getppid() == parent:
            try:
                task = index_queue.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                continue
            if task is None:
                break
            if isinstance(task, _ResumeIteration):
                data_queue.put((task, None))
                iteration_end = False
                if init_error is None:
                    try:
                        fetcher = create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last)
                    except Exception:
                        init_error = ExceptionWrapper(where=where)
                continue
            if done_event.is_set() or iteration_end:
                continue
            idx, index = task
            if init_error is not None:
                data, init_error = init_error, None
            else:
                try:
                    data = fetcher.fetch(index)
                except StopIteration:
                    if not is_iterable:
                        data = ExceptionWrapper(where=where)
                    else:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                except Exception:
                    data = ExceptionWrapper(where=where)
            data_queue.put((idx, data))
            del data, idx, index, task
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
