"""`repr(tensor)` in PyTorch's format: `tensor([1., 2.], requires_grad=True)` and friends.

Follows the rules of PyTorch's printer: integer-valued floats print as `1.`, otherwise four
decimals, switching to scientific notation for very large/small ranges; elements are aligned
to a common width, lines wrap at 80 characters, and tensors over 1000 elements are summarised
with `...`.
"""
from __future__ import annotations

import math

import numpy as np

from . import dtypes as _dt
from ._namespace import set_namespace

_UNSET = object()


class PrintOptions:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


PRINT_OPTS = PrintOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None,
                     namespace=_UNSET):
    """Change how tensors print, like `torch.set_printoptions`. `namespace="torch"` (or "tc", or None to
    detect it) chooses how `Size` and dtypes print: `torch.Size([2])` or `tc.Size([2])`."""
    if namespace is not _UNSET:
        set_namespace(namespace)
    if profile == "default":
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 4, 1000, 3, 80
    for name, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                        ("linewidth", linewidth)):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


class _Formatter:
    def __init__(self, values: np.ndarray, floating: bool):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not floating:
            for v in flat:
                self.max_width = max(self.max_width, len(_plain(v)))
            return
        # like PyTorch, only non-zero finite values set the width ("nan" and "inf" are not padded for)
        finite = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if finite.size == 0:
            return
        a = np.abs(finite)
        lo, hi = a.min(), a.max()
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        p = PRINT_OPTS.precision
        if self.int_mode:
            if hi / lo > 1000.0 or hi > 1.0e8:
                self.sci_mode = True
                widths = [len(f"{v:.{p}e}") for v in finite]
            else:
                widths = [len(f"{v:.0f}") + 1 for v in finite]
        else:
            if hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4:
                self.sci_mode = True
                widths = [len(f"{v:.{p}e}") for v in finite]
            else:
                widths = [len(f"{v:.{p}f}") for v in finite]
        self.max_width = max(self.max_width, max(widths))
        if PRINT_OPTS.sci_mode is not None:
            self.sci_mode = PRINT_OPTS.sci_mode

    def format(self, value) -> str:
        if self.floating:
            value = float(value)
            p = PRINT_OPTS.precision
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{p}f}"
        else:
            ret = _plain(value)
        return (self.max_width - len(ret)) * " " + ret


def _plain(v):
    if isinstance(v, (bool, np.bool_)):
        return "True" if v else "False"
    return str(int(v)) if isinstance(v, (int, np.integer)) else str(v)


def _summarized(values):
    e = PRINT_OPTS.edgeitems
    if values.ndim == 0:
        return values
    if values.shape[0] > 2 * e:
        return np.concatenate([_summarized(values[:e]), _summarized(values[-e:])]) if values.ndim == 1 else np.stack(
            [_summarized(v) for v in list(values[:e]) + list(values[-e:])])
    return np.stack([_summarized(v) for v in values]) if values.ndim > 1 else values


def _vector_str(values, indent, summarize, fmt):
    element_length = fmt.max_width + 2
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / element_length)))
    e = PRINT_OPTS.edgeitems
    if summarize and values.shape[0] > 2 * e:
        data = [fmt.format(v) for v in values[:e]] + [" ..."] + [fmt.format(v) for v in values[-e:]]
    else:
        data = [fmt.format(v) for v in values]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str(values, indent, summarize, fmt):
    dim = values.ndim
    if dim == 0:
        return fmt.format(values.item() if not isinstance(values, np.generic) else values)
    if dim == 1:
        return _vector_str(values, indent, summarize, fmt)
    e = PRINT_OPTS.edgeitems
    if summarize and values.shape[0] > 2 * e:
        slices = ([_tensor_str(values[i], indent + 1, summarize, fmt) for i in range(e)] + ["..."]
                  + [_tensor_str(values[i], indent + 1, summarize, fmt) for i in range(len(values) - e, len(values))])
    else:
        slices = [_tensor_str(values[i], indent + 1, summarize, fmt) for i in range(values.shape[0])]
    return "[" + ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices) + "]"


def _add_suffixes(tensor_str, suffixes, indent):
    parts = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t, prefix="tensor(") -> str:
    """The PyTorch-style representation of tensor `t`."""
    indent = len(prefix)
    suffixes = []
    values = t.detach().cpu()._data
    if t.dtype in (_dt.bfloat16, _dt.float16):
        values = values.astype(np.float32)
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    default = t.dtype in (_dt.get_default_dtype(), _dt.int64, _dt.bool_)
    if values.size == 0:
        if values.ndim != 1:
            suffixes.append(f"size={tuple(values.shape)}")
        if t.dtype is not _dt.get_default_dtype():
            suffixes.append(f"dtype={t.dtype}")
        body = "[]"
    else:
        if not default:
            suffixes.append(f"dtype={t.dtype}")
        summarize = values.size > PRINT_OPTS.threshold
        fmt = _Formatter(_summarized(values) if summarize else values, t.dtype.is_floating_point)
        body = _tensor_str(values, indent, summarize, fmt)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
