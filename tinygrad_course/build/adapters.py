"""Adapters: from the signature an exercise asks for to the one the framework calls at a seam.

Each adapter takes the learner's object and returns a callable with the reference's signature. Where the
framework offers options the exercise does not cover (weight decay, Nesterov, batched matmul, ...), the
adapter hands those calls back to the reference, so a learner's component is used exactly where it applies.
"""
from __future__ import annotations

import functools

import numpy as np

from .. import nn, optim  # noqa: F401  (defines the components whose references the adapters fall back to)
from ..autograd.grad_mode import no_grad
from ..factories import tensor
from ..seams import reference
from ..shapes import Size


def same(learner):
    """The learner's function already has the framework's signature."""
    return learner


def broadcast_shapes(learner):
    """tc.broadcast_shapes(*shapes) folds the learner's two-shape rule over all shapes."""

    def broadcast(*shapes):
        shape = ()
        for s in shapes:
            s = (s,) if isinstance(s, int) else tuple(s)
            try:
                shape = tuple(learner(shape, s))
            except ValueError as error:
                raise RuntimeError(str(error)) from None
        return Size(shape)

    return broadcast


def _check_shape(g, shape, i):
    """PyTorch's engine error, naming the input, when a learner's backward rule returns a gradient whose
    shape is not its input's (a broadcast gradient not summed back is the learner's to reduce: nothing here
    sums it for them)."""
    got, want = tuple(g.shape), tuple(shape)
    if got != want:
        raise RuntimeError(f"returned a gradient of shape {got} for input {i}, expected {want}")


def mul_backward(learner):
    """MulBackward0: mul_backward(grad, a, b) with Python numbers passed as they were multiplied."""

    def operand(saved, g):
        if hasattr(saved, "_data"):
            return saved
        return tensor(saved, dtype=g.dtype, device=g.device)  # a Python number, given as a 0-d tensor

    def rule(ctx, g):
        a, b = ctx.saved_tensors
        ga, gb = learner(g, operand(a, g), operand(b, g))
        for i, (x, grad) in enumerate(((a, ga), (b, gb))):  # the exercise's contract: each in its input's shape
            if grad is not None and hasattr(x, "_data") and ctx.needs_input_grad[i]:
                _check_shape(grad, x.shape, i)
        return ga, gb

    return rule


def tanh_backward(learner):
    """TanhBackward0: tanh_backward(grad, out) with the saved output."""

    def rule(ctx, g):
        out = ctx.saved_output
        grad = learner(g, out)
        _check_shape(grad, out.shape, 0)
        return grad

    return rule


def mm_backward(learner):
    """MmBackward0 (2-D @ 2-D): matmul_backward(grad, a, b)."""

    def rule(ctx, g):
        a, b = ctx.saved_tensors
        ga, gb = learner(g, a, b)
        need = ctx.needs_input_grad
        for i, (grad, x) in enumerate(((ga, a), (gb, b))):
            if need[i]:
                _check_shape(grad, x.shape, i)
        return (ga if need[0] else None), (gb if need[1] else None)

    return rule


