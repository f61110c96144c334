"""`Adamax`: Adam with an infinity-norm second moment (like `torch.optim.Adamax`)."""
from __future__ import annotations

from ._array_math import addcdiv_
from .adam import _lerp_
from .optimizer import Optimizer, advance_step, bump_version, check_betas, check_float, new_step_count, \
    params_with_grads


class Adamax(Optimizer):
    """Adamax, as in PyTorch: m = beta1*m + (1-beta1)*g;  u = max(beta2*u, |g| + eps);
    p -= lr / (1-beta1^t) * m / u.
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        check_float("learning rate", lr)
        check_float("epsilon value", eps)
        check_betas(betas)
        check_float("weight_decay value", weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update_group(self, group):
        lr, (beta1, beta2), eps = float(group["lr"]), group["betas"], group["eps"]
        weight_decay = group["weight_decay"]
        for p, xp, w, g in params_with_grads(group):
            state = self.state[p]
            if not state:
                state["step"] = new_step_count()
                state["exp_avg"] = self._state_zeros(p)
                state["exp_inf"] = self._state_zeros(p)
            step = advance_step(state)
            if weight_decay != 0:
                g = g + weight_decay * w
            m, u = state["exp_avg"]._data, state["exp_inf"]._data
            tmp = self._scratch_buffer(xp, w)
            _lerp_(xp, m, g, 1 - beta1, tmp)
            u *= beta2
            xp.abs(g, out=tmp)
            tmp += eps
            xp.maximum(u, tmp, out=u)
            clr = lr / (1 - beta1 ** step)
            addcdiv_(xp, w, m, u, -clr, tmp)
            bump_version(p)
