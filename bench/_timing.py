"""Timing helper shared by the training-step benchmarks."""
import time


def time_steps(step, start, n):
    """Mean seconds per call of `step(i)` for i in start..start+n-1."""
    t0 = time.perf_counter()
    for i in range(start, start + n):
        step(i)
    return (time.perf_counter() - t0) / n
