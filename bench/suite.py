"""The benchmark suite behind `make bench`: tinygrad_course against PyTorch, one table of ratios.

Each benchmark runs in its own process (so one model's memory and caches do not slow the next), building the
same workload in both frameworks, checking that their first steps agree, then timing them in interleaved
rounds (tc round, PyTorch round, tc round, ...) so that machine load affects both alike. The table gives the
median seconds per step of each and the ratio tc / PyTorch of the medians, next to the issue 21 target.

PyTorch gets as many intra-op threads as NumPy's BLAS has (OPENBLAS_NUM_THREADS, 1 under `make`), so both
frameworks use the same cores.

    python bench/suite.py                  # every benchmark, one table
    python bench/suite.py lstm_lm gru_lm   # some of them
    python bench/suite.py --quick          # fewer rounds
    python bench/suite.py --cpu-time gpt_chapter   # CPU time of the timing thread instead of wall time

On a machine shared with other work, `--cpu-time` leaves out the time other processes hold the core (both
frameworks here compute on the one timing thread: one BLAS / torch thread); it still counts the slowdown
their cache and memory traffic cause. Not for the DataLoader row, whose workers are other processes.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

import tinygrad_course as tc
import chapter_gpt
import cnn
import loader
import mlp
import models
import op_overhead
from _timing import interleaved_medians


@dataclass
class Bench:
    """One row of the table: `make(lib, tiny) -> step(i)`, rounds x steps per round, and the target ratio."""

    title: str
    make: Callable
    rounds: int
    steps: int
    target: float
    unit: str = "step"


def _op_overhead(lib, tiny=False):
    inputs = op_overhead.make_inputs(lib)

    def step(i):
        for t in inputs:
            t.grad = None
        return op_overhead.step(*inputs).item()

    return step


def _mlp(batch):
    def make(lib, tiny=False):
        ws = mlp.init_weights()
        return mlp.make_step(lib, ws, 4 if tiny else batch)
    return make


def _randn(lib, tiny=False):
    n = 1000 if tiny else 10 ** 6

    def step(i):  # the same seed gives the same numbers in both: compare one of them
        lib.manual_seed(i)
        return lib.randn(n)[-1].item()

    return step


def _cnn(lib, tiny=False):
    return cnn.make(lib, cnn.weights(), batch=2 if tiny else cnn.BATCH)


BENCHES = {
    "op_overhead": Bench("op overhead (8 ops + backward, 100 floats)", _op_overhead, 30, 200, 1.5, "iteration"),
    "mlp_64": Bench("MLP 784-256-256-10, batch 64", _mlp(64), 22, 40, 1.0),
    # (issue 21's 0.8x was withdrawn: both frameworks run this step's products at the core's peak)
    "mlp_512": Bench("MLP 784-256-256-10, batch 512", _mlp(512), 18, 10, 1.0),
    "cnn": Bench("CNN conv16-pool-conv32-pool-linear, batch 64", _cnn, 18, 6, 1.2),
    "lstm_lm": Bench("LSTM LM (Embedding+LSTM 64->128+Linear), 16x32", lambda lib, tiny=False:
                     models.make_recurrent_lm(lib, "LSTM", tiny), 22, 8, 1.5),
    "gru_lm": Bench("GRU LM (Embedding+GRU 64->128+Linear), 16x32", lambda lib, tiny=False:
                    models.make_recurrent_lm(lib, "GRU", tiny), 22, 8, 1.5),
    "lstm_layer": Bench("LSTM layer alone (64->128, 16x32), forward+backward", lambda lib, tiny=False:
                        models.make_recurrent_layer(lib, "LSTM", tiny), 22, 8, 1.5),
    "gru_layer": Bench("GRU layer alone (64->128, 16x32), forward+backward", lambda lib, tiny=False:
                       models.make_recurrent_layer(lib, "GRU", tiny), 22, 8, 1.5),
    "gpt": Bench("GPT 2 layers, 4 heads, width 128, block 64, batch 8", models.make_gpt, 18, 6, 1.5),
    "gpt_chapter": Bench("chapter 10 GPT (2 layers, 4 heads, width 64, block 64, batch 32, tied; AdamW, clip)",
                         chapter_gpt.make_train, 18, 6, 1.3),
    "gpt_kv_cache": Bench("chapter 10 GPT generation with the KV cache, 16-token prompt", chapter_gpt.make_generate,
                          14, 2, 1.3, "32 tokens"),
    "transformer": Bench("Transformer encoder 2x(d128, 4 heads, ff256), 16x32", models.make_transformer_encoder,
                         18, 8, 1.1),
    "randn": Bench("10^6 normals after manual_seed (randn, float32)", _randn, 20, 5, 3.0, "call"),
    "dataloader": Bench("DataLoader 2048x3x32x32, batch 64, 2 workers", loader.make_loader, 14, 2, 1.5, "epoch"),
}


def _value(v) -> float:
    return float(v.item() if hasattr(v, "item") else v)


def _threads() -> int:
    return int(os.environ.get("OPENBLAS_NUM_THREADS") or len(os.sched_getaffinity(0)))


def run_one(name, tiny=False, rounds=None, cpu_time=False):
    """Time benchmark `name` in this process; returns {"tc": s, "torch": s, "ratio": x} (medians per step)."""
    bench = BENCHES[name]
    torch.set_num_threads(1 if name == "op_overhead" else _threads())
    runners = {"tc": bench.make(tc, tiny), "torch": bench.make(torch, tiny)}
    first = {k: _value(step(0)) for k, step in runners.items()}
    assert np.isclose(first["tc"], first["torch"], rtol=1e-3, atol=1e-5), (name, first)
    if tiny:
        rounds_, steps, warmup = 1, 1, 1
    else:
        rounds_, steps, warmup = rounds or bench.rounds, bench.steps, max(1, bench.steps // 2)
    med = interleaved_medians(runners, rounds_, steps, warmup=warmup, start=1,
                              clock=time.thread_time if cpu_time else time.perf_counter)
    return {"tc": med["tc"], "torch": med["torch"], "ratio": med["tc"] / med["torch"]}


def _in_subprocess(name, rounds, cpu_time=False):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", name]
    if rounds:
        cmd += ["--rounds", str(rounds)]
    if cpu_time:
        cmd += ["--cpu-time"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _fmt_time(s):
    return f"{s * 1e6:.1f} us" if s < 1e-3 else f"{s * 1e3:.2f} ms"


def machine() -> str:
    """nproc, the CPU model from /proc/cpuinfo, Python, NumPy and torch versions."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return (f"{os.cpu_count()} CPUs ({model}), load average {os.getloadavg()[0]:.2f}; Python "
            f"{platform.python_version()}, NumPy {np.__version__}, torch {torch.__version__}, "
            f"{_threads()} BLAS/torch thread(s)")


