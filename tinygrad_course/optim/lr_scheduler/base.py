"""The base class of every learning-rate scheduler, mirroring `torch.optim.lr_scheduler.LRScheduler`.

A scheduler changes `group["lr"]` of its optimizer's param groups each time `scheduler.step()` is called
(usually once per epoch, after `optimizer.step()`); `get_last_lr()` returns the current values. The base's
`__init__`, `step`, `get_last_lr`, `state_dict` and `load_state_dict` are chapter 04b's component `LRScheduler`
(`seams.member`): a learner's base class, once it passes its check, runs them on every scheduler's own object.
"""
from __future__ import annotations

import sys
import types
import warnings

from ...seams import member
from ..optimizer import Optimizer

_EPOCH_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where possible. "
    "Please use `scheduler.step()` to step the scheduler."
)
_SEE = "See more details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"
_OVERRIDDEN = ("Seems like `optimizer.step()` has been overridden after learning rate scheduler initialization. "
               "Please, make sure to call `optimizer.step()` before `lr_scheduler.step()`. " + _SEE)
_BEFORE_OPTIMIZER = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, you should call "
    "them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will result "
    "in PyTorch skipping the first value of the learning rate schedule. " + _SEE
)


def warn_if_stepped_before_optimizer(scheduler) -> None:
    """PyTorch's check at the first `scheduler.step()` after the scheduler was made (`_step_count == 1`): a
    UserWarning when the optimizer has not stepped yet (the schedule's first rate would be skipped), or when its
    `step` was replaced after the scheduler was made. The framework runs it before every scheduler's `step`,
    also when a learner's `LRScheduler.step` is installed (build mode), so it is not part of that component."""
    if getattr(scheduler, "_step_count", None) != 1:
        return
    optimizer = scheduler.optimizer
    if not getattr(optimizer.step, "hooked", False):  # every Optimizer subclass's step is wrapped (optimizer.py)
        message = _OVERRIDDEN
    elif not getattr(optimizer, "_opt_called", False):
        message = _BEFORE_OPTIMIZER
    else:
        return
    frame, level = sys._getframe(0), 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith("tinygrad_course"):
        frame, level = frame.f_back, level + 1  # point at the caller's line, past the seam's wrappers
    warnings.warn(message, UserWarning, stacklevel=level)


class LRScheduler:
    """Base class: remembers the optimizer's initial lrs (`base_lrs`) and applies `get_lr()` on each step."""

    _is_initial = False

    @member("LRScheduler")
    def __init__(self, optimizer, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming scheduler with "
                        "last_epoch >= 0. Hint: load the optimizer's state_dict before creating the scheduler."
                    )
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self):
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    @member("LRScheduler")
    def state_dict(self) -> dict:
        """Everything in the scheduler except the optimizer (restore it with `load_state_dict`)."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    @member("LRScheduler")
    def load_state_dict(self, state_dict: dict):
        """Restore a state saved by `state_dict()`."""
        self.__dict__.update(state_dict)

    @member("LRScheduler")
    def get_last_lr(self) -> list:
        """The learning rates the scheduler set last, one per param group."""
        return self._last_lr

    def get_lr(self) -> list:
        """The lrs for the current `last_epoch`, one per param group (each scheduler defines it)."""
        raise NotImplementedError

    @member("LRScheduler")
    def step(self, epoch=None):
        """Advance the schedule by one step (or jump to `epoch`, deprecated) and write the new lrs."""
        warn_if_stepped_before_optimizer(self)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(_EPOCH_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            values = self._get_closed_form_lr() if hasattr(self, "_get_closed_form_lr") else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _current_lrs(self):
        return [group["lr"] for group in self.optimizer.param_groups]


class _LRScheduler(LRScheduler):
    """The old name of `LRScheduler`, kept (like PyTorch) for code that subclasses it."""


def _saved_callables(fns):
    """What `state_dict` keeps of user functions: nothing for plain functions, the `__dict__` of callable
    objects (PyTorch's rule, so lambdas never end up in a checkpoint)."""
    return [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy() for fn in fns]
