"""tc.profiler: counts, self/total time bookkeeping, shapes and a table laid out like PyTorch's."""
import json
import re
import time

import numpy as np
import pytest
import torch

import tinygrad_course as tc
from tinygrad_course.autograd.engine import profilers
from tinygrad_course.profiler import ProfilerActivity, profile, record_function


def _rows(table):
    """Data rows of a table as lists of cells (cells are separated by two or more spaces)."""
    lines = table.splitlines()
    seps = [i for i, line in enumerate(lines) if line.startswith("---")]
    return [re.split(r"\s{2,}", line.strip()) for line in lines[seps[1] + 1: seps[2]]]


def _header(table):
    return re.split(r"\s{2,}", table.splitlines()[1].strip())


def test_counts_ops_and_backward_nodes():
    a = tc.ones(2, 3, requires_grad=True)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(5):
            b = a * a
        b.sum().backward()
    counts = {row.key: row.count for row in prof.key_averages()}
    assert counts["aten::mul"] >= 5
    assert counts["MulBackward0"] == 1
    assert counts["SumBackward0"] == 1
    # the results are unchanged by profiling
    np.testing.assert_allclose(a.grad.numpy(), 2 * np.ones((2, 3)))


def test_nothing_recorded_outside_and_profiler_removed_even_on_error():
    a = tc.ones(3)
    with pytest.raises(ZeroDivisionError):
        with profile() as prof:
            a + a
            1 / 0
    assert profilers == []
    before = len(prof.events())
    a * a
    assert len(prof.events()) == before


def test_self_and_total_time_split_nested_calls():
    with profile() as prof:
        def inner():
            time.sleep(0.02)
            return "inner-result"

        def outer():
            time.sleep(0.01)
            return prof.record("inner", inner, (), {})

        assert prof.record("outer", outer, (), {}) == "inner-result"
    events = {e.name: e for e in prof.events()}
    out, inn = events["outer"], events["inner"]
    assert inn.cpu_parent is out and out.cpu_children == [inn]
    assert inn.self_cpu_time_total == pytest.approx(inn.cpu_time_total)
    assert out.self_cpu_time_total == pytest.approx(out.cpu_time_total - inn.cpu_time_total)
    assert out.self_cpu_time_total >= 10_000 * 0.9  # microseconds
    assert inn.cpu_time_total >= 20_000 * 0.9
    avg = prof.key_averages()
    assert avg.self_cpu_time_total == pytest.approx(out.cpu_time_total)


def test_record_function_range_contains_its_ops():
    x = tc.randn(4, 4)
    with profile() as prof:
        with record_function("my_block"):
            y = x @ x
            y = y.relu()
        z = x + x
    events = prof.events()
    block = next(e for e in events if e.name == "my_block")
    inside = {e.name for e in block.cpu_children}
    assert {"aten::mm", "aten::relu"} <= inside
    assert "aten::add" not in inside
    assert block.cpu_time_total >= sum(c.cpu_time_total for c in block.cpu_children)
    assert isinstance(z, tc.Tensor)


def test_record_function_is_a_noop_without_profiler_and_works_as_decorator():
    @record_function("step")
    def step(t):
        return t * 2

    assert step(tc.ones(2)).tolist() == [2.0, 2.0]
    with profile() as prof:
        step(tc.ones(2))
    assert [r.count for r in prof.key_averages() if r.key == "step"] == [1]


def test_record_shapes_and_group_by_input_shape():
    a, b = tc.ones(2, 3), tc.ones(4, 5)
    with profile(record_shapes=True) as prof:
        a * a
        a * a
        b * b
    grouped = {(r.key, str(r.input_shapes)): r.count for r in prof.key_averages(group_by_input_shape=True)}
    assert grouped[("aten::mul", "[[2, 3], [2, 3]]")] == 2
    assert grouped[("aten::mul", "[[4, 5], [4, 5]]")] == 1
    table = prof.key_averages(group_by_input_shape=True).table(sort_by="count")
    assert _header(table)[-1] == "Input Shapes"
    assert _rows(table)[0][0] == "aten::mul" and _rows(table)[0][-1] == "[[2, 3], [2, 3]]"


