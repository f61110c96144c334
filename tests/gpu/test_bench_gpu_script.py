"""bench/gpu.py works before a GPU session spends time on it: the harness runs on the CPU (--dry-run), and
the framework's side of every benchmark step (MLP, CNN, with and without float16 autocast + GradScaler)
runs on cuda (the stand-in here, a real GPU there)."""
import importlib.util
import math
import subprocess
import sys
from pathlib import Path

import pytest

import tinygrad_course as tc
from devices import requires_cuda

ROOT = Path(__file__).resolve().parents[2]


def _bench_module():
    spec = importlib.util.spec_from_file_location("bench_gpu", ROOT / "bench" / "gpu.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_dry_run_prints_the_table():
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "gpu.py"), "--dry-run", "--amp"], capture_output=True,
                         text=True, timeout=300, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    for row in ("MLP ", "CNN ", "MLP amp", "CNN amp"):
        assert row in run.stdout


@pytest.mark.gpu
@requires_cuda
@pytest.mark.parametrize("amp", [False, True], ids=["float32", "amp"])
@pytest.mark.parametrize("name", ["MLP", "CNN"])
def test_the_framework_side_of_each_benchmark_step_runs_on_cuda(name, amp):
    bench = _bench_module()
    runner = bench.Runner(tc, name, "cuda", 16, amp, scale=8)
    losses = [runner.step().item() for _ in range(3)]
    runner.sync()
    assert all(math.isfinite(v) for v in losses)
    assert all(p.device.type == "cuda" for p in runner.model.parameters())
