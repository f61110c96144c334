"""`ASGD`: averaged stochastic gradient descent (like `torch.optim.ASGD`)."""
from __future__ import annotations

import numpy as np

from ..tensor_base import _wrap
from .optimizer import Optimizer, advance_step, bump_version, check_float, new_step_count, params_with_grads


class ASGD(Optimizer):
    """Averaged SGD, as in PyTorch: p *= 1 - lambd*eta;  p -= eta * g;  ax += mu * (p - ax) (ax = p while mu is 1);
    then eta = lr / (1 + lambd*lr*t)^alpha and mu = 1 / max(1, t - t0).

    State: step, eta, mu (0-d float32 on the CPU, so reading them never waits for the GPU; PyTorch keeps these
    three on the parameter's device) and ax, the running average of the parameter.
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        check_float("learning rate", lr)
        check_float("weight_decay value", weight_decay)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update_group(self, group):
        lr, lambd, alpha, t0 = float(group["lr"]), group["lambd"], group["alpha"], group["t0"]
        weight_decay = group["weight_decay"]
        for p, xp, w, g in params_with_grads(group):
            state = self.state[p]
            if not state:
                state["step"] = new_step_count()
                state["eta"] = _wrap(np.array(lr, dtype=np.float32))
                state["mu"] = _wrap(np.ones((), dtype=np.float32))
                state["ax"] = self._state_zeros(p)
            step = advance_step(state)
            if weight_decay != 0:
                g = g + weight_decay * w
            eta = float(state["eta"]._data)
            mu_arr = state["mu"]._data
            tmp = self._scratch_buffer(xp, w)
            w *= 1 - lambd * eta
            xp.multiply(g, -eta, out=tmp)
            w += tmp
            ax = state["ax"]._data
            if float(mu_arr) != 1:
                xp.subtract(w, ax, out=tmp)
                tmp *= float(mu_arr)
                ax += tmp
            else:
                xp.copyto(ax, w)
            state["eta"]._data[...] = lr / ((1 + lambd * lr * step) ** alpha)
            mu_arr[...] = 1 / max(1, step - t0)
            bump_version(p)
