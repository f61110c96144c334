"""Timing helper shared by the training-step benchmarks."""
import time


def time_steps(step, start, n):
    """Mean seconds per call of `step(i)` for i in start..start+n-1."""
    t0 = time.perf_counter()
    for i in range(start, start + n):
        step(i)
    return (time.perf_counter() - t0) / n


def interleaved_medians(runners, rounds, steps, warmup, start):
    """Median seconds per step of each runner {name: step(i)}, timed in interleaved rounds after a warm-up."""
    import statistics

    for step in runners.values():
        time_steps(step, 3, warmup)
    times = {name: [] for name in runners}
    for r in range(rounds):
        for name, step in runners.items():
            times[name].append(time_steps(step, start + r * steps, steps))
    return {name: statistics.median(ts) for name, ts in times.items()}
