"""`tc.multiprocessing.spawn`: start `nprocs` processes running `fn(i, *args)`, like
`torch.multiprocessing.spawn`; an exception in any of them is raised in the parent with its traceback."""
from __future__ import annotations

import multiprocessing
import traceback


class ProcessRaisedException(Exception):
    """A spawned process raised: the message carries its traceback."""

    def __init__(self, msg: str, error_index: int, error_pid: int):
        super().__init__(msg)
        self.error_index = error_index
        self.pid = error_pid


class ProcessExitedException(Exception):
    """A spawned process ended with a non-zero exit code."""

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int):
        super().__init__(msg)
        self.error_index = error_index
        self.pid = error_pid
        self.exit_code = exit_code


def _wrap(fn, i, args, error_queue):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        error_queue.put(traceback.format_exc())
        raise SystemExit(1)


class ProcessContext:
    """The processes started by `start_processes`; `join()` waits and reports the first failure."""

    def __init__(self, processes, error_queues):
        self.processes = processes
        self.error_queues = error_queues

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None) -> bool:
        """Wait for every process; raise if one failed. True when all have finished."""
        for p in self.processes:
            p.join(timeout)
        for i, (p, q) in enumerate(zip(self.processes, self.error_queues)):
            if p.exitcode is None:
                return False
            if p.exitcode != 0:
                for other in self.processes:
                    if other.is_alive():
                        other.terminate()
                if not q.empty():
                    msg = f"\n\n-- Process {i} terminated with the following error:\n" + q.get()
                    raise ProcessRaisedException(msg, i, p.pid)
                raise ProcessExitedException(f"process {i} terminated with exit code {p.exitcode}", i, p.pid,
                                             p.exitcode)
        return True


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Start `nprocs` processes of `fn(i, *args)` with `start_method`; wait for them if `join`."""
    ctx = multiprocessing.get_context(start_method)
    processes, queues = [], []
    for i in range(nprocs):
        q = ctx.SimpleQueue()
        p = ctx.Process(target=_wrap, args=(fn, i, args, q), daemon=daemon)
        p.start()
        processes.append(p)
        queues.append(q)
    context = ProcessContext(processes, queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """`start_processes` with the spawn start method, like `torch.multiprocessing.spawn`."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
