"""Peak memory of one training step, tinygrad_course against PyTorch (issue 21, item 5).

Each (benchmark, framework) runs in a process of its own with `MALLOC_MMAP_THRESHOLD_=65536`, so that every
allocation of 64 KiB or more is a mapping of its own and freed arrays leave the resident set at once in both
frameworks. The process builds the suite's workload (`suite.BENCHES`), runs three warm-up steps, collects
garbage, reads its resident set (`VmRSS`), resets the kernel's peak mark (`echo 5 > /proc/self/clear_refs`),
runs two steps -- the second while the first step's result is still held, as `loss = step()` in a loop
holds it -- and reports `VmHWM` minus that `VmRSS`: the memory one step adds at its peak. The figure is the
best (smallest) of three processes; the table gives tc / PyTorch.

    python bench/memory.py                 # the MLP, the CNN, the LSTM LM and the GPT
    python bench/memory.py mlp_64 gpt      # some of them
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT = ("mlp_64", "cnn", "lstm_lm", "gpt")
TARGET = 1.3


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")


def measure(name: str, framework: str) -> float:
    """MiB that two training steps of benchmark `name` add at their peak, in this process."""
    sys.path.insert(0, str(HERE))
    import suite  # the workloads; imports both frameworks, which the baseline below includes

    lib = suite.tc if framework == "tc" else suite.torch
    if framework == "torch":
        lib.set_num_threads(suite._threads())
    step = suite.BENCHES[name].make(lib)
    step = step[0] if isinstance(step, tuple) else step
    for i in range(3):
        step(i)
    gc.collect()
    base = _status_kib("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")
    held = step(3)
    step(4)
    del held
    return (_status_kib("VmHWM") - base) / 1024


def _run(name: str, framework: str) -> float:
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "65536"}
    code = f"import sys; sys.path.insert(0, {str(HERE)!r}); import memory; print(memory.measure({name!r}, {framework!r}))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, timeout=600)
    return float(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help=f"benchmarks (default: {', '.join(DEFAULT)})")
    parser.add_argument("--processes", type=int, default=3, help="processes per figure (the best is kept)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    results = {}
    for name in args.names or DEFAULT:
        tc_mib = min(_run(name, "tc") for _ in range(args.processes))
        torch_mib = min(_run(name, "torch") for _ in range(args.processes))
        results[name] = {"tc": tc_mib, "torch": torch_mib, "ratio": tc_mib / torch_mib if torch_mib > 0 else float("inf")}
    if args.json:
        print(json.dumps(results, indent=1))
        return 0
    print("| benchmark | tc | PyTorch | tc / PyTorch | target |\n|---|---|---|---|---|")
    for name, r in results.items():
        over = "" if r["ratio"] <= TARGET else " (over)"
        print(f"| {name} | {r['tc']:.1f} MiB | {r['torch']:.1f} MiB | **{r['ratio']:.2f}x**{over} | <= {TARGET}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
