"""The registration part of chapter 03b's Module probe (exercise 03b.2): `register_parameter` and `register_module`
(`add_module`) on the framework's own modules, what each stores and PyTorch's error for each bad name or value."""
from __future__ import annotations

import numpy as np

from .. import factories as F
from .. import nn
from .probe_codes import codes, error


def registrations(net):
    """register_parameter and register_module (add_module) on a framework module: what each stores, and
    PyTorch's error for each bad name or value (a value of the wrong type by the error's type alone: the
    reference's message names the tensor's type as `tensor.type()` does and adds a hint)."""
    layer = nn.Linear(2, 2)
    layer.register_parameter("gain", nn.Parameter(F.ones(2)))
    layer.register_parameter("shift", None)
    layer.add_module("inner", nn.Tanh())
    layer.register_module("outer", None)
    odd = nn.Parameter(F.ones(2))
    odd.grad_fn = (F.ones(2, requires_grad=True) * 2).grad_fn  # a parameter that is not a leaf
    stored = [list(layer._parameters), list(layer._modules), [str(layer.shift), str(layer.outer)],
              [type(m).__name__ for m in net.children()]]  # nn.Sequential registers its modules by add_module
    errors = [error(lambda: layer.register_parameter("a.b", nn.Parameter(F.ones(1)))),
              error(lambda: layer.register_parameter("", nn.Parameter(F.ones(1)))),
              error(lambda: layer.register_parameter("in_features", nn.Parameter(F.ones(1)))),
              error(lambda: layer.register_parameter("w", F.ones(2)), message=False),
              error(lambda: layer.register_parameter("w", odd)),
              error(lambda: layer.register_parameter(3, None)),
              error(lambda: nn.Module.__new__(nn.Module).register_parameter("w", None)),
              error(lambda: layer.add_module("x", 3)), error(lambda: layer.add_module("forward", nn.Tanh())),
              error(lambda: layer.register_module("a.b", nn.Tanh())), error(lambda: layer.add_module("", nn.Tanh()))]
    return np.concatenate([codes([" ".join(names) for names in stored], 160), *errors])
