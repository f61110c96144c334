"""`tc.autocast`: run matmul/linear/conv in float16 or bfloat16 and precision-sensitive ops in float32,
like `torch.autocast`.

Inside an enabled region, every op first looks itself up in the op lists below (by the name of its
`Op` class, for the tensors' device type):

* lower precision (`LOWER_PRECISION_OPS`): floating inputs other than float64 are cast to the autocast dtype
  (float16 on cuda, bfloat16 on cpu by default). These are the big matrix products where tensor cores and
  half the memory traffic pay off.
* float32 (`FLOAT32_OPS`): float16/bfloat16 inputs are cast up to float32 — losses, and on cuda also
  softmax, log_softmax, sums, exp/log/pow and layer norm, whose results lose too much in 16 bits.
* every other op runs in whatever dtype its inputs have (an add of a bfloat16 and a float32 tensor
  promotes to float32 as usual).

The casts are ordinary differentiable `.to(dtype)` ops (`ToCopyBackward0` in the graph), so gradients
flow back to float32 master weights in float32. The lists mirror PyTorch's at the scale of this framework;
composite functions that PyTorch runs in float32 (e.g. `mse_loss`) call `float32_inputs` themselves.
"""
from __future__ import annotations

import functools
import warnings

from .. import cuda
from .. import dtypes as _dt
from ..autograd.autocast_state import autocast_state

LOWER_PRECISION_OPS = frozenset({"Mm", "Mv", "Dot", "Bmm", "Matmul", "Addmm", "Conv2d"})

FLOAT32_OPS = {
    "cpu": frozenset({"CrossEntropy", "CrossEntropyTargets", "NllLoss"}),
    "cuda": frozenset({"CrossEntropy", "NllLoss", "Softmax", "LogSoftmax", "Sum", "SumAll", "Prod", "ProdAll",
                       "Cumsum", "Exp", "Log", "Log1p", "Pow", "Rsqrt", "Normalize"}),
}

_DEFAULT_DTYPE = {"cpu": "bfloat16", "cuda": "float16"}
_LOWER = {_dt.float16, _dt.bfloat16}
_CASTABLE = {_dt.float16, _dt.bfloat16, _dt.float32}


@functools.lru_cache(maxsize=None)
def _policy_by_name(name, device_type):
    """'lower', 'float32' or None for an op (by its class name) on a device type."""
    if name in LOWER_PRECISION_OPS:
        return "lower"
    if name in FLOAT32_OPS[device_type]:
        return "float32"
    return None


def _first_device_type(args):
    for a in args:
        dev = getattr(a, "_device", None)
        if dev is not None:
            return dev.type
    return None


def _cast_inputs(op_cls, args):
    return _cast_for(op_cls.__name__, args)


autocast_state.cast_inputs = _cast_inputs


def autocast_args(op_name, *tensors):
    """`tensors` cast as op `op_name` (an `Op` class name, e.g. "Conv2d") would cast them under autocast.

    For functions that check dtypes before they reach the op (PyTorch casts at dispatch, before any
    check): `x, weight, bias = autocast_args("Conv2d", x, weight, bias)`.
    """
    if not autocast_state.active:
        return tensors
    return _cast_for(op_name, tensors)


def _cast_for(op_name, args):
    device_type = _first_device_type(args)
    if device_type is None or not autocast_state.enabled[device_type]:
        return args
    policy = _policy_by_name(op_name, device_type)
    if policy is None:
        return args
    if policy == "lower":
        target = autocast_state.dtype[device_type]
        return tuple(a.to(target) if getattr(a, "dtype", None) in _CASTABLE and a._device.type == device_type
                     else a for a in args)
    return tuple(a.to(_dt.float32) if getattr(a, "dtype", None) in _LOWER and a._device.type == device_type
                 else a for a in args)


def float32_inputs(*tensors):
    """The tensors cast to float32 when autocast is on for their device (for composite float32 ops)."""
    if not autocast_state.active:
        return tensors
    return tuple(t.to(_dt.float32) if getattr(t, "dtype", None) in _LOWER
                 and autocast_state.enabled[t._device.type] else t for t in tensors)


def _device_type(device_type):
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if device_type not in ("cpu", "cuda"):
        raise RuntimeError(
            f"User specified an unsupported autocast device_type '{device_type}'. "
            "Hint: use 'cuda' or 'cpu' (the device's type, e.g. tensor.device.type)."
        )
    return device_type


def get_autocast_dtype(device_type: str):
    """The dtype autocast uses for lower-precision ops on `device_type` (like `torch.get_autocast_dtype`)."""
    device_type = _device_type(device_type)
    return autocast_state.dtype.get(device_type) or getattr(_dt, _DEFAULT_DTYPE[device_type])


def set_autocast_dtype(device_type: str, dtype) -> None:
    """Set the lower-precision dtype for `device_type` (like `torch.set_autocast_dtype`)."""
    autocast_state.dtype[_device_type(device_type)] = dtype


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether autocast is on for `device_type` (default "cuda", like `torch.is_autocast_enabled()`)."""
    return autocast_state.enabled[_device_type(device_type)]


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast supports `device_type` ("cpu" and "cuda" here)."""
    return device_type in ("cpu", "cuda")


class autocast:
    """Context manager (and decorator) for mixed precision, like `torch.autocast`.

        with tc.autocast("cuda"):            # float16 matmuls/convs, float32 losses
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()         # backward outside the region, as in PyTorch

    `dtype` defaults to float16 on "cuda" and bfloat16 on "cpu". Regions nest; the inner one wins and the
    outer one's settings come back when it exits.
    """

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled=None):
        self.device = _device_type(device_type)
        self.fast_dtype = get_autocast_dtype(self.device) if dtype is None else _dt.to_dtype(dtype)
        self._enabled = bool(enabled)
        self._cache_enabled = cache_enabled
        allowed = {"cpu": (_dt.bfloat16, _dt.float16), "cuda": (_dt.float16, _dt.bfloat16)}[self.device]
        if self._enabled and self.fast_dtype not in allowed:
            name = "CPU" if self.device == "cpu" else "CUDA"
            warnings.warn(
                f"In {name} autocast, but the target dtype is not supported. Disabling autocast.\n"
                f"{name} Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.",
                stacklevel=2,
            )
            self._enabled = False
        if self._enabled and self.device == "cuda":
            if not cuda.is_available():
                warnings.warn("CUDA is not available. Disabling autocast.", stacklevel=2)
                self._enabled = False
        if self._enabled and self.device == "cuda" and self.fast_dtype is _dt.bfloat16:
            raise RuntimeError(
                "Current CUDA Device does not support bfloat16 here: CuPy has no bfloat16 arrays. "
                "Hint: use tc.autocast('cuda', dtype=tc.float16)."
            )

    def __enter__(self):
        d = self.device
        self._prev = (autocast_state.enabled[d], autocast_state.dtype.get(d), autocast_state.active)
        autocast_state.enabled[d] = self._enabled
        autocast_state.dtype[d] = self.fast_dtype
        autocast_state.active = any(autocast_state.enabled.values())
        return self

    def __exit__(self, exc_type, exc, tb):
        d = self.device
        enabled, dtype, _ = self._prev
        autocast_state.enabled[d] = enabled
        if dtype is None:
            autocast_state.dtype.pop(d, None)
        else:
            autocast_state.dtype[d] = dtype
        autocast_state.active = any(autocast_state.enabled.values())
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.__class__(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return func(*args, **kwargs)

        return wrapper
