"""`gradcheck`: compare autograd's gradients with central finite differences (like
`torch.autograd.gradcheck`). Use float64 inputs: float32 is too coarse for the check."""
from __future__ import annotations

import warnings

import numpy as np

from ..factories import randn_like, zeros_like
from ..seams import component
from ..tensor_base import TensorBase
from .engine import grad as _grad
from .grad_mode import enable_grad, no_grad


class GradcheckError(RuntimeError):
    """Raised by `gradcheck` when analytical and numerical gradients disagree."""


def _outputs(func, inputs):
    out = func(*inputs)
    return out if isinstance(out, tuple) else (out,)


def _host(t):
    """A tensor's values as a float64 NumPy array, whatever its device (the Jacobians are built on the host)."""
    return t.detach().cpu()._data.astype(np.float64)


@component("numerical_jacobian")
def numerical_jacobian(func, inputs, i, out_index, eps):
    """Central finite differences of output `out_index` of `func(*inputs)` with respect to input `i`, as an
    (output elements, input elements) NumPy array: (f(x + eps) - f(x - eps)) / (2 eps), one input element at a
    time. A learner's `numerical_grad` (chapter 02) is installed here in build mode."""
    x = inputs[i]
    data = x._data  # perturbed in place, element by element (works for non-contiguous inputs too)
    cols = []
    for k in np.ndindex(data.shape):
        orig = data[k].item()
        with no_grad():
            data[k] = orig + eps
            plus = _host(_outputs(func, inputs)[out_index])
            data[k] = orig - eps
            minus = _host(_outputs(func, inputs)[out_index])
            data[k] = orig
        cols.append(((plus - minus) / (2 * eps)).reshape(-1))
    return np.stack(cols, axis=1) if cols else np.zeros((0, 0))


def _analytical_jacobian(func, inputs, out_index, diff_inputs):
    with enable_grad():
        out = _outputs(func, inputs)[out_index]
        flat = out.reshape(-1)
        rows = {i: [] for i in diff_inputs}
        for k in range(flat.numel()):
            gs = _grad(flat[k], [inputs[i] for i in diff_inputs], retain_graph=True, allow_unused=True)
            for i, g in zip(diff_inputs, gs):
                g = zeros_like(inputs[i]) if g is None else g
                rows[i].append(_host(g).reshape(-1))
    return {i: (np.stack(r) if r else np.zeros((0, inputs[i].numel()))) for i, r in rows.items()}


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **unused) -> bool:
    """Check `func`'s gradients w.r.t. every input that requires grad against finite differences.

    Returns True, or raises `GradcheckError` (or returns False with `raise_exception=False`)
    naming the input and output whose Jacobians differ.
    """
    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, TensorBase) and x.requires_grad]
    for i in diff:
        if inputs[i].dtype.name != "float64":
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point. "
                "This check will likely fail if all the inputs are not of double precision floating point."
            )
    n_out = len(_outputs(func, inputs))
    for o in range(n_out):
        analytical = _analytical_jacobian(func, inputs, o, diff)
        for i in diff:
            numerical = numerical_jacobian(func, inputs, i, o, eps)  # (outputs, inputs), like analytical
            a = analytical[i]
            if a.shape != numerical.shape or not np.allclose(a, numerical, rtol=rtol, atol=atol):
                msg = (
                    f"Jacobian mismatch for output {o} with respect to input {i},\n"
                    f"numerical:{numerical}\nanalytical:{a}\n"
                )
                if raise_exception:
                    raise GradcheckError(msg)
                return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
                  **unused) -> bool:
    """Check second derivatives: gradcheck applied to the function's vector-Jacobian product."""
    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    outs = _outputs(func, inputs)
    if grad_outputs is None:
        grad_outputs = tuple(randn_like(o, dtype=o.dtype).requires_grad_(True) for o in outs)
    diff = [x for x in inputs if isinstance(x, TensorBase) and x.requires_grad]

    def first_grads(*args):
        xs, gos = args[:len(inputs)], args[len(inputs):]
        with enable_grad():
            os_ = _outputs(func, xs)
            d = [x for x in xs if isinstance(x, TensorBase) and x.requires_grad]
            gs = _grad(os_, d, grad_outputs=gos, create_graph=True, allow_unused=True)
        return tuple(zeros_like(x) if g is None else g for g, x in zip(gs, d))

    del diff
    return gradcheck(first_grads, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
