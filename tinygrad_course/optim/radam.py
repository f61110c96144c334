"""`RAdam`: Adam with a rectified (variance-corrected) adaptive step (like `torch.optim.RAdam`)."""
from __future__ import annotations

from ._array_math import addcmul_
from .adam import _lerp_, _weight_decay
from .optimizer import Optimizer, advance_step, bump_version, check_betas, check_float, new_step_count, \
    params_with_grads


class RAdam(Optimizer):
    """RAdam, as in PyTorch (Liu et al. 2019): plain momentum SGD on the bias-corrected m while the variance
    estimate is unreliable (rho_t <= 5), Adam's step times the rectification factor r_t afterwards.

    `decoupled_weight_decay=True` multiplies p by 1 - lr*weight_decay instead of adding the decay to g.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        check_float("learning rate", lr)
        check_float("epsilon value", eps)
        check_betas(betas)
        check_float("weight_decay value", weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _update_group(self, group):
        lr, (beta1, beta2), eps = float(group["lr"]), group["betas"], group["eps"]
        weight_decay, decoupled = group["weight_decay"], group["decoupled_weight_decay"]
        rho_inf = 2 / (1 - beta2) - 1
        for p, xp, w, g in params_with_grads(group):
            state = self.state[p]
            if not state:
                state["step"] = new_step_count()
                state["exp_avg"] = self._state_zeros(p)
                state["exp_avg_sq"] = self._state_zeros(p)
            step = advance_step(state)
            g = _weight_decay(w, g, lr, weight_decay, decoupled)
            m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
            tmp = self._scratch_buffer(xp, w)
            _lerp_(xp, m, g, 1 - beta1, tmp)
            v *= beta2
            addcmul_(xp, v, g, g, 1 - beta2, tmp)
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            update = xp.divide(m, bias_correction1)
            update *= lr
            rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
            if rho_t > 5.0:
                # adaptive lr = sqrt(bc2) / (sqrt(v) + eps), computed as PyTorch does (reciprocal, then scale)
                xp.sqrt(v, out=tmp)
                tmp += eps
                xp.reciprocal(tmp, out=tmp)
                tmp *= bias_correction2 ** 0.5
                update *= tmp
                update *= ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            w -= update
            bump_version(p)
