"""Debugging helpers for training: per-parameter gradient statistics and a NaN/Inf finder.

`grad_stats(model)` answers "are my gradients vanishing or exploding, and where?" with one row per
parameter (gradient norm, mean, standard deviation, largest magnitude); `find_nonfinite(model)`
lists the parameters or gradients that hold NaN or Inf. Both accept an `nn.Module` or anything with
`named_parameters()`, a dict of name -> tensor, or a list of tensors.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .autograd.grad_mode import no_grad
from .seams import component
from .tensor import Tensor


def _named_tensors(model):
    """(name, tensor) pairs from a module, a dict, or a sequence of tensors."""
    if hasattr(model, "named_parameters"):
        return list(model.named_parameters())
    if isinstance(model, dict):
        return list(model.items())
    if isinstance(model, Tensor):
        return [("tensor", model)]
    return [(str(i), t) for i, t in enumerate(model)]


def _host(t):
    """The tensor's data as a float64 NumPy array (copied from the GPU if needed)."""
    data = t._data
    if hasattr(data, "get"):
        data = data.get()
    return np.asarray(data, dtype=np.float64)


@dataclass(frozen=True)
class GradStat:
    """Statistics of one parameter's gradient (all None when the parameter has no gradient)."""

    name: str
    shape: tuple
    norm: float | None
    mean: float | None
    std: float | None
    max_abs: float | None
    param_norm: float

    @property
    def has_grad(self) -> bool:
        """True if the parameter had a gradient."""
        return self.norm is not None


def _stat(name, p, norm) -> GradStat:
    param_norm = float(np.sqrt(np.sum(_host(p.detach()) ** 2)))
    if p.grad is None:
        return GradStat(name, tuple(p.shape), None, None, None, None, param_norm)
    g = _host(p.grad)
    # std with Bessel's correction, like Tensor.std(); NaN for a single element, as in PyTorch.
    std = float(g.std(ddof=1)) if g.size > 1 else math.nan
    return GradStat(name, tuple(p.shape), float(norm), float(g.mean()), std,
                    float(np.abs(g).max()) if g.size else 0.0, param_norm)


@component("grad_norms")
def grad_norms(model) -> dict:
    """{parameter name: L2 norm of its gradient} for every parameter of `model` that has a gradient (the
    "grad norm" column of `grad_stats`)."""
    return {name: float(np.sqrt(np.sum(_host(p.grad) ** 2)))
            for name, p in model.named_parameters() if p.grad is not None}


class GradStats(list):
    """A list of `GradStat` rows that prints as a table (and renders as HTML in Jupyter)."""

    _COLUMNS = ("name", "shape", "grad norm", "grad mean", "grad std", "grad max|.|", "param norm")

    def _cells(self):
        def num(v):
            return "-" if v is None else f"{v:.3e}"

        return [
            (s.name, "x".join(map(str, s.shape)) or "scalar", num(s.norm), num(s.mean), num(s.std),
             num(s.max_abs), num(s.param_norm))
            for s in self
        ]

    @property
    def total_norm(self) -> float:
        """The norm of all gradients together (what `clip_grad_norm_` compares with max_norm)."""
        return math.sqrt(sum(s.norm ** 2 for s in self if s.has_grad))

    def __repr__(self):
        rows = [self._COLUMNS] + self._cells()
        widths = [max(len(r[i]) for r in rows) for i in range(len(self._COLUMNS))]
        lines = []
        for k, row in enumerate(rows):
            lines.append("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))))
            if k == 0:
                lines.append("  ".join("-" * w for w in widths))
        lines.append(f"total grad norm: {self.total_norm:.3e}")
        return "\n".join(lines)

    __str__ = __repr__

    def _repr_html_(self):
        import html

        head = "".join(f"<th>{html.escape(c)}</th>" for c in self._COLUMNS)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in self._cells()
        )
        return (f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
                f"<p>total grad norm: {self.total_norm:.3e}</p>")


def grad_stats(model) -> GradStats:
    """One row per parameter with its gradient's norm, mean, std and largest magnitude.

    Call it after `loss.backward()`. Tiny norms in the first layers suggest vanishing gradients,
    huge ones exploding gradients; parameters without a gradient show "-".
    """
    named = _named_tensors(model)
    norms = grad_norms(_Named(named))
    return GradStats(_stat(name, p, norms.get(name)) for name, p in named)


class _Named:
    """(name, tensor) pairs seen as a module's `named_parameters()` (what `grad_norms` reads)."""

    def __init__(self, pairs):
        self._pairs = pairs

    def named_parameters(self):
        return iter(self._pairs)

    def parameters(self):
        return (p for _, p in self._pairs)


@dataclass(frozen=True)
class NonFinite:
    """A parameter (where="param") or gradient (where="grad") holding NaN or Inf values."""

    name: str
    where: str
    nan: int
    inf: int

    def __str__(self):
        return f"{self.name}{'.grad' if self.where == 'grad' else ''}: {self.nan} nan, {self.inf} inf"


def find_nonfinite(model) -> list:
    """Every parameter and gradient that contains NaN or Inf, as `NonFinite` entries (empty if none)."""
    found = []
    for name, p in _named_tensors(model):
        for where, t in (("param", p), ("grad", p.grad)):
            if t is None:
                continue
            data = _host(t.detach())
            nan, inf = int(np.isnan(data).sum()), int(np.isinf(data).sum())
            if nan or inf:
                found.append(NonFinite(name, where, nan, inf))
    return found


def assert_finite(model) -> None:
    """Raise a RuntimeError naming the first parameters/gradients that hold NaN or Inf."""
    bad = find_nonfinite(model)
    if bad:
        raise RuntimeError(
            "Non-finite values found: " + "; ".join(map(str, bad)) + ". Hint: run the step under "
            "tc.autograd.detect_anomaly() to find the operation that produced them."
        )


@component("first_nonfinite_module")
def first_nonfinite_module(model, x):
    """The name of the first submodule whose output holds NaN or Inf while `model(x)` runs (None if every
    output is finite): forward hooks on every submodule, removed again afterwards."""
    found, handles = [], []

    def watch(name):
        def hook(module, inputs, output):
            if not found and isinstance(output, Tensor) and not bool(output.isfinite().all()):
                found.append(name)
        return hook

    for name, module in model.named_modules():
        if name:
            handles.append(module.register_forward_hook(watch(name)))
    try:
        with no_grad():
            model(x)
    finally:
        for handle in handles:
            handle.remove()
    return found[0] if found else None
