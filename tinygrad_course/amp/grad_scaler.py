"""`tc.amp.GradScaler`: loss scaling for float16 training, with the numerics of `torch.amp.GradScaler`.

Small float16 gradients underflow to zero. Multiplying the loss by a large factor S (2**16 at first)
scales every gradient by S too, lifting them into float16's range. Before the optimizer step the
gradients are divided by S again (`unscale_`); if any of them is inf or NaN the scale was too large,
the step is skipped and S is halved (`backoff_factor`). After `growth_interval` clean steps in a row
S doubles (`growth_factor`), so it settles just below the overflow point.

    scaler = tc.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with tc.autocast("cuda"):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)      # unscale_ + inf/NaN check + optimizer.step() (skipped on overflow)
        scaler.update()             # backoff or growth of the scale
"""
from __future__ import annotations

import warnings
from collections import abc, defaultdict
from enum import Enum

import numpy as np

from ..autograd.grad_mode import no_grad
from ..cuda import is_available as _cuda_is_available
from ..dtypes import float16, float32, int32
from ..factories import full
from ..seams import component
from ..tensor import Tensor


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


@component("update_scale")
def update_scale(scale, tracker, found_inf, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
    """GradScaler's rule, as (new scale, new growth tracker): back off after a step with inf/NaN gradients,
    grow after `growth_interval` clean steps in a row (in float32, a scale that would overflow stays)."""
    if found_inf:
        return np.float32(np.float32(scale) * np.float32(backoff_factor)), 0
    if tracker + 1 == growth_interval:
        grown = np.float32(np.float32(scale) * np.float32(growth_factor))
        return (grown if np.isfinite(grown) else np.float32(scale)), 0
    return np.float32(scale), tracker + 1


class GradScaler:
    """Dynamic loss scaling, like `torch.amp.GradScaler(device, init_scale, growth_factor, backoff_factor,
    growth_interval, enabled)`. With `enabled=False` `step` just calls `optimizer.step()` and the rest are
    no-ops, so one training loop serves both cases."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True):
        self._device = device
        self._enabled = enabled
        if self._device == "cuda" and enabled:
            if not _cuda_is_available():
                warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                              stacklevel=2)
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None  # float32 0-d tensor on the loss's device, created by the first scale()
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None  # int32 0-d tensor: clean steps in a row
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    # ---- scaling ----------------------------------------------------------------------------------
    def _check_scale_growth_tracker(self, funcname):
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev):
        self._scale = full((), self._init_scale, dtype=float32, device=dev)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=int32, device=dev)
        # host copies of both, kept in step with every write: reading them never waits for the GPU
        self._scale_host, self._tracker_host = np.float32(self._init_scale), int(self._init_growth_tracker)

    def scale(self, outputs):
        """`outputs` (a tensor or an iterable of tensors) multiplied by the current scale factor."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device)

        def apply_scale(val):
            if isinstance(val, Tensor):
                if self._scale is None:
                    self._lazy_init_scale_growth_tracker(val.device)
                return val * self._scale.to(device=val.device)
            if isinstance(val, abc.Iterable):
                iterable = map(apply_scale, val)
                return type(val)(iterable) if isinstance(val, (list, tuple)) else iterable
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply_scale(outputs)

    # ---- unscaling and the inf/NaN check -------------------------------------------------------------
    def _unscale_grads_(self, optimizer, inv_scale, allow_fp16):
        """Multiply every grad by `inv_scale` in place; per device, 1.0 if any grad held inf/NaN."""
        found = {}
        for group in optimizer.param_groups:
            for param in group["params"]:
                if param.grad is None:
                    continue
                if not allow_fp16 and param.grad.dtype is float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                g = param.grad._data
                xp = param.grad._xp
                key = param.grad.device
                # one flag per device, combined on the device: a single GPU sync per step, not one per grad
                bad = xp.logical_not(xp.isfinite(g).all())
                found[key] = bad if key not in found else xp.logical_or(found[key], bad)
                # PyTorch multiplies in float32 ("opmath") and rounds back to the grad's dtype
                factor = inv_scale if g.dtype == np.float64 else np.float32(inv_scale)
                xp.copyto(g, (g.astype(np.float32) * factor) if g.dtype != np.float64 else g * factor,
                          casting="unsafe")
                param.grad._version[0] += 1
        return {dev: (1.0 if bool(bad) else 0.0) for dev, bad in found.items()}

    def unscale_(self, optimizer):
        """Divide the optimizer's gradients by the scale in place (call it before clipping gradients)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        elif optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # the reciprocal in float64, then rounded to float32, as PyTorch does
        inv_scale = float(np.float32(1.0 / float(self._scale_host)))
        optimizer_state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, False)
        optimizer_state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """`unscale_(optimizer)` if not done yet, then `optimizer.step()` unless a gradient was inf/NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if optimizer_state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(optimizer_state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not sum(optimizer_state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        optimizer_state["stage"] = OptState.STEPPED
        return retval

    # ---- the scale's schedule -------------------------------------------------------------------------
    def update(self, new_scale=None):
        """Back off the scale after a skipped step, grow it after `growth_interval` clean steps in a row."""
        if not self._enabled:
            return
        _scale, _growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._set_scale(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if new_scale.device.type != self._device or new_scale.numel() != 1 or new_scale.requires_grad:
                    raise AssertionError(reason)
                self._set_scale(float(new_scale.item()))
        else:
            found_infs = [f for state in self._per_optimizer_states.values()
                          for f in state["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            found_inf = sum(found_infs)
            scale, tracker = update_scale(self._scale_host, self._tracker_host, bool(found_inf), self._growth_factor,
                                          self._backoff_factor, self._growth_interval)
            self._set_scale(float(scale))
            self._set_growth_tracker(int(tracker))
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _set_scale(self, value):
        _fill(self._scale, value)
        self._scale_host = np.float32(value)

    def _set_growth_tracker(self, value):
        _fill(self._growth_tracker, value)
        self._tracker_host = int(value)

    def get_scale(self) -> float:
        """The current scale as a Python float (1.0 when disabled)."""
        if self._enabled:
            return self._init_scale if self._scale is None else float(self._scale_host)
        return 1.0

    def get_growth_factor(self) -> float:
        """The factor the scale is multiplied by after `growth_interval` clean steps."""
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        """Set the factor the scale grows by."""
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        """The factor the scale is multiplied by when a step finds inf/NaN gradients."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        """Set the factor the scale backs off by."""
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        """How many clean steps in a row make the scale grow."""
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        """Set how many clean steps in a row make the scale grow."""
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if self._enabled:
            return self._init_growth_tracker if self._growth_tracker is None else self._tracker_host
        return 0

    def is_enabled(self) -> bool:
        """Whether scaling is on (False after `enabled=False`, or for "cuda" without a GPU)."""
        return self._enabled

    # ---- checkpoints -------------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """scale, growth_factor, backoff_factor, growth_interval and _growth_tracker ({} when disabled)."""
        if self._enabled:
            return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                    "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                    "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore what `state_dict` returned (a no-op when disabled)."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._set_scale(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._set_growth_tracker(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the beginning "
                                     "of an iteration, or at the end after scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)


def _fill(tensor, value):
    with no_grad():
        tensor.fill_(value)
