"""The worker -> grader channel: one JSON event per line, plain data only.

Values are JSON numbers, strings, booleans, null and nested lists, or NumPy arrays written as
``{"nd": dtype, "shape": [...], "b64": raw bytes}``. No pickles, no objects: the grader decodes with
:func:`decode` (strict, size-limited) and never runs anything the worker sent.
"""
from __future__ import annotations

import base64
import json
import math

import numpy as np

ARRAY_KINDS = "biufc"       # bool, signed, unsigned, float, complex
MAX_LINE = 8 * 2**20        # one event
MAX_TOTAL = 64 * 2**20      # everything one worker may send
MAX_DEPTH = 16
MAX_TEXT = 4000


def to_plain(value, depth: int = 0):
    """Plain data for `value` (worker side): arrays/tensors via NumPy, sequences as lists, scalars as numbers."""
    if depth > MAX_DEPTH:
        raise ValueError("value nested too deeply")
    if value is None or type(value) in (bool, str):
        return value if type(value) is not str else value[:MAX_TEXT]
    if type(value) is int:
        return value if abs(value) < 2**63 else float(value)
    if type(value) is float:
        return value if math.isfinite(value) else repr(value)
    if type(value) in (list, tuple):
        return [to_plain(v, depth + 1) for v in value]
    if isinstance(value, np.generic):
        return to_plain(value.item(), depth + 1)
    if type(value) is dict:
        return {"dict": [[to_plain(k, depth + 1), to_plain(v, depth + 1)] for k, v in value.items()]}
    if type(value) in (set, frozenset):
        return {"set": sorted((to_plain(v, depth + 1) for v in value), key=lambda v: json.dumps(v, sort_keys=True))}
    if isinstance(value, (np.dtype, type)) or _library_value(value):
        return {"repr": repr(value)[:MAX_TEXT]}  # dtypes and the like: compared by their text
    array = np.array(_numpy_of(value), copy=True)
    if type(array) is not np.ndarray or array.dtype.kind not in ARRAY_KINDS:
        raise TypeError(f"cannot send a {type(value).__name__} (only numbers, strings, lists and arrays)")
    array = np.ascontiguousarray(array)
    return {"nd": array.dtype.str, "shape": list(array.shape), "b64": base64.b64encode(array.tobytes()).decode()}


def _library_value(value) -> bool:
    """A dtype-like object of NumPy or the framework (not an array, not a learner's class)."""
    module = getattr(type(value), "__module__", "") or ""
    return module.startswith(("numpy", "tinygrad_course", "torch")) and not hasattr(type(value), "__array__") \
        and not callable(getattr(type(value), "numpy", None))


def _numpy_of(value):
    for name in ("detach", "cpu", "numpy"):
        method = getattr(type(value), name, None)
        if callable(method):
            value = method(value)
    return value


def event(event_type: str, /, **fields) -> bytes:
    """One encoded event line."""
    return (json.dumps({"e": event_type, **fields}, allow_nan=False) + "\n").encode()


def decode(value, depth: int = 0):
    """The grader's view of a plain value: lists stay lists, arrays become fresh NumPy arrays."""
    if depth > MAX_DEPTH:
        raise ValueError("value nested too deeply")
    if value is None or type(value) in (bool, int, float, str):
        return value
    if type(value) is list:
        return [decode(v, depth + 1) for v in value]
    if type(value) is dict and set(value) == {"dict"} and type(value["dict"]) is list:
        return {_hashable(decode(k, depth + 1)): decode(v, depth + 1) for k, v in (_pair(p) for p in value["dict"])}
    if type(value) is dict and set(value) == {"set"} and type(value["set"]) is list:
        return frozenset(_hashable(decode(v, depth + 1)) for v in value["set"])
    if type(value) is dict and set(value) == {"repr"} and type(value["repr"]) is str:
        return Text(value["repr"])
    if type(value) is dict and set(value) == {"nd", "shape", "b64"}:
        dtype = np.dtype(str(value["nd"]))
        shape = value["shape"]
        if dtype.kind not in ARRAY_KINDS or type(shape) is not list or not all(type(s) is int and s >= 0 for s in shape):
            raise ValueError("malformed array")
        raw = base64.b64decode(str(value["b64"]), validate=True)
        if len(raw) != dtype.itemsize * math.prod(shape):
            raise ValueError("array size does not match its shape")
        return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
    raise ValueError(f"not plain data: {type(value).__name__}")


class Text(str):
    """The text of a value that was sent by its repr (a dtype, a class): equal only to the same text."""

    def __eq__(self, other):
        return type(other) is Text and str.__eq__(self, other)

    __hash__ = str.__hash__


def _pair(item):
    if type(item) is not list or len(item) != 2:
        raise ValueError("malformed mapping")
    return item


def _hashable(value):
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((repr(k), _hashable(v)) for k, v in value.items()))
    return value


def parse_events(data: bytes) -> tuple[list[dict], int]:
    """(well-formed events, number of malformed lines): anything that is not a JSON object with an 'e' is dropped."""
    events, bad = [], 0
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            if len(line) > MAX_LINE:
                raise ValueError
            item = json.loads(line)
            if type(item) is not dict or type(item.get("e")) is not str:
                raise ValueError
            events.append(item)
        except Exception:  # malformed, too deep, not UTF-8: the line is dropped and counted
            bad += 1
    return events, bad