def table(results) -> str:
    """The results as one Markdown table."""
    lines = ["| benchmark | tc | PyTorch | tc / PyTorch | target |", "|---|---|---|---|---|"]
    for name, r in results.items():
        b = BENCHES[name]
        if "error" in r:
            lines.append(f"| {b.title} | error: {r['error']} | | | <= {b.target}x |")
            continue
        ok = "" if round(r["ratio"], 2) <= b.target else " (over)"
        lines.append(f"| {b.title} | {_fmt_time(r['tc'])}/{b.unit} | {_fmt_time(r['torch'])}/{b.unit} | "
                     f"**{r['ratio']:.2f}x**{ok} | <= {b.target}x |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help=f"benchmarks to run (default all): {', '.join(BENCHES)}")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default per benchmark)")
    parser.add_argument("--quick", action="store_true", help="3 rounds each")
    parser.add_argument("--cpu-time", action="store_true", help="time the thread's CPU time, not wall time")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(run_one(args.child, rounds=args.rounds, cpu_time=args.cpu_time)))
        return
    names = args.names or list(BENCHES)
    unknown = [n for n in names if n not in BENCHES]
    if unknown:
        parser.error(f"unknown benchmark(s) {unknown}; choose from {list(BENCHES)}")
    rounds = 3 if args.quick else args.rounds
    print(f"machine: {machine()}", flush=True)
    results, t0 = {}, time.perf_counter()
    for name in names:
        results[name] = _in_subprocess(name, rounds, args.cpu_time)
        r = results[name]
        print(f"  {name}: " + (r["error"] if "error" in r else f"{r['ratio']:.2f}x"), flush=True)
    clock = "CPU time of the timing thread" if args.cpu_time else "wall time"
    print(f"\n{table(results)}\n\nmedian of interleaved rounds per benchmark ({clock}), one process each; "
          f"total {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
