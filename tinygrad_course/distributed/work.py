"""`Work`: the handle of a collective started with `async_op=True` (call `.wait()` before using the result)."""
from __future__ import annotations


class Work:
    """Handle of a running collective; `wait()` blocks until it has finished on this rank."""

    def __init__(self, wait_fn, done_fn=None):
        self._wait_fn = wait_fn
        self._done_fn = done_fn
        self._finished = False

    def wait(self, timeout=None) -> bool:
        """Block until the collective completes (raises DistBackendError on the group's timeout)."""
        if not self._finished:
            self._wait_fn()
            self._finished = True
        return True

    def is_completed(self) -> bool:
        """True once the collective has finished (never blocks)."""
        if not self._finished and self._done_fn is not None and self._done_fn():
            self.wait()
        return self._finished


class _Chain(Work):
    """A Work that runs `then()` (copy-back, averaging) after the backend's own wait."""

    def __init__(self, inner: Work, then):
        super().__init__(self._run, inner.is_completed)
        self._inner, self._then = inner, then

    def _run(self):
        self._inner.wait()
        self._then()
