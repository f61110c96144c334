"""Checking a learner's optimizer one update at a time (exercises 04b.1 and 04b.3).

The learner's optimizer and the framework's run side by side on twin models; after every step the check
compares the parameters, so the first wrong update is the one reported. The detectors here recompute that
one update from the parameters and gradients the learner's step saw and the reference state before it, with
one typical mistake each (sign, bias correction, momentum formula, a gradient left from the previous step),
and name the mistake when the learner's parameters match it.
"""
from __future__ import annotations

import numpy as np

import tinygrad_course as tc

from .. import mistakes
from .ch03 import digits


def flat_params(model) -> np.ndarray:
    """Every parameter of `model`, flattened into one float64 vector (a copy)."""
    return np.concatenate([p.detach().numpy().astype(np.float64).ravel() for p in model.parameters()])


def flat_grads(model) -> np.ndarray:
    """Every parameter's .grad flattened into one vector (zeros where .grad is None)."""
    return np.concatenate([(p.grad.numpy() if p.grad is not None else np.zeros(p.shape)).astype(np.float64).ravel()
                           for p in model.parameters()])


def locate(model):
    """A last detector: names the parameter and element of the largest difference in a flat parameter vector."""
    names = [(name, tuple(p.shape), p.numel()) for name, p in model.named_parameters()]

    def detect(got, expected):
        if got.shape != expected.shape or not np.isfinite(got).all():
            return None
        flat = int(np.argmax(np.abs(got - expected)))
        for name, shape, size in names:
            if flat < size:
                index = tuple(int(i) for i in np.unravel_index(flat, shape))
                return f"not a typical mistake; the largest difference is in parameter {name} at {list(index)}"
            flat -= size
        return None
    return detect


def backward_on_batch(model, k: int) -> None:
    """Forward and backward of the cross-entropy on the k-th fixed batch of 64 digits (k = 0, 1, ...)."""
    X, y = digits(0, 256)
    rows = slice((k % 4) * 64, (k % 4 + 1) * 64)
    tc.nn.functional.cross_entropy(model(X[rows]), y[rows]).backward()


def reference_run(model, make_optimizer, steps=6) -> tuple[list, list]:
    """(gradients before each step, parameters after each step) of the framework's optimizer on `model`."""
    opt = make_optimizer(model.parameters())
    grads, params = [], []
    for k in range(steps):
        opt.zero_grad()
        backward_on_batch(model, k)
        grads.append(flat_grads(model))
        opt.step()
        params.append(flat_params(model))
    return grads, params


def sgd_velocities(grads, momentum) -> list:
    """The momentum buffer before each step (None before the first)."""
    found, velocity = [], None
    for grad in grads:
        found.append(velocity)
        velocity = grad if velocity is None else momentum * velocity + grad
    return found


def _same(a, b) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-4, atol=1e-6))


def stale_gradient(previous) -> list:
    """The gradient before a step still holds the previous step's gradient (zero_grad did not clear it)."""
    return [mistakes.custom(
        lambda g, e: previous is not None and _same(g, e + previous),
        "the previous step's gradient was still in .grad: after your zero_grad() and a new backward pass the "
        "gradients are the sum of two steps",
        "zero_grad must clear every parameter's gradient (p.grad = None)")]


def _moved(before, what_moved: str, fix: str):
    return mistakes.custom(lambda g, e: np.allclose(g, before, rtol=0, atol=1e-9), what_moved, fix)


def _flipped(before):
    return mistakes.custom(lambda g, e: not np.allclose(e, before, rtol=0, atol=1e-9) and _same(g - before, before - e),
                           "your step moved every parameter the opposite way (uphill): the update was added, not "
                           "subtracted", "a descent step subtracts: p -= lr * (the update)")


def sgd_mistakes(k, before, grad, velocity, lr, momentum, model) -> list:
    """Detectors for step `k` (1-based) of SGD with momentum; `velocity` is the reference buffer before it."""
    found = [_moved(before, f"step {k} did not change the parameters",
                    "update each parameter in place under tc.no_grad() (p -= ..., not p = p - ...), keep "
                    "list(params) (a generator is empty the second time), and add this step's gradient to the "
                    "velocity before using it"),
             _flipped(before)]
    if k == 1:
        found.append(mistakes.custom(lambda g, e: _same(g - before, (1 - momentum) * (e - before)),
                                     f"your first step is (1 - momentum) = {1 - momentum:g} times PyTorch's: the "
                                     "gradient was scaled by (1 - momentum) (an average, not PyTorch's momentum)",
                                     "PyTorch's momentum adds the raw gradient: v = momentum * v + grad"))
    else:
        found += [
            mistakes.custom(lambda g, e: _same(g, before - lr * grad),
                            f"step {k} moved the parameters by lr * grad alone: the velocity of the earlier steps "
                            "was not used (that is plain SGD)",
                            "keep one velocity buffer per parameter across steps: v = momentum * v + grad; p -= lr * v"),
            mistakes.custom(lambda g, e: _same(g, before - lr * velocity),
                            f"step {k} used the velocity from before this step's gradient was added",
                            "first v = momentum * v + grad, then p -= lr * v"),
            mistakes.custom(lambda g, e: _same(g, before - lr * ((1 - momentum) * grad + momentum * velocity)),
                            "the gradient was scaled by (1 - momentum): that is dampening, which PyTorch's default "
                            "momentum does not do", "v = momentum * v + grad")]
    return found + [locate(model)]


