"""Adapters: from the signature an exercise asks for to the one the framework calls at a seam.

Each adapter takes the learner's object and returns a callable with the reference's signature. Where the
framework offers options the exercise does not cover (weight decay, Nesterov, batched matmul, ...), the
adapter hands those calls back to the reference, so a learner's component is used exactly where it applies.
"""
from __future__ import annotations

import functools
import types

import numpy as np

from .. import nn, optim  # noqa: F401  (defines the components whose references the adapters fall back to)
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..methods.numpy_names import accepting_numpy_names
from ..grading.learner_op import runner
from ..nn.modules.module_state import _IncompatibleKeys
from ..optim.lr_scheduler.base import warn_if_stepped_before_optimizer
from ..optim.lr_scheduler.step_based import LambdaLR
from ..seams import reference
from .._backend import CPU, device
from ..dtypes import dtype
from ..shapes import Size
from ..tensor_base import TensorBase
from ..utils.data import IterableDataset


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


def op(learner_class):
    """A learner's op class (`class Mul(Op)`: forward on arrays, backward with tensor ops) computes the calls
    of the framework's op of the same name that the exercise covers (float tensors; see `grading/learner_op.py`);
    the others stay the reference's."""
    return runner(learner_class)


def own_function(learner_class, attr: str, name: str | None = None):
    """The function `attr` the learner's class (or a base class of theirs, never the framework's) defines, a
    classmethod's or staticmethod's function unwrapped; AttributeError naming `name` (the class) without one."""
    for klass in learner_class.__mro__[:-1]:
        found = None if klass.__module__.startswith("tinygrad_course") else vars(klass).get(attr)
        if found is not None:
            return getattr(found, "__func__", found)
    raise AttributeError(f"your {name or learner_class.__name__} defines no {attr}")


def tensor_method(attr: str):
    """An adapter: the method `attr` of the learner's `TensorOperators` (a property's getter for `T`, `mT`)
    becomes tc.Tensor's own, as it is (same signature; build mode sets it as the class attribute). Sizes given
    as one 1-D tensor (`x.view(sizes_tensor)`), which the exercise does not cover, stay the reference's, and
    `squeeze`/`unsqueeze` accept NumPy's `axis=` as the framework's own methods do."""

    def adapt(learner_class):
        for klass in learner_class.__mro__[:-1]:
            found = None if klass.__module__.startswith("tinygrad_course") else vars(klass).get(attr)
            if found is not None:
                mine = found.fget if isinstance(found, property) else getattr(found, "__func__", found)
                if attr in ("squeeze", "unsqueeze"):  # NumPy's axis= is renamed dim=, as for the reference
                    return accepting_numpy_names(mine, attr)
                return _sizes_routed(mine, attr) if attr in ("view", "reshape", "expand") else mine
        raise AttributeError(f"your {learner_class.__name__} defines no {attr}")

    adapt.__name__ = f"tensor_method_{attr}"
    return adapt


def tensor_inplace_method(attr: str):
    """An adapter: the method `attr` of the learner's `TensorMethods` or `TensorInplace` (chapter 02c.2, 02c.3)
    becomes tc.Tensor's own, as it is. The reductions accept NumPy's `axis=`/`keepdims=` as the framework's own do; an in-place write through a
    view while grad mode is on (the base takes the history, PyTorch's `CopySlices`), which the exercise does not
    cover, stays the reference's `_inplace`, and so does a write into memory that several elements share (an
    expanded tensor: PyTorch's error)."""

    def adapt(learner_class):
        mine = own_function(learner_class, attr)
        if attr in ("sum", "mean", "max", "argmax"):
            return accepting_numpy_names(mine, attr)
        if attr == "_inplace":
            return _views_routed(mine)
        if attr == "_write":
            return _shared_memory_routed(mine)
        if attr == "to":
            return _cpu_routed(mine)
        return mine

    adapt.__name__ = f"tensor_inplace_method_{attr}"
    return adapt


def _views_routed(mine):
    original = reference("Tensor._inplace")

    @functools.wraps(mine)
    def run(self, fn, *args, **kwargs):
        if self._base is not None and is_grad_enabled():
            return original(self, fn, *args, **kwargs)
        return mine(self, fn, *args, **kwargs)

    return run


