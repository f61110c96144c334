"""`Adadelta`: step sizes from running averages of squared gradients and squared updates
(like `torch.optim.Adadelta`)."""
from __future__ import annotations

from ._array_math import addcmul_
from .optimizer import Optimizer, advance_step, bump_version, check_float, new_step_count, params_with_grads


class Adadelta(Optimizer):
    """Adadelta, as in PyTorch: sq = rho*sq + (1-rho)*g^2;  delta = sqrt(acc + eps) / sqrt(sq + eps) * g;
    acc = rho*acc + (1-rho)*delta^2;  p -= lr * delta.
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        check_float("learning rate", lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_float("epsilon value", eps)
        check_float("weight_decay value", weight_decay)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, capturable=capturable,
                        foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update_group(self, group):
        lr, rho, eps, weight_decay = float(group["lr"]), group["rho"], group["eps"], group["weight_decay"]
        for p, xp, w, g in params_with_grads(group):
            state = self.state[p]
            if not state:
                state["step"] = new_step_count()
                state["square_avg"] = self._state_zeros(p)
                state["acc_delta"] = self._state_zeros(p)
            advance_step(state)
            if weight_decay != 0:
                g = g + weight_decay * w
            square_avg, acc_delta = state["square_avg"]._data, state["acc_delta"]._data
            tmp = self._scratch_buffer(xp, w)
            square_avg *= rho
            addcmul_(xp, square_avg, g, g, 1 - rho, tmp)
            std = xp.add(square_avg, eps)
            xp.sqrt(std, out=std)
            delta = xp.add(acc_delta, eps)
            xp.sqrt(delta, out=delta)
            delta /= std
            delta *= g
            acc_delta *= rho
            addcmul_(xp, acc_delta, delta, delta, 1 - rho, tmp)
            xp.multiply(delta, -lr, out=tmp)
            w += tmp
            bump_version(p)
