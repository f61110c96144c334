"""Probes of chapter 02d's engine (exercises 02d.2 and 02d.3): `Function.apply`, `Node.apply` and `AccumulateGrad.apply` run
inside the framework on a small model, compared with the reference's run; and of where a backward pass starts
(exercise 02d.1's `root_gradient`).

The engine's seams take the calls of a learner's ops (build mode), so the probe installs ops written as the
exercise writes them (02d's checks' `ENGINE_OPS`: forward on arrays, backward with tensor ops) for its run, with or without
the learner's engine: what differs is then the engine alone. The run covers broadcasting (gradients summed
back), a Python number, a saved output, a leaf used twice, `.grad` accumulating over two passes, a call under
`no_grad`, the graph freed after backward, and a second derivative (`create_graph`, the reference's).
"""
from __future__ import annotations

import zlib

import numpy as np

from .. import factories as F
from .. import seams
from ..autograd.engine import grad as autograd_grad
from ..autograd.grad_mode import no_grad
from ..generator import manual_seed
from ..grading.exercises.ch02d_engine import ENGINE_OPS
from ..grading.learner_op import runner
from .probe_codes import error




def _np(t):
    return np.asarray(t.detach().numpy(), dtype=np.float64)


def _names(t):
    """The grad_fn names along the first edges below `t`, as numbers (crc32) for comparing."""
    out, node = [], t.grad_fn
    while node is not None and len(out) < 6:
        out.append(zlib.crc32(node.name().encode()))
        node = node.next_functions[0][0] if node.next_functions else None
    return np.array(out, dtype=np.float64)


def _model_run():
    manual_seed(5)
    x = F.randn(3, 4)
    w, b = F.randn(4, requires_grad=True), F.randn(1, requires_grad=True)
    w.grad = F.ones(4) * 0.5  # accumulated into
    y = ((x * w + b).tanh() ** 2).sum()
    y.backward()
    try:
        y.backward()  # the graph was freed
        freed = 0.0
    except RuntimeError:
        freed = 1.0
    v = F.randn(2, 2, dtype=np.float64, requires_grad=True)
    (v * v + v).sum(1).sum().backward(retain_graph=True)
    (v * 2.0).sum().backward()
    with no_grad():
        plain = x * w
    cube = (w * w * w).sum()
    gw, = autograd_grad(cube, w, create_graph=True)
    (gw * gw).sum().backward()  # a second derivative into w.grad
    flags = [freed, float(plain.requires_grad), float(plain.grad_fn is None), float(w.grad.is_contiguous())]
    return {"y": _np(y), "gw": _np(w.grad), "gb": _np(b.grad), "gv": _np(v.grad), "names": _names(y),
            "flags": np.array(flags)}


def engine_probe():
    """The model run with `ENGINE_OPS` as the learner's ops (the seams restored after)."""
    with seams.replaced({name: runner(op, name) for name, op in ENGINE_OPS.items()}):
        return _model_run()


def root_gradient_probe():
    """backward() from one output: the gradient it starts from (a scalar's ones in its shape and dtype, a given
    one, cast to the output's dtype), and PyTorch's errors for an output it cannot start from."""
    manual_seed(9)
    w = F.randn(3, requires_grad=True)
    (w * w).sum().backward()
    cell = (w * 2.0).sum(0, keepdim=True).reshape(1, 1)  # one element, not 0-d
    cell.backward()
    w64 = F.randn(2, dtype=np.float64, requires_grad=True)
    (w64 * 3.0).backward(F.tensor([1.0, -2.0], dtype=np.float32))  # cast to the output's dtype by the engine
    (w64 * w64).sum().backward(F.tensor(0.5, dtype=np.float64))
    errors = [error(lambda: (w * 2.0).backward()), error(lambda: (w * 2.0).backward(F.ones(2))),
              error(lambda: F.tensor(2.0).backward()), error(lambda: (w * 2.0).sum().long().backward())]
    return {"gw": _np(w.grad), "gw64": _np(w64.grad), "errors": np.concatenate(errors)}


