"""Profiler results: single events, per-name averages and PyTorch's summary table.

Times are in microseconds, as in `torch.autograd.profiler_util`. A `FunctionEvent` is one call of
an op, backward node or `record_function` range; `EventList.key_averages()` groups them by name
(and optionally input shapes) into `FunctionEventAvg` rows; `EventList.table()` prints them laid out
like PyTorch's `prof.key_averages().table(...)`.
"""
from __future__ import annotations

SORT_KEYS = ("self_cpu_time_total", "cpu_time_total", "cpu_time", "self_cpu_time", "count")


def _format_time(time_us: float) -> str:
    """Format microseconds the way PyTorch's tables do: '12.345us', '1.234ms', '2.000s'."""
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_share(time_us: float, total_us: float) -> str:
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


class FunctionEvent:
    """One profiled call: its name, start/end (us since the profile began), self and total time."""

    count = 1

    def __init__(self, name, start_us, end_us, self_cpu_time_total, input_shapes=None, thread=0, depth=0):
        self.name = name
        self.start_us = start_us
        self.end_us = end_us
        self.self_cpu_time_total = self_cpu_time_total
        self.input_shapes = input_shapes
        self.thread = thread
        self.depth = depth
        self.cpu_parent = None
        self.cpu_children = []

    @property
    def key(self) -> str:
        """The name the event is grouped under in `key_averages()`."""
        return self.name

    @property
    def cpu_time_total(self) -> float:
        """Wall time of the call, children included, in microseconds."""
        return self.end_us - self.start_us

    @property
    def cpu_time(self) -> float:
        """Same as `cpu_time_total` for a single call."""
        return self.cpu_time_total

    def __repr__(self):
        return (f"<FunctionEvent name={self.name!r} cpu_time_total={_format_time(self.cpu_time_total)} "
                f"self_cpu_time_total={_format_time(self.self_cpu_time_total)} input_shapes={self.input_shapes}>")


class FunctionEventAvg:
    """Totals of all events sharing a key (name, and input shapes when grouped by them)."""

    def __init__(self, key, input_shapes=None):
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0

    def add(self, event) -> "FunctionEventAvg":
        """Add one event (or another average) into this row."""
        self.count += event.count
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        return self

    @property
    def cpu_time(self) -> float:
        """Average total time per call."""
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def self_cpu_time(self) -> float:
        """Average self time per call."""
        return self.self_cpu_time_total / self.count if self.count else 0.0

    @property
    def cpu_time_str(self) -> str:
        """The average time per call, formatted like PyTorch's table."""
        return _format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self) -> str:
        """The total time, formatted like PyTorch's table."""
        return _format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self) -> str:
        """The total self time, formatted like PyTorch's table."""
        return _format_time(self.self_cpu_time_total)

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={_format_time(self.self_cpu_time_total)} "
                f"cpu_time={self.cpu_time_str} input_shapes={self.input_shapes}>")


class EventList(list):
    """A list of events (or of averages) with PyTorch's `key_averages`, `total_average` and `table`."""

    def key_averages(self, group_by_input_shape: bool = False) -> "EventList":
        """Group events by name (and by input shapes if asked): one `FunctionEventAvg` per group."""
        rows = {}
        for evt in self:
            shapes = evt.input_shapes if group_by_input_shape else None
            key = (evt.key, str(shapes)) if group_by_input_shape else evt.key
            row = rows.get(key)
            if row is None:
                row = rows[key] = FunctionEventAvg(evt.key, shapes)
            row.add(evt)
        return EventList(rows.values())

    def total_average(self) -> FunctionEventAvg:
        """One row summing every event."""
        total = FunctionEventAvg("Total")
        for evt in self:
            total.add(evt)
        return total

    @property
    def self_cpu_time_total(self) -> float:
        """The sum of every event's self time, in microseconds."""
        return sum(evt.self_cpu_time_total for evt in self)

    def table(self, sort_by=None, row_limit=100, max_name_column_width=55, max_shapes_column_width=80,
              header=None, top_level_events_only=False, time_unit=None) -> str:
        """The summary table, laid out like PyTorch's (Name, Self CPU %, Self CPU, CPU total %, ...)."""
        return build_table(self, sort_by=sort_by, row_limit=row_limit, header=header,
                           max_name_column_width=max_name_column_width,
                           max_shapes_column_width=max_shapes_column_width, time_unit=time_unit)

    def __str__(self):
        return self.table()


def _time_str(time_us, time_unit):
    if time_unit == "s":
        return f"{time_us / 1e6:.3f}s"
    if time_unit == "ms":
        return f"{time_us / 1e3:.3f}ms"
    if time_unit == "us":
        return f"{time_us:.3f}us"
    return _format_time(time_us)


def build_table(events, sort_by=None, row_limit=100, header=None, max_name_column_width=55,
                max_shapes_column_width=80, time_unit=None) -> str:
    """Render events as PyTorch's profiler summary table (an empty string for no events)."""
    if len(events) == 0:
        return ""
    if sort_by is not None:
        if sort_by not in SORT_KEYS:
            raise ValueError(
                f"sort_by={sort_by!r} is not supported; use one of {', '.join(SORT_KEYS)}. Hint: this profiler "
                "measures wall-clock time on the CPU (synchronised with the GPU for CUDA tensors), so there are "
                "no separate CUDA columns."
            )
        events = sorted(events, key=lambda evt: getattr(evt, sort_by), reverse=True)
    has_shapes = any(evt.input_shapes is not None for evt in events)

    name_width = max(len(evt.key) for evt in events) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    shapes_width = max(len(str(evt.input_shapes)) for evt in events) + 4
    if max_shapes_column_width is not None:
        shapes_width = min(shapes_width, max_shapes_column_width)

    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
    widths = [name_width] + [12] * (len(headers) - 1)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
    row_format = "".join("{: >" + str(w) + "}  " for w in widths)
    separator = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2

    total_self = sum(evt.self_cpu_time_total for evt in events)
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    lines += [separator, row_format.format(*headers), separator]
    for evt in list(events)[:row_limit]:
        name = evt.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[: max_name_column_width - 3] + "..."
        values = [
            name,
            _format_share(evt.self_cpu_time_total, total_self),
            _time_str(evt.self_cpu_time_total, time_unit),
            _format_share(evt.cpu_time_total, total_self),
            _time_str(evt.cpu_time_total, time_unit),
            _time_str(evt.cpu_time, time_unit),
            evt.count,
        ]
        if has_shapes:
            values.append(str(evt.input_shapes if evt.input_shapes is not None else [])[:shapes_width])
        lines.append(row_format.format(*values))
    lines.append(separator)
    lines.append(f"Self CPU time total: {_time_str(total_self, time_unit)}")
    return "\n".join(lines) + "\n"
