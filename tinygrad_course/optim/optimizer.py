"""`Optimizer`: the base class of every optimizer, like `torch.optim.Optimizer`.

An optimizer holds `param_groups` (a list of dicts: the tensors under "params" plus that group's options,
e.g. "lr") and `state` (per-parameter buffers such as Adam's running averages, keyed by the parameter).
Subclasses implement `step(closure=None)` (SGD, Adam, LBFGS) or `_update_group(group)`, which changes the
parameters' arrays in place; the base runs the step hooks around every subclass's `step`, as PyTorch patches
it. The math runs directly on the backend arrays (`p._data`, through `p._xp`), so an update costs a handful
of array calls per parameter and records nothing for autograd.

The base's own methods (`__init__`, `add_param_group`, `zero_grad`, `state_dict`, `load_state_dict`) are
chapter 04b's component `Optimizer` (`seams.member`): a learner's base class, once it passes its check, runs
them on every optimizer's own object. They only read and write `defaults`, `param_groups` and `state`.
"""
from __future__ import annotations

import copy
import functools
import warnings
from collections import defaultdict
from itertools import chain

import numpy as np

from ..autograd.hooks import add_hook
from ..autograd.grad_mode import enable_grad
from ..seams import member
from ..tensor import Tensor
from ..tensor_base import _wrap


