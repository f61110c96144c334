"""The probe of chapter 03b's `Parameter` (exercise 03b.1): `nn.Parameter` made and printed inside the framework,
by the layers and directly, compared with the reference's run."""
from __future__ import annotations

import numpy as np

from .. import factories as F
from .. import nn, optim
from ..autograd.grad_mode import no_grad
from ..generator import manual_seed
from ..tensor import Tensor


def _np(t):
    return np.asarray(t.detach().numpy(), dtype=np.float64)


def parameter_probe():
    """nn.Parameter through the framework: a layer's weights, a parameter over a tensor (its storage shared, a
    leaf that requires grad), a frozen one, the empty default, their reprs, and a step that trains one."""
    manual_seed(3)
    layer = nn.Linear(3, 2)
    data = F.ones(2, 2)
    p = nn.Parameter(data)
    frozen = nn.Parameter(F.zeros(3), requires_grad=False)
    empty = nn.Parameter()
    with no_grad():
        data.mul_(3.0)  # the parameter shares data's storage and version counter: it sees the change
    fields = [type(layer.weight) is nn.Parameter, type(p) is nn.Parameter, p.requires_grad, p.is_leaf,
              p._version is data._version, frozen.requires_grad, tuple(empty.shape) == (0,), empty.requires_grad,
              [n for n, _ in layer.named_parameters()] == ["weight", "bias"],
              *(repr(x) == "Parameter containing:\n" + Tensor.__repr__(x) for x in (p, frozen, empty)),
              str(p) == repr(p)]
    (layer(F.ones(4, 3)) * p.sum()).sum().backward()
    optim.SGD([*layer.parameters(), p], lr=0.1).step()
    return {"fields": np.array(fields, dtype=np.float64), "p": _np(p), "weight": _np(layer.weight),
            "grad": _np(p.grad)}


class _Marked(Tensor):
    """A Tensor subclass of the probe's own (not a parameter)."""


def make_subclass_probe():
    """tc.Tensor._make_subclass through the framework: every nn.Parameter (parameter_probe's run), and the subclass
    of a computed tensor and of a view, each a leaf of its own over the same storage."""
    found = parameter_probe()
    x = F.ones(3, requires_grad=True)
    made = Tensor._make_subclass(_Marked, x * 2, True)
    base = F.arange(4.0)
    view = Tensor._make_subclass(_Marked, base[1:])
    (made * 3).sum().backward()
    fields = [type(made) is _Marked, made.is_leaf, made.grad_fn is None, made.requires_grad, x.grad is None,
              type(view) is _Marked, view._base is None, not view.requires_grad, view._version is base._version]
    return {**found, "subclass_fields": np.array(fields, dtype=np.float64), "made_grad": _np(made.grad),
            "view": _np(view)}


PROBES = {"Parameter.__new__": parameter_probe, "Parameter.__repr__": parameter_probe,
          "Tensor._make_subclass": make_subclass_probe}
