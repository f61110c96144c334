"""Probe of chapter 01b's tensor methods (TensorBase's shape, stride, value and autograd-field methods): a small
model trains for three steps while its tensors, views, parameters and loss are read through the methods, and
every fact is kept as plain numbers: sizes and strides, the Python types returned, shared storage, PyTorch's
errors, the gradients that flow after a detach, the printed tensors (as character codes)."""
from __future__ import annotations

import numpy as np

from .. import factories as F
from .. import nn, optim
from ..autograd.grad_mode import no_grad
from ..generator import manual_seed
from ..nn.functional import cross_entropy
from ..shapes import Size
from ..tensor_base import BASE_METHODS


def _raises(call, kind) -> float:
    try:
        call()
    except kind:
        return 1.0
    return 0.0


def _facts(t) -> list[float]:
    """Sizes, strides, contiguity and element facts of tensor `t`, each read through a method, with the Python
    type of what came back."""
    shape, size = t.shape, t.size()
    out = [float(isinstance(shape, Size)), float(isinstance(size, Size)), t.ndim, t.dim(), t.numel(),
           float(type(t.numel()) is int), *shape, *size, *t.stride(), float(t.is_contiguous())]
    if t.ndim:
        out += [len(t), t.size(-1), t.size(0), t.stride(-1), t.stride(0)]
    flat = np.asarray(t.detach().numpy(), dtype=np.float64).reshape(-1)
    listed = t.tolist()
    out += [float(flat.sum()), float(np.shares_memory(t.detach().numpy(), t._data)),
            float(isinstance(listed, list) if t.ndim else type(listed) is float)]
    return out


def tensor_object_probe():
    """Three SGD steps of a Linear-Tanh-Linear classifier, reading every tensor through chapter 01b's methods."""
    manual_seed(11)
    model = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2))
    x = F.randn(6, 4)
    y = F.tensor([0, 1, 1, 0, 1, 0])
    opt = optim.SGD(model.parameters(), lr=0.5)
    losses, facts = [], []
    for _ in range(3):
        opt.zero_grad()
        loss = cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        value = loss.item()
        losses.append(value)
        facts.append(float(type(value) is float and bool(loss > 0)))
    w = model[0].weight
    views = [x, x.T, x[:, None], x[1:, ::2], x[:, :1].expand(6, 3), x.view(3, 8), x[2], loss, w, w.T, y,
             F.zeros((0, 3))]
    for v in views:
        facts += _facts(v)
    h = model[0](x)
    d = h.detach()
    facts += [float(w.requires_grad), float(w.is_leaf), float(h.requires_grad), float(h.is_leaf),
              float(d.requires_grad), float(d.is_leaf), float(d.grad_fn is None),
              float(np.shares_memory(d._data, h._data)), float(d._version is h._version),
              float(x[1:].detach().storage_offset()), float(type(y[0].item()) is int),
              float(type((y == 1)[0].item()) is bool), float(x.requires_grad_(False) is x),
              _raises(lambda: len(loss), TypeError), _raises(lambda: bool(x), RuntimeError),
              _raises(lambda: bool(F.zeros((0,))), RuntimeError), _raises(lambda: x.item(), RuntimeError),
              _raises(lambda: w.numpy(), RuntimeError), _raises(lambda: h.requires_grad_(False), RuntimeError),
              _raises(lambda: y.requires_grad_(), RuntimeError), _raises(lambda: x.size(2), IndexError),
              _raises(lambda: x.stride(-3), IndexError)]
    with no_grad():
        facts.append(float((w * 2).is_leaf))
    a = F.tensor([0.5, -1.0, 2.0]).requires_grad_()
    e = a.exp()
    e.detach().zero_()
    facts.append(_raises(lambda: e.sum().backward(), RuntimeError))  # the version counter the alias shares
    leaf = h.detach().requires_grad_()
    leaf.requires_grad = True
    (leaf * leaf).sum().backward()
    printed = "\n".join([repr(v) for v in (x, x[:2] * 1e-5, loss, w, h, y, y == 1, F.zeros((0, 3)), w.double())]
                        + [str(x[0])])
    return {"losses": np.array(losses), "facts": np.array(facts, dtype=np.float64),
            "printed": np.frombuffer(printed.encode(), dtype=np.uint8).astype(np.float64),
            "weights": np.concatenate([p.detach().numpy().reshape(-1) for p in model.parameters()]).astype(np.float64),
            "leaf_grad": leaf.grad.numpy().astype(np.float64)}


PROBES = {f"Tensor.{attr}": tensor_object_probe for attr in BASE_METHODS}