class AdamState:
    """The reference Adam moments before a step, in float64, to recompute one update with a mistake."""

    def __init__(self, m, v, t, betas=(0.9, 0.999), eps=1e-8):
        self.m, self.v, self.t = m, v, t
        self.b1, self.b2, self.eps = betas[0], betas[1], eps

    @classmethod
    def before_each_step(cls, grads, betas=(0.9, 0.999), eps=1e-8) -> list:
        """The reference moments before each step of a run with these gradients."""
        b1, b2 = betas
        states, m, v = [], np.zeros_like(grads[0]), np.zeros_like(grads[0])
        for t, grad in enumerate(grads):
            states.append(cls(m, v, t, betas, eps))
            m, v = b1 * m + (1 - b1) * grad, b2 * v + (1 - b2) * grad * grad
        return states

    def update(self, grad, t=None, correct_m=True, correct_v=True, eps_inside=False, fresh=False):
        """The step from the current moments and `grad` with the given (possibly wrong) choices."""
        t = self.t + 1 if t is None else t
        m0, v0 = (0.0, 0.0) if fresh else (self.m, self.v)
        m = self.b1 * m0 + (1 - self.b1) * grad
        v = self.b2 * v0 + (1 - self.b2) * grad * grad
        m_hat = m / (1 - self.b1 ** t) if correct_m else m
        v_hat = v / (1 - self.b2 ** t) if correct_v else v
        return m_hat / (np.sqrt(v_hat + self.eps) if eps_inside else np.sqrt(v_hat) + self.eps)


def adam_mistakes(k, before, grad, state: AdamState, lr, model) -> list:
    """Detectors for step `k` (1-based) of Adam; `state` holds the reference moments before the step."""
    def variant(**choices):
        return lambda g, e: _same(g, before - lr * state.update(grad, **choices))

    found = [
        _moved(before, f"step {k} did not change the parameters",
               "update each parameter in place under tc.no_grad() (p -= ..., not p = p - ...) and keep list(params)"),
        _flipped(before),
        mistakes.custom(lambda g, e: not np.isfinite(g).all() and np.array_equal(~np.isfinite(g), grad < 0),
                        "NaN exactly where the gradient is negative: the second moment averaged grad, not grad**2, "
                        "and a square root of a negative number is NaN", "v = beta2 * v + (1 - beta2) * grad * grad"),
        mistakes.custom(lambda g, e: k == 1 and not np.isfinite(g).any(),
                        "every parameter became NaN or inf at the first step: the bias correction divided by "
                        "1 - beta**0 = 0 (the step counter was still 0)",
                        "increment the step counter before the update, so t counts steps from 1"),
        mistakes.custom(variant(correct_m=False, correct_v=False),
                        f"step {k} has no bias correction: the moments were used as they are",
                        "divide m by (1 - beta1**t) and v by (1 - beta2**t), with t counting steps from 1"),
        mistakes.custom(variant(correct_m=False),
                        f"step {k} corrects the bias of v but not of m", "m_hat = m / (1 - beta1**t)"),
        mistakes.custom(variant(correct_v=False),
                        f"step {k} corrects the bias of m but not of v", "v_hat = v / (1 - beta2**t)"),
        mistakes.custom(variant(eps_inside=True),
                        "eps was added inside the square root", "the denominator is sqrt(v_hat) + eps"),
    ]
    if k > 1:
        found += [
            mistakes.custom(variant(t=1), f"step {k} used the bias correction of step 1: the step counter t did "
                                          "not advance", "increment t once per step() call (not per parameter)"),
            mistakes.custom(variant(fresh=True), f"step {k} started m and v from zero again: the moments of the "
                                                 "earlier steps were not kept", "keep m and v per parameter across steps"),
        ]
    return found + [locate(model)]
