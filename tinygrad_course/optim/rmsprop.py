"""`RMSprop`: divide the gradient by a running root-mean-square (like `torch.optim.RMSprop`)."""
from __future__ import annotations

from .adam import _lerp_
from .optimizer import Optimizer, advance_step, bump_version, check_float, new_step_count, params_with_grads


class RMSprop(Optimizer):
    """RMSprop, as in PyTorch: sq = alpha*sq + (1-alpha)*g*g;  p -= lr * g / (sqrt(sq) + eps).

    `centered` subtracts the squared running mean of g inside the root; `momentum` keeps a buffer
    buf = momentum*buf + g/(sqrt(...) + eps) and steps by lr*buf.
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_float("learning rate", lr)
        check_float("epsilon value", eps)
        check_float("momentum value", momentum)
        check_float("weight_decay value", weight_decay)
        check_float("alpha value", alpha)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update_group(self, group):
        lr, alpha, eps = float(group["lr"]), group["alpha"], group["eps"]
        weight_decay, momentum, centered = group["weight_decay"], group["momentum"], group["centered"]
        for p, xp, w, g in params_with_grads(group):
            state = self.state[p]
            if not state:
                state["step"] = new_step_count()
                state["square_avg"] = self._state_zeros(p)
                if momentum > 0:
                    state["momentum_buffer"] = self._state_zeros(p)
                if centered:
                    state["grad_avg"] = self._state_zeros(p)
            advance_step(state)
            if weight_decay != 0:
                g = g + weight_decay * w
            sq = state["square_avg"]._data
            tmp = self._scratch_buffer(xp, w)
            xp.multiply(g, g, out=tmp)
            tmp *= 1 - alpha
            sq *= alpha
            sq += tmp
            if centered:
                mean = state["grad_avg"]._data
                _lerp_(xp, mean, g, 1 - alpha, tmp)
                xp.multiply(mean, mean, out=tmp)
                xp.subtract(sq, tmp, out=tmp)
                xp.sqrt(tmp, out=tmp)
            else:
                xp.sqrt(sq, out=tmp)
            tmp += eps
            if momentum > 0:
                buf = state["momentum_buffer"]._data
                buf *= momentum
                xp.divide(g, tmp, out=tmp)
                buf += tmp
                xp.multiply(buf, -lr, out=tmp)
            else:
                xp.divide(g, tmp, out=tmp)
                tmp *= -lr
            w += tmp
            bump_version(p)
