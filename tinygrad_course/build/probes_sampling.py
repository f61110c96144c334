"""The probe of chapter 10's sampling pieces (exercise 10.11): `tc.topk` / `x.topk` (largest and smallest, along
the last and an inner dim, with ties, in float32 and float64) and the gradient of its values, then
`tc.multinomial` as `generate` draws a token -- top-k probabilities of seeded logits, one sample per row from a
seeded generator and from the default one, several without replacement, a 1-D row -- and PyTorch's errors for
bad distributions, as plain numbers."""
from __future__ import annotations

import numpy as np

from .. import factories as F
from ..generator import Generator, manual_seed
from ..nn import functional as NF
from .probe_codes import error


def _np(t):
    return np.asarray(t.detach().numpy(), dtype=np.float64).reshape(-1)


def sampling_probe():
    """The framework's top-k and multinomial draws in one fixed sequence (see the module docstring)."""
    out = {}
    for dtype in (np.float32, np.float64):
        manual_seed(30)
        x = F.randn(3, 6, dtype=dtype, requires_grad=True)
        tied = F.tensor([[1.0, 3.0, 3.0, 0.5, 3.0], [2.0, 2.0, -1.0, 2.0, 0.0]], dtype=dtype)
        values, indices = x.topk(3)
        low = x.topk(2, dim=0, largest=False)
        ((values * F.arange(9.0, dtype=dtype).reshape(3, 3)).sum() + (low.values ** 2).sum()).backward()
        tag = np.dtype(dtype).name
        out.update({f"values_{tag}": _np(values), f"indices_{tag}": _np(indices), f"low_{tag}": _np(low.values),
                    f"low_indices_{tag}": _np(low.indices), f"grad_{tag}": _np(x.grad),
                    f"tied_{tag}": _np(tied.topk(3).indices), f"tied_low_{tag}": _np(tied.topk(2, largest=False).indices)})
    manual_seed(31)
    logits = F.randn(4, 11) * 2
    kth = logits.topk(5, dim=-1).values[:, -1:]
    probs = NF.softmax(logits.masked_fill(logits < kth, float("-inf")), dim=-1)
    g = Generator().manual_seed(32)
    out["draws"] = np.concatenate([_np(F.multinomial(probs, 1, generator=g)) for _ in range(6)])
    out["default"] = _np(probs.multinomial(1))
    out["without"] = _np(F.multinomial(probs, 5, generator=g))
    out["row"] = _np(F.multinomial(F.tensor([0.1, 0.0, 0.6, 0.3], dtype=np.float64), 3, generator=g))
    out["after"] = _np(F.rand(3, generator=g))  # the generator is where the draws left it
    bad = F.tensor([[0.5, -0.1, 0.6]])
    out["errors"] = np.concatenate([
        error(lambda: F.multinomial(F.ones(2, 2, 2), 1)), error(lambda: F.multinomial(F.ones(3), 4)),
        error(lambda: F.multinomial(bad, 1)), error(lambda: F.multinomial(F.tensor([[1.0, float("nan")]]), 1)),
        error(lambda: F.multinomial(F.zeros(2, 3), 1))])
    return out


PROBES = {"Topk": sampling_probe, "multinomial": sampling_probe}
