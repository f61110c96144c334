"""`Adam` and `AdamW`: adaptive moment estimation (like `torch.optim.Adam` / `torch.optim.AdamW`)."""
from __future__ import annotations

import math

from ..ops import gpu_kernels
from ..seams import component
from .optimizer import (
    Optimizer,
    advance_step,
    bump_version,
    check_betas,
    check_float,
    new_step_count,
    params_with_grads,
)


class Adam(Optimizer):
    """Adam, as in PyTorch (including `amsgrad`, L2 `weight_decay` and `maximize`).

    Per step t: m = beta1*m + (1-beta1)*g;  v = beta2*v + (1-beta2)*g*g;
    p -= lr / (1-beta1^t) * m / (sqrt(v) / sqrt(1-beta2^t) + eps).
    With `decoupled_weight_decay=True` (what `AdamW` uses) the decay is p *= 1 - lr*weight_decay instead of
    being added to the gradient.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        check_float("learning rate", lr)
        check_float("epsilon value", eps)
        check_betas(betas)
        check_float("weight_decay value", weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    @component("Adam.step")
    def step(self, closure=None):
        """Update every parameter once (chapter 04b's component `Adam.step`, which AdamW inherits); `closure`
        (re-computes and returns the loss) is called first if given; returns its loss."""
        return self._step_groups(closure)

    def _update_group(self, group):
        lr, (beta1, beta2), eps = float(group["lr"]), group["betas"], group["eps"]
        weight_decay, amsgrad = group["weight_decay"], group["amsgrad"]
        decoupled = group.get("decoupled_weight_decay", False)
        for p, xp, w, g in params_with_grads(group):
            state = self.state[p]
            if not state:
                state["step"] = new_step_count()
                state["exp_avg"] = self._state_zeros(p)
                state["exp_avg_sq"] = self._state_zeros(p)
                if amsgrad:
                    state["max_exp_avg_sq"] = self._state_zeros(p)
            step = advance_step(state)
            if p._device.type == "cuda" and not amsgrad:  # one fused kernel instead of a dozen array calls
                gpu_kernels.adam_update(w, g, state["exp_avg"]._data, state["exp_avg_sq"]._data, lr=lr, beta1=beta1,
                                        beta2=beta2, eps=eps, weight_decay=weight_decay, decoupled=decoupled, step=step)
                bump_version(p)
                continue
            g = _weight_decay(w, g, lr, weight_decay, decoupled)
            m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
            tmp = self._scratch_buffer(xp, w)
            _lerp_(xp, m, g, 1 - beta1, tmp)
            xp.multiply(g, g, out=tmp)
            tmp *= 1 - beta2
            v *= beta2
            v += tmp
            if amsgrad:
                vmax = state["max_exp_avg_sq"]._data
                xp.maximum(vmax, v, out=vmax)
                v = vmax
            step_size = lr / (1 - beta1 ** step)
            xp.sqrt(v, out=tmp)
            tmp /= math.sqrt(1 - beta2 ** step)
            tmp += eps
            xp.divide(m, tmp, out=tmp)
            tmp *= -step_size
            w += tmp
            bump_version(p)


class AdamW(Adam):
    """Adam with decoupled weight decay (p *= 1 - lr*weight_decay each step), as in PyTorch's `AdamW`."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                         foreach=foreach, maximize=maximize, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)


def _weight_decay(w, g, lr, weight_decay, decoupled):
    """Apply weight decay: decoupled scales the weights w in place by 1 - lr*weight_decay (AdamW), otherwise
    the decay is added to the gradient, which is returned (a new array, the stored grad is left alone)."""
    if weight_decay != 0:
        if decoupled:
            w *= 1 - lr * weight_decay
        else:
            g = g + weight_decay * w
    return g


def _lerp_(xp, start, end, weight, tmp):
    """start += weight * (end - start) in place, rounded the way PyTorch's `lerp_` rounds."""
    xp.subtract(end, start, out=tmp)
    if weight < 0.5:
        tmp *= weight
        start += tmp
    else:
        tmp *= 1 - weight
        xp.subtract(end, tmp, out=start)