def saved_tensors_probe():
    """What nodes keep for backward: the model run (the framework's ops and ops written as the exercises write
    them save, read and free their tensors), a custom Function's saved input and output, and PyTorch's errors for
    a saved tensor modified in place and for a second pass through a freed graph."""
    arrays = _model_run()
    with seams.replaced({name: runner(op, name) for name, op in ENGINE_OPS.items()}):
        arrays.update({f"mine_{k}": v for k, v in _model_run().items()})
    x = F.randn(3, requires_grad=True)
    h = x * 2.0
    y = h * h  # saves h, which has a grad_fn
    with no_grad():
        h.add_(1.0)
    changed = error(lambda: y.sum().backward())
    z = (x.exp() * x).sum()
    z.backward()
    freed = error(lambda: z.backward())
    return {**arrays, "gx": _np(x.grad), "errors": np.concatenate([changed, freed])}


def saved_output_probe():
    """Ops whose backward reads their own output (`ctx.saved_output`: cumprod, cumsum, a tensor exponent), run
    once, twice with retain_graph, after their output changed in place, and after the graph was freed."""
    manual_seed(12)
    x = F.randn(5, dtype=np.float64, requires_grad=True)
    e = F.randn(5, dtype=np.float64, requires_grad=True)
    y = (x.cumprod(0) * x.cumsum(0)).sum() + (x.abs() + 0.5).pow(e).sum()
    y.backward(retain_graph=True)
    y.backward()
    freed = error(lambda: y.backward())
    z = x.cumprod(0)
    with no_grad():
        z.mul_(2.0)
    changed = error(lambda: z.sum().backward())
    return {"gx": _np(x.grad), "ge": _np(e.grad), "errors": np.concatenate([freed, changed])}


def tensor_backward_probe():
    """`tensor.backward(...)`: the plain calls (a loss, a given gradient, a leaf, `.grad` accumulating, the graph
    kept by `retain_graph=True` and then freed, PyTorch's errors) and those that stay the reference's (a hook on
    an intermediate tensor, `retain_grad`, `create_graph`, `inputs=`)."""
    manual_seed(10)
    w, x = F.randn(3, requires_grad=True), F.randn(4, 3)
    ((x * w).tanh() * (x @ w).unsqueeze(1)).sum().backward()
    (w * 3.0).backward(F.tensor([1.0, -2.0, 0.5]))  # a given gradient, accumulated
    leaf = F.randn(2, requires_grad=True)
    leaf.backward(F.ones(2))  # a leaf's own backward: its AccumulateGrad
    kept = (w * w).sum()
    kept.backward(retain_graph=True)
    kept.backward()
    freed = error(lambda: kept.backward())
    errors = [error(lambda: (w * 2.0).backward()), error(lambda: F.tensor(2.0).backward())]
    h = w * 2.0
    h.register_hook(lambda g: g * 10.0)  # hooks, retain_grad, create_graph and inputs= are the reference's
    h.retain_grad()
    (h * h).sum().backward()
    v = F.randn(3, dtype=np.float64, requires_grad=True)
    (v ** 3).sum().backward(create_graph=True)
    (v.grad * v).sum().backward(inputs=[v])
    return {"gw": _np(w.grad), "gh": _np(h.grad), "gleaf": _np(leaf.grad), "gv": _np(v.grad),
            "errors": np.concatenate([freed, *errors])}


PROBES = {"Tensor.backward": tensor_backward_probe, "Function.apply": engine_probe,
          **{f"Node.{attr}": saved_tensors_probe for attr in ("save_for_backward", "saved_tensors", "release_variables")},
          "Node.saved_output": saved_output_probe, "Node.apply": engine_probe, "AccumulateGrad.apply": engine_probe, "AccumulateGrad.__init__": engine_probe,
          "root_gradient": root_gradient_probe}
