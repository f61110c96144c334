"""The benchmark suite behind `make bench` stays runnable: every benchmark builds its workload in both
frameworks, checks that their first steps agree, and runs one tiny timed round (no timing assertions)."""
import os
import sys

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench")
sys.path.insert(0, BENCH)
import suite  # noqa: E402


@pytest.mark.parametrize("name", list(suite.BENCHES))
def test_benchmark_runs_one_tiny_round(name):
    result = suite.run_one(name, tiny=True)
    assert set(result) == {"tc", "torch", "ratio"}
    assert result["tc"] > 0 and result["torch"] > 0


def test_table_has_one_row_per_benchmark():
    results = {"mlp_64": {"tc": 2e-3, "torch": 1e-3, "ratio": 2.0}, "op_overhead": {"error": "boom"}}
    text = suite.table(results)
    assert text.count("\n") == 3
    assert "**2.00x** (over)" in text and "error: boom" in text
    assert "CPUs" in suite.machine()
