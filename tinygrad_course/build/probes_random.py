"""The probe of chapter 04's random draws (exercise 04.10): what the framework draws through `tc.Generator`'s
`uniform`, `normal` and `permutation` -- `tc.rand`/`randn`/`randperm` on the default and a seeded generator,
`uniform_`/`normal_`, a layer's initial weights, `nn.init`, a shuffling DataLoader's batches, the scalar path
with its cached value, and a float16 draw (the reference's) between them -- as plain numbers."""
from __future__ import annotations

import numpy as np

from .. import factories as F
from .. import nn
from ..dtypes import float16, float64
from ..generator import Generator, manual_seed
from ..nn import init
from ..utils.data.dataloader import DataLoader


def _np(t):
    return np.asarray(t.detach().numpy(), dtype=np.float64).reshape(-1)


def random_draws_probe():
    """The framework's random draws in one fixed sequence (see the module docstring)."""
    manual_seed(20)
    out = {"rand": _np(F.rand(5, 3)), "rand64": _np(F.rand(7, dtype=float64)), "randn": _np(F.randn(40)),
           "randn_small": np.concatenate([_np(F.randn(3)), _np(F.randn(1)), _np(F.randn(2))]),
           "randn64": _np(F.randn(3, 7, dtype=float64)), "half": _np(F.rand(4, dtype=float16)),
           "randperm": _np(F.randperm(25))}
    layer = nn.Linear(6, 4)
    w = F.empty(8, 5)
    out.update(weight=_np(layer.weight), bias=_np(layer.bias), uniform=_np(init.uniform_(w, -0.5, 2.0)),
               normal=_np(init.normal_(w, 1.0, 3.0)), inplace=_np(F.empty(17).uniform_(-1.0, 1.0)),
               columns=_np(F.empty(4, 6).t().normal_(0.5, 2.0)))
    g = Generator().manual_seed(21)
    loader = DataLoader(list(range(13)), batch_size=5, shuffle=True, generator=g)
    out["batches"] = np.array([i for _ in range(2) for batch in loader for i in batch.tolist()], np.float64)
    out["seeded"] = np.concatenate([_np(F.randperm(9, generator=g)), _np(F.rand(3, generator=g)),
                                    _np(F.randn(18, generator=g))])
    return out


PROBES = {f"Generator.{attr}": random_draws_probe for attr in ("uniform", "normal", "permutation")}
