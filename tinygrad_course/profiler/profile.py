"""`tc.profiler.profile` and `record_function`, in the spirit of `torch.profiler`.

While a `profile` is active it sits on `tinygrad_course.autograd.engine.profilers`; every op
call and every backward node then goes through `record(name, fn, args, kwargs)`, which times the
call. Calls nest (an op calling other ops, a backward node running forward ops, a user's
`record_function` range), so a stack of open calls splits each call's total time into its *self*
time and the time spent in its children.
"""
from __future__ import annotations

import enum
import functools
import json
import threading
import time

from .._backend import cupy_module
from ..autograd.engine import profilers
from ..cuda import synchronize as _synchronize
from ..tensor import Tensor
from .events import EventList, FunctionEvent


class ProfilerActivity(enum.Enum):
    """What to profile: CPU time, and CUDA (GPU work is synchronised before clocks are read)."""

    CPU = "CPU"
    CUDA = "CUDA"


def supported_activities() -> set:
    """The activities this machine can profile (CUDA only where a GPU is visible)."""
    return {ProfilerActivity.CPU, ProfilerActivity.CUDA} if cupy_module() else {ProfilerActivity.CPU}


class _Open:
    """A call in progress: its name, shapes, start time and the time its children took."""

    __slots__ = ("name", "shapes", "start", "children_ns", "children")

    def __init__(self, name, shapes, start):
        self.name, self.shapes, self.start = name, shapes, start
        self.children_ns = 0
        self.children = []


def _input_shapes(args):
    """PyTorch's `input_shapes`: a shape list per tensor argument, [] for anything else."""
    return [list(a.shape) if isinstance(a, Tensor) else [] for a in args]


def _on_gpu(args) -> bool:
    return any(getattr(a, "is_cuda", False) for a in args)


class profile:
    """Context manager that records the time of every op run inside it, like `torch.profiler.profile`.

    `prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10)` summarises the run;
    `record_shapes=True` also records input shapes (see `key_averages(group_by_input_shape=True)`).
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False):
        for flag, value in (("schedule", schedule), ("on_trace_ready", on_trace_ready),
                            ("profile_memory", profile_memory), ("with_stack", with_stack),
                            ("with_flops", with_flops), ("with_modules", with_modules)):
            if value:
                raise NotImplementedError(
                    f"tc.profiler.profile does not support {flag}; it records op counts, self/total time and "
                    "(with record_shapes=True) input shapes."
                )
        self.activities = set(activities) if activities is not None else supported_activities()
        self.record_shapes = record_shapes
        self._sync = ProfilerActivity.CUDA in self.activities
        self._events = EventList()
        self._stack = []
        self._t0 = None
        self._running = False

    # ---- lifecycle ----------------------------------------------------------------------------
    def start(self):
        """Begin recording (what `with profile(...)` does on entry)."""
        if self._sync:
            _synchronize()
        self._t0 = time.perf_counter_ns()
        self._thread = threading.get_ident()
        self._running = True
        profilers.append(self)

    def stop(self):
        """Stop recording (what leaving the `with` block does)."""
        if self._running:
            if self._sync:
                _synchronize()
            profilers.remove(self)
            self._running = False

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def step(self):
        """Mark the end of a training step (accepted for compatibility; no schedule is used)."""

    # ---- recording (called by the framework) --------------------------------------------------
    def record(self, name, fn, args, kwargs):
        """Run `fn(*args, **kwargs)`, timing it as one event called `name`; return its result."""
        if threading.get_ident() != self._thread:
            return fn(*args, **kwargs)
        sync = self._sync and _on_gpu(args)
        self.push(name, _input_shapes(args) if self.record_shapes else None, sync)
        try:
            return fn(*args, **kwargs)
        finally:
            self.pop(sync)

    def push(self, name, shapes=None, sync=False):
        """Open a timed range (ops, backward nodes and `record_function` all use this)."""
        if sync:
            _synchronize()
        self._stack.append(_Open(name, shapes, time.perf_counter_ns()))

    def pop(self, sync=False):
        """Close the innermost open range and store its event."""
        if sync:
            _synchronize()
        end = time.perf_counter_ns()
        frame = self._stack.pop()
        total = end - frame.start
        event = FunctionEvent(
            frame.name, (frame.start - self._t0) / 1e3, (end - self._t0) / 1e3,
            (total - frame.children_ns) / 1e3, frame.shapes, thread=self._thread, depth=len(self._stack),
        )
        event.cpu_children = frame.children
        for child in frame.children:
            child.cpu_parent = event
        if self._stack:
            parent = self._stack[-1]
            parent.children_ns += total
            parent.children.append(event)
        self._events.append(event)
        return event

    # ---- results ------------------------------------------------------------------------------
    def events(self) -> EventList:
        """Every recorded event, in the order the calls finished."""
        return self._events

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0) -> EventList:
        """One row per op name (and per input shapes when `group_by_input_shape=True`)."""
        if group_by_input_shape and not self.record_shapes:
            raise RuntimeError(
                "The profiler was not recording shapes; use profile(record_shapes=True) to group by input shape."
            )
        return self._events.key_averages(group_by_input_shape)

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as a Chrome trace (open it in chrome://tracing or https://ui.perfetto.dev)."""
        trace = [
            {"name": e.name, "ph": "X", "ts": e.start_us, "dur": e.cpu_time_total, "pid": 0, "tid": 0,
             "cat": "cpu_op", **({"args": {"Input Dims": e.input_shapes}} if e.input_shapes is not None else {})}
            for e in sorted(self._events, key=lambda e: e.start_us)
        ]
        with open(path, "w") as f:
            json.dump({"traceEvents": trace}, f)


class record_function:
    """Label a block of code so it appears as its own row in the profile (context manager or decorator)."""

    def __init__(self, name: str, args=None):
        self.name = name
        self.args = args
        self._prof = None

    def __enter__(self):
        if profilers:
            self._prof = profilers[-1]
            self._prof.push(self.name, [] if self._prof.record_shapes else None, self._prof._sync)
        return self

    def __exit__(self, *exc):
        if self._prof is not None:
            self._prof.pop(self._prof._sync)
            self._prof = None
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return wrapper