def _cpu_routed(mine):
    """x.to(...) of a CPU tensor to a dtype and the CPU (named as a string, a device, a tensor on the CPU): the
    learner's; a GPU, or a dtype given another way (a NumPy dtype, a Python type), stays the reference's."""
    original = reference("Tensor.to")

    def on_the_cpu(value):
        if isinstance(value, TensorBase):
            return value._device is CPU
        if isinstance(value, (str, device)):
            return device(value).type == "cpu"
        return value is None or isinstance(value, dtype)

    @functools.wraps(mine)
    def run(self, *args, **kwargs):
        if self._device is CPU and all(map(on_the_cpu, args)) and on_the_cpu(kwargs.get("device")) \
                and on_the_cpu(kwargs.get("dtype")):
            return mine(self, *args, **kwargs)
        return original(self, *args, **kwargs)

    return run


def _shared_memory_routed(mine):
    original = reference("Tensor._write")

    @functools.wraps(mine)
    def run(self, result):
        if not self._data.flags.writeable:
            return original(self, result)
        return mine(self, result)

    return run


def _sizes_routed(mine, attr: str):
    original = reference(f"Tensor.{attr}")

    @functools.wraps(mine)
    def run(self, *sizes):
        if len(sizes) == 1 and isinstance(sizes[0], TensorBase):
            return original(self, *sizes)
        return mine(self, *sizes)

    return run


def as_method_of(learner_class, attr: str, framework_class, also: dict | None = None):
    """The learner's method `attr` run as a method of `framework_class` (`self` is the framework's object):
    inside it the learner's class name and `super()` mean the framework's class, so `isinstance(value,
    Module)` in the learner's `Module` sees every `nn.Module` and `super().__init__()` in their `Linear`
    reaches `nn.Module.__init__`. `also` ({name: framework class}) does the same for other classes of the
    learner's the method names (their `Parameter` in their `Module.__setattr__` means `nn.Parameter`, whose
    objects every layer makes). Nothing else of the method changes."""
    function = own_function(learner_class, attr)
    scope = dict(function.__globals__)
    if scope.get(learner_class.__name__) is learner_class:
        scope[learner_class.__name__] = framework_class
    for name, framework in (also or {}).items():
        theirs = scope.get(name)
        if isinstance(theirs, type) and not theirs.__module__.startswith("tinygrad_course"):
            scope[name] = framework
    closure = function.__closure__
    if closure:
        closure = tuple(types.CellType(framework_class) if name == "__class__" else cell
                        for name, cell in zip(function.__code__.co_freevars, closure))
    method = types.FunctionType(function.__code__, scope, function.__name__, function.__defaults__, closure)
    method.__kwdefaults__ = function.__kwdefaults__
    method.__doc__, method.__qualname__ = function.__doc__, function.__qualname__
    return method


def method(framework_class, attr: str):
    """An adapter: the learner's class's method `attr` becomes `framework_class`'s (same signature)."""

    def adapt(learner_class):
        return as_method_of(learner_class, attr, framework_class)

    adapt.__name__ = f"method_{attr}"
    return adapt


def module_method(attr: str):
    """The learner's `Module` method `attr` as nn.Module's; the options the exercise leaves out (duplicates
    kept with remove_duplicate=False, positional state_dict arguments, load_state_dict's assign, a name that
    is not a string given to register_parameter or register_module) stay the reference's, and
    load_state_dict's (missing, unexpected) pair is returned as PyTorch's named tuple."""
    seam = f"Module.{attr}"

    def adapt(learner_class):
        mine = as_method_of(learner_class, attr, nn.Module, also={"Parameter": nn.Parameter})
        if attr in ("named_parameters", "named_modules"):
            original = reference(seam)

            def run(self, *args, remove_duplicate=True, **kwargs):
                if not remove_duplicate:
                    return original(self, *args, remove_duplicate=False, **kwargs)
                return mine(self, *args, **kwargs)
        elif attr == "state_dict":
            original = reference(seam)

            def run(self, *args, destination=None, prefix="", keep_vars=False):
                if args:  # PyTorch's deprecated positional form
                    return original(self, *args, destination=destination, prefix=prefix, keep_vars=keep_vars)
                return mine(self, destination=destination, prefix=prefix, keep_vars=keep_vars)
        elif attr in ("register_parameter", "register_module"):
            original = reference(seam)

            def run(self, name, value):
                if not isinstance(name, str):  # a name that is not a string: PyTorch's TypeError, the reference's
                    return original(self, name, value)
                return mine(self, name, value)
        elif attr == "load_state_dict":
            original = reference(seam)

            def run(self, state_dict, strict=True, assign=False):
                if assign:
                    return original(self, state_dict, strict, assign)
                missing, unexpected = mine(self, state_dict, strict)
                return _IncompatibleKeys(list(missing), list(unexpected))
        else:
            return mine
        return functools.wraps(mine)(run)

    adapt.__name__ = f"module_{attr.strip('_')}"
    return adapt