def test_group_by_input_shape_needs_record_shapes():
    with profile() as prof:
        tc.ones(2) * 2
    with pytest.raises(RuntimeError, match="record_shapes=True"):
        prof.key_averages(group_by_input_shape=True)


def test_table_layout_matches_pytorch():
    x_tc = tc.randn(8, 8, requires_grad=True)
    with profile() as prof:
        for _ in range(3):
            (x_tc @ x_tc).sum().backward()
    ours = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=4)

    x_t = torch.randn(8, 8, requires_grad=True)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as tprof:
        (x_t @ x_t).sum().backward()
    theirs = tprof.key_averages().table(sort_by="self_cpu_time_total", row_limit=4)

    assert _header(ours) == _header(theirs)
    lines = ours.splitlines()
    assert lines[0] == lines[2] == lines[-2] and set(lines[0]) == {"-", " "}
    # same column widths as PyTorch for every column but the name
    assert [len(c) for c in lines[0].split()][1:] == [len(c) for c in theirs.splitlines()[0].split()][1:]
    assert re.fullmatch(r"Self CPU time total: \d+\.\d{3}(us|ms|s)", lines[-1])
    rows = _rows(ours)
    assert len(rows) == 4
    self_times = [r.self_cpu_time_total for r in
                  sorted(prof.key_averages(), key=lambda r: r.self_cpu_time_total, reverse=True)]
    assert [r[0] for r in rows] == [
        r.key for r in sorted(prof.key_averages(), key=lambda r: r.self_cpu_time_total, reverse=True)][:4]
    assert self_times == sorted(self_times, reverse=True)
    for row in rows:
        assert re.fullmatch(r"\d+\.\d\d%", row[1]) and re.fullmatch(r"\d+\.\d{3}(us|ms|s)", row[2])
    mm = next(r for r in _rows(prof.key_averages().table()) if r[0] == "aten::mm")
    assert int(mm[6]) == 9  # 3 forward matmuls + 2 per MmBackward0


def test_self_cpu_percentages_add_up_to_100():
    with profile() as prof:
        x = tc.randn(16, 16)
        for _ in range(4):
            x = (x @ x).tanh()
    rows = _rows(prof.key_averages().table(row_limit=1000))
    assert sum(float(r[1].rstrip("%")) for r in rows) == pytest.approx(100.0, abs=0.1 * len(rows))


def test_time_formatting_and_sort_validation():
    from tinygrad_course.profiler.events import _format_time

    assert _format_time(12.3456) == "12.346us"
    assert _format_time(1234.5) == "1.234ms"
    assert _format_time(2.5e6) == "2.500s"
    with profile() as prof:
        tc.ones(2) + 1
    with pytest.raises(ValueError, match="sort_by"):
        prof.key_averages().table(sort_by="cuda_time_total")
    assert prof.key_averages().table(time_unit="ms").splitlines()[-1].endswith("ms")


def test_unsupported_options_raise():
    with pytest.raises(NotImplementedError, match="profile_memory"):
        profile(profile_memory=True)


def test_export_chrome_trace(tmp_path):
    with profile(record_shapes=True) as prof:
        tc.ones(2, 2) * 3
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())["traceEvents"]
    assert any(e["name"] == "aten::mul" and e["ph"] == "X" and e["dur"] >= 0 for e in trace)


def test_nested_profilers_innermost_records():
    with profile() as outer:
        with profile() as inner:
            tc.ones(2) * 2
        tc.ones(2) * 3
    assert [r.count for r in inner.key_averages() if r.key == "aten::mul"] == [1]
    assert [r.count for r in outer.key_averages() if r.key == "aten::mul"] == [1]
