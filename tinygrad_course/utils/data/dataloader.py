"""`DataLoader`: batches from a dataset, in the main process or in parallel worker processes.

`num_workers=0` loads in the main process. With `num_workers > 0`, worker processes each hold a copy of the
dataset; the main process hands out lists of indices round-robin (keeping `prefetch_factor` batches per
worker in flight) and hands the batches back in order. See `_worker.py` for the worker side.
"""
from __future__ import annotations

import itertools
import multiprocessing
import os
import queue
import warnings
import weakref

import numpy as np

from ...cuda import is_available as _cuda_is_available
from ...generator import default_generator
from ...seams import component
from . import _worker
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler


class _InfiniteConstantSampler(Sampler):
    """The sampler of an IterableDataset: the dataset itself decides what comes next."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Iterate over `dataset` in batches, like `torch.utils.data.DataLoader`.

    Common use: `DataLoader(train_set, batch_size=64, shuffle=True)`; shuffle only the training set.
    `num_workers > 0` loads batches in parallel processes while the model trains.
    """

    __initialized = False  # set by the constructor once it has chosen the pipeline, which is frozen from then on

    @component("DataLoader.__init__")
    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        self._init_loading(dataset, num_workers, pin_memory, timeout, worker_init_fn, multiprocessing_context,
                           prefetch_factor=prefetch_factor, persistent_workers=persistent_workers,
                           pin_memory_device=pin_memory_device, in_order=in_order)
        is_iterable = self._is_iterable
        if is_iterable:
            if shuffle not in (False, None):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but got "
                    f"batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with drop_last"
            )
        if sampler is None:
            if is_iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert

        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        self.collate_fn = collate_fn
        self.__initialized = True

    def _init_loading(self, dataset, num_workers=0, pin_memory=False, timeout=0, worker_init_fn=None,
                      multiprocessing_context=None, *, prefetch_factor=None, persistent_workers=False,
                      pin_memory_device="", in_order=True):
        """Check and keep how batches are loaded (worker processes, pinned memory): the constructor's options
        other than the choice of sampler, batch sampler and collate_fn."""
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to enable "
                "multiprocessing, otherwise set prefetch_factor to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if pin_memory and not _cuda_is_available():
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, then device pinned memory "
                "won't be used."
            )
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        self.persistent_workers = persistent_workers
        self._is_iterable = isinstance(dataset, IterableDataset)
        self._iterator = None

    @component("DataLoader.__setattr__")
    def __setattr__(self, attr, val):
        """Set an attribute, refusing (as PyTorch does) to change the pipeline the constructor chose once it has:
        the batch size, the samplers, drop_last, the dataset and persistent_workers."""
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                                           "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after {self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    @component("DataLoader.__iter__")
    def __iter__(self):
        """A fresh iterator over the batches of one epoch (persistent workers are reused across epochs)."""
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        if self.persistent_workers:
            if self._iterator is None:
                self._iterator = _MultiProcessIter(self)
            else:
                self._iterator._reset(self)
            return self._iterator
        return _MultiProcessIter(self)

    @component("DataLoader.__len__")
    def __len__(self):
        """Batches per epoch: the length of the batch sampler (or of the sampler, without batching)."""
        if self._is_iterable:
            length = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else -(-length // self.batch_size)
            return length
        return len(self._index_sampler)


class _BaseIter:
    def __init__(self, loader):
        self._loader = loader
        self._dataset = loader.dataset
        self._is_iterable = loader._is_iterable
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._collate_fn = loader.collate_fn
        self._index_sampler = loader._index_sampler
        self._num_yielded = 0
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = int((loader.generator or default_generator).full_range((), np.int64))

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._loader)

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        return data


class _SingleProcessIter(_BaseIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = _worker.create_fetcher(self._is_iterable, self._dataset, self._auto_collation,
                                               self._collate_fn, self._drop_last)

    def _next_data(self):
        index = next(self._sampler_iter)
        return self._fetcher.fetch(index)


class _WorkerPool:
    """The worker processes and their queues; owns the shutdown so it can run from a finalizer."""

    def __init__(self, loader, base_seed):
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = multiprocessing.get_context()
        elif isinstance(ctx, str):
            ctx = multiprocessing.get_context(ctx)
        self.owner = os.getpid()
        self.result_queue = ctx.Queue()
        self.done_event = ctx.Event()
        self.index_queues, self.workers = [], []
        for i in range(loader.num_workers):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()
            w = ctx.Process(
                target=_worker.worker_loop,
                args=(loader._is_iterable, loader.dataset, index_queue, self.result_queue, self.done_event,
                      loader._auto_collation, loader.collate_fn, loader.drop_last, base_seed, loader.worker_init_fn,
                      i, loader.num_workers),
                daemon=True,
            )
            w.start()
            self.index_queues.append(index_queue)
            self.workers.append(w)
        self.closed = False

    def shutdown(self):
        """Stop every worker, join it (terminating stragglers) and close the queues; safe to call twice. Only the
        process that started the workers does it: a forked child (another loader's worker) that collects an old
        iterator as garbage must not stop or join workers that are not its own."""
        if self.closed or os.getpid() != self.owner:
            return
        self.closed = True
        try:
            self.done_event.set()
            for q in self.index_queues:
                try:
                    q.put(None)
                except (OSError, ValueError):
                    pass
            for w in self.workers:
                w.join(timeout=5.0)
                if w.is_alive():
                    w.terminate()
                    w.join()
        finally:
            for q in self.index_queues:
                q.cancel_join_thread()
                q.close()
            self.result_queue.cancel_join_thread()
            self.result_queue.close()


class _MultiProcessIter(_BaseIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._timeout = loader.timeout
        self._persistent = loader.persistent_workers
        self._pool = _WorkerPool(loader, self._base_seed)
        self._workers = self._pool.workers
        self._finalizer = weakref.finalize(self, self._pool.shutdown)
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_active = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # new epoch with persistent workers: drop what the last epoch left behind, wait for every ack
            for q in self._pool.index_queues:
                q.put(_worker._ResumeIteration())
            pending = self._num_workers
            while pending > 0:
                idx, _ = self._get_data()
                if isinstance(idx, _worker._ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self):
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_cycle)
            if self._workers_active[worker_id]:
                break
        else:
            return
        self._pool.index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _try_get_data(self, timeout):
        try:
            return True, self._pool.result_queue.get(timeout=timeout)
        except queue.Empty:
            dead = [w for w, active in zip(self._workers, self._workers_active) if active and not w.is_alive()]
            if dead:
                pids = ", ".join(str(w.pid) for w in dead)
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from None
            return False, None

    def _get_data(self):
        if self._timeout > 0:
            ok, data = self._try_get_data(self._timeout)
            if not ok:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            return data
        while True:
            ok, data = self._try_get_data(1.0)
            if ok:
                return data

    def _next_data(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info[self._rcvd_idx]
                if len(info) == 2 or self._workers_active[info[0]]:
                    break
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                data = self._task_info.pop(self._rcvd_idx)[1]
                self._rcvd_idx += 1
                return self._process_data(data)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _worker._IterableDatasetStopIteration):
                self._workers_active[data.worker_id] = False
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                self._task_info[idx] += (data,)
            else:
                del self._task_info[idx]
                self._rcvd_idx += 1
                return self._process_data(data)

    def _process_data(self, data):
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        return data

    def _shutdown_workers(self):
        self._finalizer()

    def __del__(self):
        self._finalizer()