def _expect_shape(out, want, of, given, note=""):
    """Refuse (never repair) a learner's result whose shape is not `want`: the error names the shape given
    and the one expected (`of` names the argument `given` is the shape of, e.g. "input")."""
    got = tuple(getattr(out, "shape", ()))
    if got != tuple(want):
        raise RuntimeError(f"returned shape {got} for {of} of shape {tuple(given)}, expected {tuple(want)}{note}")
    return out


def linear_forward(learner_class):
    """nn.Linear.forward runs the learner's Linear.forward on the layer's own weight and bias."""
    forward = as_method_of(learner_class, "forward", nn.Linear)

    @functools.wraps(forward)
    def run(self, input):
        return _expect_shape(forward(self, input), (*tuple(input.shape)[:-1], self.out_features), "input",
                             input.shape)

    return run


def embedding_forward(learner_class):
    """nn.Embedding.forward runs the learner's lookup for integer indices into a layer without `padding_idx`,
    `max_norm`, `scale_grad_by_freq` or `sparse` (those, and PyTorch's error for float indices, stay the
    reference's); a result of another shape than input.shape + (embedding_dim,) is refused."""
    forward = as_method_of(learner_class, "forward", nn.Embedding)
    original = reference("Embedding.forward")

    def run(self, input):
        if (self.padding_idx is not None or self.max_norm is not None or self.scale_grad_by_freq or self.sparse
                or input.dtype.is_floating_point):
            return original(self, input)
        return _expect_shape(forward(self, input), (*input.shape, self.embedding_dim), "input", input.shape,
                             " (input.shape + (embedding_dim,))")

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
        return _expect_shape(out, want, "input", input.shape, ": floor((n + 2p - k) / s) + 1 per side")

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
        return _expect_shape(out, want, "input", input.shape)

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


def own_method(name):
    """The learner's class defines the framework's method `name` itself (same signature, working on the same
    attributes, PyTorch's): its function is installed as it is."""

    def adapt(learner_class):
        return getattr(learner_class, name)

    adapt.__name__ = f"method_{name.strip('_')}"
    return adapt


def own_property(name):
    """The learner's class defines the framework's property `name` itself (PyTorch's, computed from the same
    attributes): its getter is installed as it is."""

    def adapt(learner_class):
        return vars(learner_class)[name].fget

    adapt.__name__ = f"property_{name}"
    return adapt


def random_sampler_iter(learner_class):
    """RandomSampler.__iter__ (every shuffling DataLoader) runs the learner's, for samplers without
    replacement; drawing with replacement stays the reference's."""
    original = reference("RandomSampler.__iter__")
    mine = learner_class.__iter__

    def run(self):
        return original(self) if self.replacement else mine(self)

    return run


def dataloader_init(learner_class):
    """DataLoader(...) runs the learner's __init__(dataset, batch_size, shuffle, sampler, batch_sampler,
    collate_fn, drop_last, generator), which chooses the sampler, the batch sampler and the collate_fn, for a
    map-style dataset loaded in this process (and freezes it, as PyTorch's does); the framework first keeps its
    loading options at their defaults (`_init_loading`). Worker processes, pinned memory and iterable datasets stay the reference's."""
    original = reference("DataLoader.__init__")
    mine = learner_class.__init__

    def run(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
            collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
            multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
            pin_memory_device="", in_order=True):
        plain = (not isinstance(dataset, IterableDataset) and num_workers == 0 and not pin_memory and timeout == 0
                 and worker_init_fn is None and multiprocessing_context is None and prefetch_factor is None
                 and not persistent_workers and not pin_memory_device and in_order)
        if not plain:
            return original(self, dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, collate_fn,
                            pin_memory, drop_last, timeout, worker_init_fn, multiprocessing_context, generator,
                            prefetch_factor=prefetch_factor, persistent_workers=persistent_workers,
                            pin_memory_device=pin_memory_device, in_order=in_order)
        self._init_loading(dataset)
        mine(self, dataset, batch_size, bool(shuffle), sampler, batch_sampler, collate_fn, drop_last, generator)

    return run