def linear_forward(learner_class):
    """nn.Linear.forward runs the learner's Linear.forward on the layer's own weight and bias."""
    forward = learner_class.forward

    @functools.wraps(forward)
    def run(self, input):
        out = forward(self, input)
        want = (*tuple(input.shape)[:-1], self.out_features)
        if tuple(getattr(out, "shape", ())) != want:
            raise RuntimeError(f"returned shape {tuple(getattr(out, 'shape', ()))} for input of shape "
                               f"{tuple(input.shape)}, expected {want}")
        return out

    return run


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def conv2d_forward(learner_function):
    """nn.Conv2d.forward runs the learner's Conv2dFunction (a tc.autograd.Function: forward and backward) as
    `Conv2dFunction.apply(x, weight, bias, stride, padding)` for square kernels with one stride and one
    zero padding for both sides; dilation, groups and other padding modes stay the reference's."""
    original = reference("Conv2d.forward")

    def run(self, input):
        stride, padding, kernel = _pair(self.stride), self.padding, _pair(self.kernel_size)
        padding = _pair(padding) if not isinstance(padding, str) else padding
        plain = (self.groups == 1 and _pair(self.dilation) == (1, 1) and self.padding_mode == "zeros"
                 and not isinstance(padding, str) and padding[0] == padding[1] and stride[0] == stride[1]
                 and kernel[0] == kernel[1] and input.dim() == 4)
        if not plain:
            return original(self, input)
        out = learner_function.apply(input, self.weight, self.bias, stride[0], padding[0])
        n, _, h, w = input.shape
        want = (n, self.out_channels, (h + 2 * padding[0] - kernel[0]) // stride[0] + 1,
                (w + 2 * padding[1] - kernel[1]) // stride[1] + 1)
        if tuple(getattr(out, "shape", ())) != want:
            raise RuntimeError(f"returned shape {tuple(getattr(out, 'shape', ()))} for input of shape "
                               f"{tuple(input.shape)}, expected {want}: floor((n + 2p - k) / s) + 1 per side")
        return out

    return run


def max_pool2d_forward(learner_function):
    """nn.MaxPool2d.forward runs the learner's MaxPool2dFunction as `MaxPool2dFunction.apply(x, kernel_size,
    stride)` for square windows without padding, dilation, ceil_mode or returned indices."""
    original = reference("MaxPool2d.forward")

    def run(self, input):
        kernel, stride = _pair(self.kernel_size), _pair(self.stride)
        plain = (kernel[0] == kernel[1] and stride[0] == stride[1] and _pair(self.padding) == (0, 0)
                 and _pair(self.dilation) == (1, 1) and not self.ceil_mode and not self.return_indices
                 and input.dim() == 4)
        if not plain:
            return original(self, input)
        out = learner_function.apply(input, kernel[0], stride[0])
        n, c, h, w = input.shape
        want = (n, c, (h - kernel[0]) // stride[0] + 1, (w - kernel[0]) // stride[0] + 1)
        if tuple(getattr(out, "shape", ())) != want:
            raise RuntimeError(f"returned shape {tuple(getattr(out, 'shape', ()))} for input of shape "
                               f"{tuple(input.shape)}, expected {want}")
        return out

    return run


def cosine_get_lr(learner_class):
    """CosineAnnealingLR.get_lr runs the learner's CosineAnnealingLR.get_lr (the closed form) on the
    framework's scheduler (the first call, before any step, stays the reference's: the optimizer's lrs)."""
    get_lr = learner_class.get_lr
    original = reference("CosineAnnealingLR.get_lr")

    def run(self):
        if self._is_initial:
            return original(self)
        return get_lr(self)

    return run


def batch_indices(learner):
    """BatchSampler.__iter__ (every DataLoader with a batch_size) iterates the learner's
    batch_indices(sampler, batch_size, drop_last) generator."""

    def run(self):
        return iter(learner(self.sampler, self.batch_size, self.drop_last))

    return run


def log_softmax(learner_function):
    """F.log_softmax(input, dim) runs the learner's LogSoftmax (a tc.autograd.Function) as
    `LogSoftmax.apply(input, dim)`; a `dtype` or an implicit `dim` stays the reference's."""
    original = reference("log_softmax")

    def run(input, dim=None, _stacklevel=3, dtype=None):
        if dim is None or dtype is not None:
            return original(input, dim, _stacklevel, dtype)
        out = learner_function.apply(input, dim)
        if tuple(getattr(out, "shape", ())) != tuple(input.shape):
            raise RuntimeError(f"returned shape {tuple(getattr(out, 'shape', ()))} for input of shape "
                               f"{tuple(input.shape)}, expected the input's shape")
        return out

    return run


def dropout_forward(learner_class):
    """nn.Dropout.forward runs the learner's Dropout.forward (p and training from the layer); the in-place
    variant stays the reference's."""
    forward = learner_class.forward
    original = reference("Dropout.forward")

    def run(self, input):
        if getattr(self, "inplace", False):
            return original(self, input)
        return forward(self, input)

    return run


def _on_cpu(optimizer) -> bool:
    return all(p.device.type == "cpu" for group in optimizer.param_groups for p in group["params"])


def optimizer_base(learner_class):
    """Every optimizer's base methods (`__init__`, `add_param_group`, `zero_grad`, `state_dict`,
    `load_state_dict`) run the learner's `Optimizer` methods of the same name on the framework's optimizer.
    Named parameters (`(name, tensor)` pairs), a bare tensor or a group that is not a dict (PyTorch's errors)
    and loading a state into parameters on a GPU (moving it between devices) stay the reference's."""

    def run(method, self, *args, **kwargs):
        if method == "__init__":
            params, *rest = args
            if not hasattr(params, "_data"):
                params = list(params)
            named = (hasattr(params, "_data") or any(isinstance(p, tuple) for p in params) or
                     any(isinstance(g, dict) and any(isinstance(p, tuple) for p in _as_list(g.get("params")))
                         for g in params))
            if named:
                return reference("Optimizer.__init__")(self, params, *rest, **kwargs)
            args = (params, *rest)
        elif method == "add_param_group" and (not isinstance(args[0], dict) or
                                              any(isinstance(p, tuple) for p in _as_list(args[0].get("params")))):
            return reference("Optimizer.add_param_group")(self, *args, **kwargs)
        elif method == "load_state_dict" and not _on_cpu(self):
            return reference("Optimizer.load_state_dict")(self, *args, **kwargs)
        return getattr(learner_class, method)(self, *args, **kwargs)

    return run


def _as_list(params):
    if params is None or hasattr(params, "_data"):
        return []
    return params if isinstance(params, (list, tuple)) else []


def sgd_step(learner_class):
    """tc.optim.SGD.step runs the learner's SGD.step on the framework's optimizer (its param_groups and
    state); an optimizer with a `maximize` group stays the reference's."""
    step = learner_class.step
    original = reference("SGD.step")

    def run(self, closure=None):
        if any(group.get("maximize", False) for group in self.param_groups):
            return original(self, closure)
        return step(self, closure)

    return run


def adam_step(learner_class):
    """tc.optim.Adam.step and AdamW.step (AdamW is Adam with decoupled weight decay) run the learner's
    Adam.step on the framework's optimizer; amsgrad, maximize and capturable groups stay the reference's."""
    step = learner_class.step
    original = reference("Adam.step")

    def run(self, closure=None):
        if any(group.get("amsgrad") or group.get("maximize") or group.get("capturable")
               for group in self.param_groups):
            return original(self, closure)
        return step(self, closure)

    return run


def lr_scheduler_base(learner_class):
    """Every scheduler's base methods (`step`, `get_last_lr`, `state_dict`, `load_state_dict`) run the
    learner's `LRScheduler` methods of the same name on the framework's scheduler; `step(epoch)` (deprecated
    in PyTorch) stays the reference's."""

    def run(method, self, *args, **kwargs):
        if method == "step" and (args[:1] not in ((), (None,)) or kwargs.get("epoch") is not None):
            return reference("LRScheduler.step")(self, *args, **kwargs)
        if method == "step":
            return learner_class.step(self)
        return getattr(learner_class, method)(self, *args, **kwargs)

    return run


def clip_grad_norm(learner):
    """nn.utils.clip_grad_norm_ runs the learner's clip_grad_norm_, which has its signature (`foreach`, a
    choice of implementation, is not passed on)."""

    def clip(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
        return learner(parameters, max_norm, norm_type, error_if_nonfinite)

    return clip


def pick(learner):
    """nll_loss's picked scores: the learner's pick(scores, labels), checked to give one value per row."""

    def run(scores, labels):
        picked = learner(scores, labels)
        if tuple(getattr(picked, "shape", ())) != (scores.shape[0],):
            raise RuntimeError(f"returned shape {tuple(getattr(picked, 'shape', ()))} for scores of shape "
                               f"{tuple(scores.shape)}, expected ({scores.shape[0]},): one score per row")
        return picked

    return run


def numerical_grad(learner):
    """gradcheck's numerical Jacobian, one row per output element, each row the learner's
    numerical_grad(f, x, eps) of that element as a function of input `i` alone."""

    def jacobian(func, inputs, i, out_index, eps):
        def element(k):
            def f(x):
                with no_grad():
                    out = func(*inputs[:i], x, *inputs[i + 1:])
                    return (out if isinstance(out, tuple) else (out,))[out_index].reshape(-1)[k]
            return f

        with no_grad():
            first = func(*inputs)
        n_out = (first if isinstance(first, tuple) else (first,))[out_index].numel()
        rows = [np.asarray(learner(element(k), inputs[i], eps).detach().cpu().numpy(), dtype=np.float64).reshape(-1)
                for k in range(n_out)]
        return np.stack(rows) if rows else np.zeros((0, inputs[i].numel()))

    return jacobian


def update_scale(learner):
    """GradScaler.update's rule: the learner's (scale, tracker) kept as GradScaler keeps them (float32, int)."""

    def rule(scale, tracker, found_inf, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        new_scale, new_tracker = learner(float(scale), int(tracker), found_inf, growth_factor, backoff_factor,
                                         growth_interval)
        return np.float32(new_scale), int(new_tracker)

    return rule
