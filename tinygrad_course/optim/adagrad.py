"""`Adagrad`: per-coordinate learning rates from the sum of squared gradients (like `torch.optim.Adagrad`)."""
from __future__ import annotations

from ..tensor_base import _wrap
from .optimizer import Optimizer, advance_step, bump_version, check_float, new_step_count, params_with_grads


class Adagrad(Optimizer):
    """Adagrad, as in PyTorch: sum += g*g;  p -= clr * g / (sqrt(sum) + eps), clr = lr / (1 + (t-1)*lr_decay).

    Like PyTorch, the state (step and sum, filled with `initial_accumulator_value`) exists from construction.
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_float("learning rate", lr)
        check_float("lr_decay value", lr_decay)
        check_float("weight_decay value", weight_decay)
        check_float("initial_accumulator_value value", initial_accumulator_value)
        check_float("epsilon value", eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def add_param_group(self, param_group):
        """Add a group of parameters; like PyTorch, its state (step and sum) exists from then on."""
        super().add_param_group(param_group)
        self._init_group_state(self.param_groups[-1])

    def _init_group_state(self, group):
        for p in group["params"]:
            state = self.state[p]
            state["step"] = new_step_count()
            state["sum"] = _wrap(p._xp.full_like(p._data, group["initial_accumulator_value"]))

    def _update_group(self, group):
        lr, lr_decay, eps, weight_decay = float(group["lr"]), group["lr_decay"], group["eps"], group["weight_decay"]
        for p, xp, w, g in params_with_grads(group):
            state = self.state[p]
            step = advance_step(state)
            if weight_decay != 0:
                g = g + weight_decay * w
            clr = lr / (1 + (step - 1) * lr_decay)
            total = state["sum"]._data
            tmp = self._scratch_buffer(xp, w)
            xp.multiply(g, g, out=tmp)
            total += tmp
            xp.sqrt(total, out=tmp)
            tmp += eps
            xp.divide(g, tmp, out=tmp)
            tmp *= -clr
            w += tmp
            bump_version(p)
