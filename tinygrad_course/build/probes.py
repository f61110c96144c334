"""Probes: small fixed computations that run each component through the framework (not called directly),
so that a component is checked where it is used. A probe returns plain data (a dict of NumPy arrays);
`compare` decides whether a learner's run matches the reference's.

The same probe runs twice: with the learner's components installed (in the learner's kernel, or in a child
process for the command-line status and the milestones) and with the reference (in a process that never
ran learner code).
"""
from __future__ import annotations

import numpy as np

from .. import factories as F
from .. import nn, optim
from ..generator import manual_seed
from ..shapes import broadcast_shapes
from ..utils.data.dataloader import DataLoader
from . import probes_distributed
from .milestone_runs import resume_run


def _np(t):
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t, dtype=np.float64)


def contiguous_strides():
    x = F.zeros((2, 3, 4))
    views = [x, x.transpose(0, 2), x[:, 1:, :], x[:, :, ::2], x.unsqueeze(1), F.zeros((0, 3)), x.permute(1, 0, 2)]
    return {"contiguous": np.array([v.is_contiguous() for v in views], dtype=np.float64)}


def broadcast_shapes_probe():
    cases = [((2, 1, 3), (4, 1)), ((5,), (1, 5)), ((), (3, 2)), ((0,), (1,)), ((3, 1), (1, 4))]
    out = [list(broadcast_shapes(a, b)) + [-1] * (4 - len(broadcast_shapes(a, b))) for a, b in cases]
    try:
        broadcast_shapes((2, 3), (4, 3))
        refused = 0.0
    except RuntimeError:
        refused = 1.0
    return {"shapes": np.array(out, dtype=np.float64), "refused": np.array([refused])}


def mul_backward():
    manual_seed(1)
    a, b = F.randn(2, 1, 3, dtype=np.float64), F.randn(4, 1, dtype=np.float64)
    a.requires_grad_(True)
    b.requires_grad_(True)
    (a * b * 3.0).sum().backward()
    c = F.randn(3, requires_grad=True)
    (c * 2.5).sum().backward()
    return {"ga": _np(a.grad), "gb": _np(b.grad), "gc": _np(c.grad)}


def tanh_backward():
    x = F.linspace(-3, 3, 7).reshape(7, 1).requires_grad_(True)
    (x.tanh() * F.arange(7).reshape(7, 1)).sum().backward()
    return {"gx": _np(x.grad)}


def mm_backward():
    manual_seed(2)
    a, b = F.randn(3, 4, requires_grad=True), F.randn(4, 2, requires_grad=True)
    ((a @ b) * F.arange(6).reshape(3, 2)).sum().backward()
    return {"ga": _np(a.grad), "gb": _np(b.grad)}


def topological_sort():
    manual_seed(7)
    w = F.randn(2, requires_grad=True)
    h = w.sigmoid()
    out = (h * h + h.exp() * w + (h * w).sum()).sum()
    out.backward()
    deep = F.tensor(1.5, requires_grad=True)
    y = deep
    for _ in range(500):
        y = y * 1.001
    y.backward()
    return {"gw": _np(w.grad), "gdeep": _np(deep.grad)}


def linear_forward():
    manual_seed(3)
    layer = nn.Linear(4, 3)
    x = F.randn(5, 4, requires_grad=True)
    out = layer(x)
    out.sum().backward()
    return {"out": _np(out), "gx": _np(x.grad), "gw": _np(layer.weight.grad)}


def dropout_forward():
    manual_seed(4)
    layer = nn.Dropout(0.25)
    x = F.ones(4000)
    y = layer(x)
    kept = _np(y) != 0
    layer.eval()
    same = _np(layer(x))
    return {"kept_fraction": np.array([kept.mean()]), "scaled": np.array([float(np.allclose(_np(y)[kept], 1 / 0.75))]),
            "eval_identity": same}


def _train(make_opt, steps=4):
    manual_seed(5)
    w = F.randn(3, 2, requires_grad=True)
    b = F.zeros(2, requires_grad=True)
    x = F.randn(8, 3)
    opt = make_opt([w, b])
    for _ in range(steps):
        opt.zero_grad()
        (((x @ w + b) - 1.0) ** 2).mean().backward()
        opt.step()
    return {"w": _np(w), "b": _np(b)}


def sgd_step():
    return _train(lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9))


def adam_step():
    return _train(lambda ps: optim.Adam(ps, lr=0.05))


def clip_grad_norm():
    manual_seed(6)
    ps = [F.randn(3, requires_grad=True), F.randn(2, 2, requires_grad=True)]
    (ps[0].sum() * 4 + (ps[1] ** 2).sum() * 3).backward()
    norm = nn.utils.clip_grad_norm_(ps, 1.0)
    return {"norm": np.array([float(norm)]), "g0": _np(ps[0].grad), "g1": _np(ps[1].grad)}


def default_collate():
    manual_seed(7)
    samples = [(F.randn(2, 3), i % 3, 0.5 * i) for i in range(5)]
    xb, yb, wb = next(iter(DataLoader(samples, batch_size=4)))  # no collate_fn: the loader collates
    return {"x": _np(xb), "y": _np(yb), "w": _np(wb), "dtypes": np.array([yb.dtype.itemsize, wb.dtype.itemsize])}


def checkpoint():
    return resume_run()


PROBES = {"contiguous_strides": contiguous_strides, "broadcast_shapes": broadcast_shapes_probe,
          "Mul.backward": mul_backward, "Tanh.backward": tanh_backward, "Mm.backward": mm_backward, "topological_sort": topological_sort,
          "Linear.forward": linear_forward, "Dropout.forward": dropout_forward, "SGD.step": sgd_step,
          "Adam.step": adam_step, "clip_grad_norm_": clip_grad_norm,
          "default_collate": default_collate, "save_checkpoint": checkpoint,
          "load_checkpoint": checkpoint}
# chapter 09
PROBES.update(probes_distributed.PROBES)
# random components are compared by what must hold, not value by value
_TOLERANCE = {"Dropout.forward": {"kept_fraction": 0.03}}


def compare(name: str, learner: dict, expected: dict, exact: bool = False) -> str | None:
    """None when the learner's probe output matches the reference's (bit for bit with `exact`), else what
    differs (in words)."""
    for key, want in expected.items():
        got = learner.get(key)
        if got is None:
            return f"{key}: missing"
        got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
        if got.shape != want.shape:
            return f"{key}: shape {got.shape}, expected {want.shape}"
        atol = _TOLERANCE.get(name, {}).get(key, 1e-5)
        same = np.array_equal(got, want, equal_nan=True) if exact else np.allclose(got, want, rtol=1e-4, atol=atol,
                                                                                   equal_nan=True)
        if not same:
            worst = int(np.argmax(np.abs(got - want).reshape(-1))) if got.size else 0
            return (f"{key}: element {tuple(int(i) for i in np.unravel_index(worst, got.shape)) if got.ndim else ()} is "
                    f"{got.reshape(-1)[worst]:.6g}, expected {want.reshape(-1)[worst]:.6g}")
    return None
