"""Gradient clipping: `clip_grad_norm_`, `clip_grad_value_`."""
from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ...factories import tensor
from ...seams import component
from ...tensor import Tensor
from ...tensor_base import _wrap


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


@component("clip_grad_norm_")
def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach=None):
    """Scale all gradients together so their joint norm is at most max_norm; returns the total norm
    (before clipping) as a tensor."""
    grads = _grads(parameters)
    max_norm, norm_type = float(max_norm), float(norm_type)
    if not grads:
        return tensor(0.0)
    xp = grads[0]._xp
    with no_grad():
        if norm_type == float("inf"):
            norms = [xp.abs(g._data).max() if g._data.size else xp.float32(0) for g in grads]
            total = xp.max(xp.stack([xp.asarray(n, dtype=xp.float64) for n in norms]))
        else:
            total = sum(float((xp.abs(g._data.astype(xp.float64)) ** norm_type).sum()) for g in grads) ** (1.0 / norm_type)
        total = float(total)
        if error_if_nonfinite and not (total == total and total != float("inf")):
            raise RuntimeError(
                f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot be "
                "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
                "`error_if_nonfinite=False`"
            )
        coef = max_norm / (total + 1e-6)
        if coef < 1:
            for g in grads:
                g.mul_(coef)
    return _wrap(xp.asarray(total, dtype=grads[0]._data.dtype))


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient element into [-clip_value, clip_value], in place."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)
