"""`NAdam`: Adam with Nesterov momentum and a momentum-decay schedule (like `torch.optim.NAdam`)."""
from __future__ import annotations

import numpy as np

from ..tensor_base import _wrap
from ._array_math import addcdiv_, addcmul_
from .adam import _lerp_, _weight_decay
from .optimizer import Optimizer, advance_step, bump_version, check_betas, check_float, new_step_count, \
    params_with_grads


class NAdam(Optimizer):
    """NAdam, as in PyTorch (Dozat 2016), with the momentum schedule mu_t = beta1 * (1 - 0.5 * 0.96^(t*psi)).

    Per step t: m and v as in Adam; denom = sqrt(v / (1-beta2^t)) + eps;
    p -= lr * (1-mu_t) / (1-prod mu) * g / denom + lr * mu_{t+1} / (1-prod mu * mu_{t+1}) * m / denom.
    `decoupled_weight_decay=True` multiplies p by 1 - lr*weight_decay instead of adding the decay to g (NAdamW).
    State: step, mu_product (both 0-d float32 on the CPU), exp_avg and exp_avg_sq.
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        check_float("learning rate", lr)
        check_float("epsilon value", eps)
        check_betas(betas)
        check_float("weight_decay value", weight_decay)
        check_float("momentum_decay value", momentum_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update_group(self, group):
        lr, (beta1, beta2), eps = float(group["lr"]), group["betas"], group["eps"]
        weight_decay, momentum_decay = group["weight_decay"], group["momentum_decay"]
        decoupled = group["decoupled_weight_decay"]
        for p, xp, w, g in params_with_grads(group):
            state = self.state[p]
            if not state:
                state["step"] = new_step_count()
                state["mu_product"] = _wrap(np.ones((), dtype=np.float32))
                state["exp_avg"] = self._state_zeros(p)
                state["exp_avg_sq"] = self._state_zeros(p)
            step = advance_step(state)
            bias_correction2 = 1 - beta2 ** step
            g = _weight_decay(w, g, lr, weight_decay, decoupled)
            mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
            mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
            mu_product_arr = state["mu_product"]._data  # host float32, like PyTorch's (rounded the same way)
            mu_product_arr *= mu
            mu_product = float(mu_product_arr)
            m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
            denom = self._scratch_buffer(xp, w)
            _lerp_(xp, m, g, 1 - beta1, denom)
            v *= beta2
            update = xp.empty_like(w)
            addcmul_(xp, v, g, g, 1 - beta2, update)
            xp.divide(v, bias_correction2, out=denom)
            xp.sqrt(denom, out=denom)
            denom += eps
            addcdiv_(xp, w, g, denom, -lr * (1.0 - mu) / (1.0 - mu_product), update)
            addcdiv_(xp, w, m, denom, (-lr * mu_next) / (1.0 - mu_product * mu_next), update)
            bump_version(p)