def dataloader_iter(learner_class):
    """DataLoader.__iter__ runs the learner's for map-style datasets loaded in this process; worker
    processes and iterable datasets stay the reference's."""
    original = reference("DataLoader.__iter__")
    mine = learner_class.__iter__

    def run(self):
        return original(self) if self.num_workers > 0 or isinstance(self.dataset, IterableDataset) else mine(self)

    return run


def dataloader_len(learner_class):
    """len(DataLoader) runs the learner's for map-style datasets; an iterable dataset's stays the reference's."""
    original = reference("DataLoader.__len__")
    mine = learner_class.__len__

    def run(self):
        return original(self) if isinstance(self.dataset, IterableDataset) else mine(self)

    return run


def log_softmax(learner_function):
    """F.log_softmax(input, dim) runs the learner's LogSoftmax (a tc.autograd.Function) as
    `LogSoftmax.apply(input, dim)`; a `dtype` or an implicit `dim` stays the reference's."""
    original = reference("log_softmax")

    def run(input, dim=None, _stacklevel=3, dtype=None):
        if dim is None or dtype is not None:
            return original(input, dim, _stacklevel, dtype)
        return _expect_shape(learner_function.apply(input, dim), input.shape, "input", input.shape,
                             " (the input's shape)")

    return run


def dropout_forward(learner_class):
    """nn.Dropout.forward runs the learner's Dropout.forward (p and training from the layer); the in-place
    variant stays the reference's."""
    forward = as_method_of(learner_class, "forward", nn.Dropout)
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
    """tc.optim.Adam.step and so AdamW's (PyTorch 2.13's AdamW is Adam with `decoupled_weight_decay=True` and
    no step of its own) run the learner's Adam.step on the framework's optimizer, amsgrad included; maximize
    and capturable groups stay the reference's."""
    step = learner_class.step
    original = reference("Adam.step")

    def run(self, closure=None):
        if any(group.get("maximize") or group.get("capturable") for group in self.param_groups):
            return original(self, closure)
        return step(self, closure)

    return run


def lr_scheduler_base(learner_class):
    """Every scheduler's base methods (`__init__`, `step`, `get_last_lr`, `state_dict`, `load_state_dict`) run
    the learner's `LRScheduler` methods of the same name on the framework's scheduler; `step(epoch)` (deprecated
    in PyTorch) and a schedule resumed from `last_epoch` >= 0 stay the reference's. The learner's `__init__`
    runs in PyTorch's initial mode (`_is_initial`, PyTorch's `_initial_mode`), in which the schedules that
    compute each rate from the previous one (cosine, step, ...) keep the optimizer's rates for step 0.
    PyTorch's warning of a scheduler stepped before its optimizer is the framework's (not the exercise's): it
    runs before the learner's `step`, as before the reference's."""

    def run(method, self, *args, **kwargs):
        if method == "__init__":
            last_epoch = args[1] if len(args) > 1 else kwargs.get("last_epoch", -1)
            if last_epoch != -1:
                return reference("LRScheduler.__init__")(self, *args, **kwargs)
            self._is_initial = True
            try:
                return learner_class.__init__(self, *args, **kwargs)
            finally:
                self._is_initial = False
        if method == "step" and (args[:1] not in ((), (None,)) or kwargs.get("epoch") is not None):
            return reference("LRScheduler.step")(self, *args, **kwargs)
        if method == "step":
            warn_if_stepped_before_optimizer(self)
            return learner_class.step(self)
        return getattr(learner_class, method)(self, *args, **kwargs)

    return run


def lambda_lr_init(learner_class):
    """LambdaLR(optimizer, lr_lambda, last_epoch) runs the learner's LambdaLR.__init__ on the framework's
    scheduler: their `super().__init__(optimizer, last_epoch)` is the scheduler base's (theirs, once installed)."""
    return as_method_of(learner_class, "__init__", LambdaLR)


def clip_grad_norm(learner):
    """nn.utils.clip_grad_norm_ runs the learner's clip_grad_norm_, which has its signature (`foreach`, a
    choice of implementation, is not passed on)."""

    def clip(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
        return learner(parameters, max_norm, norm_type, error_if_nonfinite)

    return clip


def pick(learner):
    """nll_loss's picked scores: the learner's pick(scores, labels), checked to give one value per row."""

    def run(scores, labels):
        return _expect_shape(learner(scores, labels), (scores.shape[0],), "scores", scores.shape,
                             ": one score per row")

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
