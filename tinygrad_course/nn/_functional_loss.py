"""More losses for `tc.nn.functional`: smooth_l1_loss, huber_loss, kl_div, margin and embedding losses,
poisson/gaussian NLL, ..."""
from __future__ import annotations

__all__: list[str] = []
