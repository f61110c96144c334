"""Probes of chapter 01's view geometry: views made by the framework's own ops (`view`/`reshape`,
`permute`/`transpose`/`.T`, `expand`, `x[...]`), their values, shapes, strides (of dims larger than 1),
storage offsets, a write through one of them and the gradient that flows back through them."""
from __future__ import annotations

import numpy as np

from .. import factories as F


def _record(views) -> dict:
    """Plain data of `views`: values, shapes, strides of dims larger than 1, storage offsets."""
    values, geometry = [], []
    for v in views:
        values.extend(v.detach().numpy().reshape(-1).tolist())
        shape, strides = tuple(v.shape), v.stride()
        geometry.extend([len(shape), *shape, *[s if n > 1 else -1 for n, s in zip(shape, strides)],
                         v.storage_offset()])
    return {"values": np.array(values, dtype=np.float64), "geometry": np.array(geometry, dtype=np.float64)}


def _grad(make) -> np.ndarray:
    x = F.arange(24.0).view(2, 3, 4).requires_grad_()
    weights = F.arange(1.0, 200.0)
    total = sum((v * weights[:v.numel()].view(v.shape)).sum() for v in make(x))
    total.backward()
    return x.grad.numpy().copy()


def view_probe():
    """views and reshapes of contiguous, sliced and transposed tensors; the ones no strides allow raise."""
    def make(x):
        return [x.view(6, 4), x.view(4, 3, 2), x[:, 1:].reshape(2, 8), x.transpose(0, 1).view(3, 2, 2, 2),
                x[:, :1].view(2, 4), x.view(24)[::2].view(3, 4), x.permute(2, 0, 1).reshape(4, 6),
                x[1, 1:].view(2, 2, 2)]
    x = F.arange(24.0).view(2, 3, 4)
    refused = []
    for impossible in (lambda: x.transpose(0, 1).view(3, 8), lambda: x.transpose(1, 2).view(-1),
                       lambda: x[:, ::2].view(4, 4)):
        try:
            impossible()
            refused.append(0.0)
        except RuntimeError:
            refused.append(1.0)
    return {**_record(make(x)), "grad": _grad(make), "refused": np.array(refused)}


def permute_probe():
    """permute, transpose, t and .T of contiguous and non-contiguous tensors, a write through a transpose."""
    def make(x):
        return [x.permute(2, 0, 1), x.transpose(0, 2), x.T, x[1].t(), x[:, 1:, ::2].transpose(1, 2),
                x.permute(1, 2, 0).transpose(0, 1)]
    x = F.arange(24.0).view(2, 3, 4)
    y = F.zeros((3, 4))
    y.T[1, 2] = 5.0
    y.t()[0] += 1.0
    return {**_record(make(x)), "grad": _grad(make), "written": y.numpy().astype(np.float64)}


def expand_probe():
    """expand of size-1 and new leading dims, of transposed tensors, and the gradient summed back."""
    def make(x):
        return [x[:, :1].expand(2, 3, 4), x[0, 0].expand(3, 4), x[:, 1:2, :1].expand(5, 2, 3, 2),
                x[0, :, :1].T.expand(2, 3), x[1].expand(2, 3, 4)]
    return {**_record(make(F.arange(24.0).view(2, 3, 4))), "grad": _grad(make)}


def index_probe():
    """basic indexing with ints, negative ints and slices (steps, clamped ends, empty), on views too, a write
    through an index, and the gradient scattered back."""
    def make(x):
        return [x[1], x[:, ::2], x[1, 1:, ::3], x[-1, -2], x[:, 5:], x[::2, 1:3, -1], x[0][2], x.transpose(0, 2)[1:, 2],
                x[1, 0, 3], x[:, -2:, 1:10:2]]
    y = F.zeros((3, 4))
    y[1:, ::2][0] += 5.0
    y[-1][1:3] = 7.0
    return {**_record(make(F.arange(24.0).view(2, 3, 4))), "grad": _grad(make), "written": y.numpy().astype(np.float64)}


PROBES = {"view_strides": view_probe, "permute_strides": permute_probe, "expand_strides": expand_probe,
          "index_view": index_probe}


def contiguous_probe():
    """contiguous() of transposed, sliced and expanded views (values, a fresh row-major storage that a write
    does not share), reshape of a view that needs a copy, and the gradient through them."""
    def make(x):
        return [x.transpose(0, 2).contiguous(), x[:, 1:, ::2].contiguous(), x[1, :2, :1].expand(3, 2, 4).contiguous(),
                x.permute(1, 2, 0).reshape(12, 2), x.T.contiguous()[1:], x[:, 2].t().contiguous()]
    x = F.arange(24.0).view(2, 3, 4)
    copies = make(x)
    fresh = [float(c.is_contiguous() and (c._base is None or c._base._data.flags.c_contiguous)) for c in copies]
    copies[0][0, 0, 0] = -1.0
    return {**_record(copies), "grad": _grad(make), "fresh": np.array(fresh), "source": x.numpy().astype(np.float64)}


PROBES["storage_positions"] = contiguous_probe
