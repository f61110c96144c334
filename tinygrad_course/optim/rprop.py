"""`Rprop`: resilient backpropagation, per-coordinate step sizes driven by gradient signs (like `torch.optim.Rprop`)."""
from __future__ import annotations

from .optimizer import Optimizer, advance_step, bump_version, check_float, new_step_count, params_with_grads


class Rprop(Optimizer):
    """Rprop, as in PyTorch: where g and the previous g agree in sign the step size grows by etas[1], where they
    differ it shrinks by etas[0] (and that coordinate's gradient counts as 0 this step); step sizes are clamped
    to `step_sizes`, and p -= sign(g) * step_size.
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        check_float("learning rate", lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update_group(self, group):
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        for p, xp, w, g in params_with_grads(group):
            state = self.state[p]
            if not state:
                state["step"] = new_step_count()
                state["prev"] = self._state_zeros(p)
                state["step_size"] = self._state_zeros(p)
                state["step_size"]._data[...] = float(group["lr"])
            advance_step(state)
            prev, step_size = state["prev"]._data, state["step_size"]._data
            factor = xp.multiply(g, prev)
            xp.sign(factor, out=factor)
            shrink = factor < 0
            xp.copyto(factor, etaplus, where=factor > 0)
            xp.copyto(factor, etaminus, where=shrink)
            xp.copyto(factor, 1.0, where=factor == 0)
            step_size *= factor
            xp.clip(step_size, step_size_min, step_size_max, out=step_size)
            xp.copyto(prev, g)
            xp.copyto(prev, 0.0, where=shrink)  # the gradient this step, with sign flips zeroed
            xp.sign(prev, out=factor)
            factor *= -1
            factor *= step_size
            w += factor
            bump_version(p)
