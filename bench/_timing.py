"""Timing helper shared by the training-step benchmarks."""
import time


def time_steps(step, start, n, clock=time.perf_counter):
    """Mean seconds per call of `step(i)` for i in start..start+n-1, by `clock` (wall time by default;
    `time.thread_time`, the thread's CPU time, leaves out the time other processes take the core)."""
    t0 = clock()
    for i in range(start, start + n):
        step(i)
    return (clock() - t0) / n


def interleaved_medians(runners, rounds, steps, warmup, start, clock=time.perf_counter):
    """Median seconds per step of each runner {name: step(i)}, timed in interleaved rounds after a warm-up."""
    import statistics

    for step in runners.values():
        time_steps(step, 3, warmup, clock)
    times = {name: [] for name in runners}
    for r in range(rounds):
        for name, step in runners.items():
            times[name].append(time_steps(step, start + r * steps, steps, clock))
    return {name: statistics.median(ts) for name, ts in times.items()}
