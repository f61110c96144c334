"""Turning whatever a learner returns (NumPy arrays, framework tensors, lists, scalars) into NumPy."""
from __future__ import annotations

import numpy as np


def to_numpy(value):
    """A NumPy view of `value`: framework tensors via .detach()/.numpy() (duck typing), others via asarray."""
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "detach") and callable(value.detach):
        value = value.detach()
    if hasattr(value, "cpu") and callable(value.cpu) and not isinstance(value, np.generic):
        value = value.cpu()
    if hasattr(value, "numpy") and callable(value.numpy) and not isinstance(value, np.generic):
        value = value.numpy()
    return np.asarray(value)


def is_array_like(value) -> bool:
    """Whether `value` can be compared as an array (not None, not a string, not a function)."""
    if value is None or isinstance(value, (str, bytes)) or callable(value) and not hasattr(value, "numpy"):
        return False
    try:
        to_numpy(value)
    except Exception:
        return False
    return True


def describe(value) -> str:
    """A one-line description: type, shape and dtype, e.g. 'ndarray shape (3, 4) float32'."""
    if value is None:
        return "None"
    if not is_array_like(value):
        return f"{type(value).__name__} {value!r:.60}"
    array = to_numpy(value)
    kind = type(value).__name__
    return f"{kind} shape {tuple(array.shape)} {array.dtype}"


def preview(value, limit: int = 6) -> str:
    """A short printout of the first few values."""
    array = to_numpy(value)
    flat = array.ravel()[:limit]
    more = ", ..." if array.size > limit else ""
    return "[" + ", ".join(f"{v:.4g}" if np.issubdtype(array.dtype, np.floating) else str(v) for v in flat) + more + "]"


def show(value, limit: int = 240) -> str:
    """A learner-readable printout of an input: arrays/tensors with shape and dtype, others by repr."""
    if isinstance(value, (str, bytes, int, float, bool, type(None))) or isinstance(value, (tuple, list)) \
            and not any(hasattr(v, "numpy") or isinstance(v, np.ndarray) for v in value):
        text = repr(value)
    elif is_array_like(value):
        array = to_numpy(value)
        values = np.array2string(array, precision=4, threshold=24, edgeitems=2, separator=", ").replace("\n", "")
        text = f"{values} (shape {tuple(array.shape)}, {array.dtype})" if array.ndim else f"{values} ({array.dtype})"
    elif isinstance(value, (tuple, list)):
        text = "(" + ", ".join(show(v, limit // 2) for v in value) + ("," if len(value) == 1 else "") + ")"
    else:
        text = f"a {type(value).__name__}"
    return text if len(text) <= limit else text[:limit - 3] + "..."