class _RequiredParameter:
    """Marks an option that has no default and must be given (PyTorch's `optim.optimizer.required`)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _with_step_hooks(step):
    """`step` with the optimizer's step pre- and post-hooks around it (PyTorch's `profile_hook_step`), and
    the mark a learning-rate scheduler reads to warn when it is stepped before the optimizer."""

    @functools.wraps(step)
    def hooked(self, *args, **kwargs):
        if self._step_pre_hooks:
            for hook in list(self._step_pre_hooks.values()):
                result = hook(self, args, kwargs)
                if result is not None:
                    raise RuntimeError("step pre-hooks may not change the arguments here")
        self._opt_called = True
        out = step(self, *args, **kwargs)
        if self._step_post_hooks:
            for hook in list(self._step_post_hooks.values()):
                hook(self, args, kwargs)
        return out

    hooked.hooked = True
    return hooked


class Optimizer:
    """Base class for optimizers: `param_groups`, `state`, `zero_grad`, `step`, `state_dict`, `load_state_dict`.

    `params` is an iterable of tensors, of `(name, tensor)` pairs, or of dicts (one per parameter group,
    each with a "params" entry and optional per-group options overriding `defaults`).
    """

    _step_pre_hooks = None  # class defaults: a learner's __init__ (build mode) sets only PyTorch's attributes
    _step_post_hooks = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "hooked", False):
            cls.step = _with_step_hooks(step)

    @member("Optimizer")
    def __init__(self, params, defaults: dict):
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, but got "
                f"{params.type()}. Hint: pass model.parameters() or a list of tensors."
            )
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    # ---- parameter groups ----------------------------------------------------------------------------
    @member("Optimizer")
    def add_param_group(self, param_group: dict):
        """Add a group of parameters with its own options (e.g. a smaller lr for a pretrained backbone)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the ordering of tensors in "
                "sets will change between runs. Please use a list instead."
            )
        else:
            params = list(params)
        if params and isinstance(params[0], tuple):
            param_group["param_names"] = [name for name, _ in params]
            params = [p for _, p in params]
        param_group["params"] = params
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(p).__name__}")
            if not p.is_leaf and not p.retains_grad:
                raise ValueError(
                    "can't optimize a non-leaf Tensor. Hint: optimize the leaf tensors you created "
                    "(e.g. model.parameters()), not results computed from them."
                )
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        if len(params) != len({id(p) for p in params}):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, this will cause an error",
                stacklevel=3,
            )
        seen = {id(p) for group in self.param_groups for p in group["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ---- gradients ---------------------------------------------------------------------------------------
    @member("Optimizer")
    def zero_grad(self, set_to_none: bool = True):
        """Reset the gradients of all parameters: to `None` (default) or to zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g._requires_grad = False
                    g._data[...] = 0
                    g._version[0] += 1

    # ---- stepping --------------------------------------------------------------------------------------
    def step(self, closure=None):
        """Update the parameters once; `closure` (re-computes and returns the loss) is called first if given."""
        return self._step_groups(closure)

    step = _with_step_hooks(step)

    def _step_groups(self, closure):
        """The body of every `step` that updates group by group: the closure's loss (computed with gradients
        enabled) first, then `_update_group` for each parameter group; returns the loss."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            self._update_group(group)
        return loss

    def _update_group(self, group):
        raise NotImplementedError

    def register_step_pre_hook(self, hook):
        """Call `hook(optimizer, args, kwargs)` before every `step`; returns a removable handle."""
        return add_hook(self, "_step_pre_hooks", hook)

    def register_step_post_hook(self, hook):
        """Call `hook(optimizer, args, kwargs)` after every `step`; returns a removable handle."""
        return add_hook(self, "_step_post_hooks", hook)

    # ---- helpers for subclasses ---------------------------------------------------------------------
    def _scratch_buffer(self, xp, arr):
        """A reusable temporary array shaped like `arr` (updates run one parameter at a time)."""
        key = (arr.shape, arr.dtype, xp.__name__)
        scratch = self.__dict__.setdefault("_scratch", {})
        buf = scratch.get(key)
        if buf is None:
            buf = scratch[key] = xp.empty_like(arr)
        return buf

    def _state_zeros(self, p):
        """A zero tensor like parameter `p` (same shape, dtype and device)."""
        return _wrap(p._xp.zeros_like(p._data))

    # ---- saving and restoring ----------------------------------------------------------------------
    @member("Optimizer")
    def state_dict(self) -> dict:
        """The optimizer's state in PyTorch's layout: {"state": {index: {...}}, "param_groups": [...]}.

        Parameters are replaced by their position (counting through the groups in order), so the dict can
        be loaded into a new optimizer built over the same parameters. Tensors are returned by reference.
        """
        index_of = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index_of.setdefault(id(p), len(index_of))
            packed["params"] = [index_of[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {(index_of[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    @member("Optimizer")
    def load_state_dict(self, state_dict: dict):
        """Restore the state saved by `state_dict()` (the optimizer must hold the same parameter groups)."""
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(s["params"] for s in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in id_map:
                param = id_map[key]
                state[param] = {k: _cast_state(param, v, k) for k, v in value.items()}
            else:
                state[key] = copy.deepcopy(value)
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            new_groups.append(saved)
        self.state = state
        self.param_groups = new_groups

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.pop("_scratch", None)
        self._step_pre_hooks = None
        self._step_post_hooks = None

    def __repr__(self):
        lines = [self.__class__.__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(group):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        return "\n".join(lines) + "\n)"


# 0-d float32 counters that stay on the CPU, so reading them never waits for the GPU: the step count, NAdam's
# mu_product and ASGD's eta and mu (PyTorch moves the last three to the parameter's device on loading).
HOST_SCALAR_KEYS = frozenset({"step", "mu_product", "eta", "mu"})


def _cast_state(param, value, key):
    """A copy of one saved state entry, moved to the parameter's device and dtype (host counters stay as they are)."""
    if isinstance(value, Tensor):
        if key not in HOST_SCALAR_KEYS and value.is_floating_point() and param.is_floating_point():
            value = value.to(dtype=param.dtype)
        if key not in HOST_SCALAR_KEYS:
            value = value.to(device=param.device)
        return _wrap(value._xp.array(value._data, copy=True))
    if isinstance(value, dict):
        return {k: _cast_state(param, v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(param, v, key) for v in value)
    return copy.deepcopy(value)


def new_step_count():
    """A fresh `state["step"]`: a 0-d float32 tensor on the CPU for every parameter, as in PyTorch (which
    keeps it there unless `capturable`), so reading the count never waits for the GPU."""
    return _wrap(np.zeros((), dtype=np.float32))


def advance_step(state) -> float:
    """Add one to `state["step"]` in place and return the new count."""
    arr = state["step"]._data
    arr += 1
    return float(arr)


def params_with_grads(group):
    """(parameter, its array module, its array, its gradient's array) for each parameter of `group` that has
    a gradient; the gradient is negated when the group maximizes."""
    for p in group["params"]:
        if p.grad is not None:
            g = p.grad._data
            yield p, p._xp, p._data, (-g if group["maximize"] else g)


def bump_version(p):
    """Record an in-place change of `p` (so autograd notices saved tensors that were modified)."""
    p._version[0] += 1


def check_float(name: str, value, low=0.0):
    """Raise PyTorch's ValueError for an option below `low`."""
    if not float(value) >= low:
        raise ValueError(f"Invalid {name}: {value}")


def check_betas(betas):
    """Raise PyTorch's ValueError unless 0 <= beta < 1 for both betas."""
    for i, beta in enumerate(betas[:2]):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
