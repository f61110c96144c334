"""`SGD`: stochastic gradient descent with momentum, dampening, Nesterov and weight decay (like `torch.optim.SGD`)."""
from __future__ import annotations

from ..seams import component
from .optimizer import Optimizer, bump_version, check_float, params_with_grads


@component("momentum_update")
def momentum_update(p, g, buf, lr, momentum):
    """In place, on arrays: buf = momentum * buf + g, then p -= lr * buf (SGD's heavy-ball step; a zero
    buffer makes the first step buf = g, as in PyTorch)."""
    buf *= momentum
    buf += g
    p -= lr * buf


class SGD(Optimizer):
    """Stochastic gradient descent, optionally with (Nesterov) momentum, as in PyTorch.

    Per step: g = grad (+ weight_decay * p); with momentum, buf = momentum * buf + (1 - dampening) * g
    (the first step sets buf = g) and g = buf, or g + momentum * buf for Nesterov; then p -= lr * g.
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        check_float("learning rate", lr)
        check_float("momentum value", momentum)
        check_float("weight_decay value", weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    @component("SGD.step")
    def step(self, closure=None):
        """Update every parameter once (chapter 04b's component `SGD.step`); `closure` (re-computes and
        returns the loss) is called first if given; returns its loss."""
        return self._step_groups(closure)

    def _update_group(self, group):
        lr, momentum, dampening = float(group["lr"]), group["momentum"], group["dampening"]
        weight_decay, nesterov = group["weight_decay"], group["nesterov"]
        for p, xp, w, g in params_with_grads(group):
            if weight_decay != 0:
                g = g + weight_decay * w
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if dampening == 0 and not nesterov:  # heavy-ball momentum: one in-place update of buf and w
                    if buf is None:
                        buf = state["momentum_buffer"] = self._state_zeros(p)
                    momentum_update(w, g, buf._data, lr, momentum)
                    bump_version(p)
                    continue
                if buf is None:
                    buf = state["momentum_buffer"] = self._state_zeros(p)
                    xp.copyto(buf._data, g)
                else:
                    b = buf._data
                    b *= momentum
                    if dampening == 0:
                        b += g
                    else:
                        b += (1 - dampening) * g
                g = g + momentum * buf._data if nesterov else buf._data
            tmp = self._scratch_buffer(xp, w)
            xp.multiply(g, -lr, out=tmp)
            w += tmp
            bump_version(p)
