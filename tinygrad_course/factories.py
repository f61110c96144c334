"""Creating tensors: `tensor`, `from_numpy`, `zeros`, `ones`, `arange`, `rand`, ...

`tensor`, `zeros`, `ones`, `full`, `empty`, `zeros_like`, `ones_like` and `full_like` are build-mode components
(chapter 01's exercise 01.1 writes them): `@seams.component` runs a learner's version in their place when one is
installed, and every tensor the framework makes through them (a layer's weights, an optimizer's state, a
gradient's zeros) is then made by it.

Random values come from `generator.py`: PyTorch's CPU generator (MT19937) and its kernels' arithmetic, so that
after the same `manual_seed` the same calls give PyTorch's numbers.
"""
from __future__ import annotations

import numbers

import numpy as np

from . import dtypes as _dt
from . import seams
from ._backend import (CPU, array_module, canonical_device, check_dtype_on_device, device_of_array, requested_device,
                       to_device_array)
from ._signatures import arange_args, randint_args, size_arg, space_args
from .generator import sampler
from .tensor_base import TensorBase, _wrap


_MISSING = object()  # the default of an argument PyTorch requires, so the error can use PyTorch's words

# ---- from data ---------------------------------------------------------------------------------------

def _infer_dtype(data):
    """PyTorch's dtype for nested Python data: bool, int64, or the default float (also for empty lists)."""
    kind = None
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple, range)):
            stack.extend(x)
        elif isinstance(x, TensorBase):
            kind = x.dtype if kind is None else _dt.promote_types(kind, x.dtype)
        elif isinstance(x, (bool, np.bool_)):
            kind = kind or _dt.bool_
        elif isinstance(x, (numbers.Integral, np.integer)):
            if kind is None or kind.category < 1:
                kind = _dt.int64
        elif isinstance(x, numbers.Real):
            if kind is None or kind.category < 2:
                kind = _dt.get_default_dtype()
        elif isinstance(x, numbers.Complex):
            raise TypeError("complex numbers are not supported")
        else:
            raise TypeError(f"Could not infer dtype of {type(x).__name__}")
    return kind or _dt.get_default_dtype()


def _to_plain(data):
    """Replace tensors nested in lists by their values (so NumPy can build one array)."""
    if isinstance(data, TensorBase):
        return data.detach().cpu()._data
    if isinstance(data, (list, tuple, range)):
        return [_to_plain(x) for x in data]
    return data


@seams.component("tensor")
def tensor(data=_MISSING, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of `data` (nested lists, numbers, NumPy arrays or tensors).

    dtype is inferred like PyTorch: bools -> bool, ints -> int64, floats -> float32; NumPy arrays
    keep their dtype.
    """
    if data is _MISSING:
        raise TypeError('tensor() missing 1 required positional arguments: "data"')
    dev = requested_device(device)
    if isinstance(data, TensorBase):
        arr = data.detach()._data.copy()
        dt = data.dtype
        dev = dev or data._device
    elif isinstance(data, np.ndarray) or hasattr(data, "__cuda_array_interface__"):
        dt = _dt.from_numpy_dtype(data.dtype)
        arr = data.copy()
        dev = dev or device_of_array(arr)
    elif isinstance(data, np.generic):
        dt = _dt.from_numpy_dtype(data.dtype)
        arr = np.asarray(data)
    else:
        dt = _infer_dtype(data)
        try:
            # Python floats are doubles: read them as float64 so that the one rounding is to the final dtype
            # (a float32 detour would lose digits of tc.tensor([0.1], dtype=tc.float64)).
            arr = np.array(_to_plain(data), dtype=np.float64 if dt.is_floating_point else dt.np_dtype)
        except ValueError:
            raise _ragged_error(data) from None
        if arr.dtype == object:
            raise _ragged_error(data)
    if dtype is not None:
        dt = _dt.to_dtype(dtype)
    if arr.dtype != dt.np_dtype:
        arr = arr.astype(dt.np_dtype)
    return _finish(_place(arr, dev or CPU), requires_grad)


def _ragged_error(data):
    """PyTorch's error for nested lists whose lengths disagree: the sizes are taken from the first
    element at each depth, and the first sequence that differs is reported."""
    sizes = []
    x = data
    while isinstance(x, (list, tuple)):
        sizes.append(len(x))
        if not x:
            break
        x = x[0]
    stack = [(data, 0)]
    while stack:
        x, dim = stack.pop()
        if dim < len(sizes):
            if not isinstance(x, (list, tuple)):
                return TypeError(f"not a sequence")
            if len(x) != sizes[dim]:
                return ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(x)})")
            stack.extend((item, dim + 1) for item in reversed(x))
        elif isinstance(x, (list, tuple)):
            return TypeError(f"'{type(x).__name__}' object cannot be interpreted as an integer")
    return ValueError("expected sequence of equal-length lists")


def _place(arr, dev):
    return to_device_array(arr, dev) if dev is not CPU or not isinstance(arr, np.ndarray) else arr


def as_tensor(data, dtype=None, device=None):
    """Like `tensor`, but reuses `data`'s memory when dtype and device already match."""
    if isinstance(data, TensorBase):
        return data.to(dtype=dtype, device=device) if (dtype or device) else data
    if (isinstance(data, np.ndarray) and (dtype is None or _dt.to_dtype(dtype).np_dtype == data.dtype)
            and requested_device(device) in (None, CPU)):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array: np.ndarray) -> TensorBase:
    """A tensor sharing memory with a NumPy array: changes to one show in the other."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    _dt.from_numpy_dtype(array.dtype)
    return _wrap(array)


# ---- filled with constants ---------------------------------------------------------------------------

def _no_more(kw, fname):
    """Reject keyword arguments a factory function does not take, as Python would."""
    if kw:
        raise TypeError(f"{fname}() got an unexpected keyword argument '{next(iter(kw))}'")
    return {}


def _shape(size, check=True):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    shape = tuple(int(s) for s in size)
    negative = [s for s in shape if s < 0] if check else ()
    if negative:  # PyTorch names the first negative size
        raise RuntimeError(f"Trying to create tensor with negative dimension {negative[0]}: [{', '.join(map(str, shape))}]")
    return shape


def _finish(arr, requires_grad):
    t = _wrap(arr)
    if requires_grad:
        if not t.dtype.is_floating_point:
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients. "
                "Hint: create it with a float dtype (e.g. tc.tensor([1., 2.]) or dtype=tc.float32)."
            )
        t.requires_grad_(True)
    return t


def _creation(dtype, device):
    dev = canonical_device(device)
    dt = _dt.to_dtype(dtype) if dtype is not None else _dt.get_default_dtype()
    check_dtype_on_device(dt.np_dtype, dev)
    return dt, dev, array_module(dev)


@seams.component("zeros")
def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False, **kw):
    """A tensor of zeros of the given shape: `zeros(2, 3)`, `zeros((2, 3))` or `zeros(size=(2, 3))`."""
    dt, dev, xp = _creation(dtype, device)
    shape = size_arg("zeros", size, kw.pop("size", None), **_no_more(kw, "zeros"))
    if any(s < 0 for s in shape):
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    return _finish(xp.zeros(shape, dtype=dt.np_dtype), requires_grad)


@seams.component("ones")
def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False, **kw):
    """A tensor of ones of the given shape: `ones(2, 3)`, `ones((2, 3))` or `ones(size=(2, 3))`."""
    dt, dev, xp = _creation(dtype, device)
    shape = _shape(size_arg("ones", size, kw.pop("size", None), **_no_more(kw, "ones")))
    return _finish(xp.ones(shape, dtype=dt.np_dtype), requires_grad)


@seams.component("empty")
def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None, **kw):
    """An uninitialised tensor of the given shape (here: zero-filled, so results are reproducible)."""
    dt, dev, xp = _creation(dtype, device)
    shape = _shape(size_arg("empty", size, kw.pop("size", None), **_no_more(kw, "empty")))
    return _finish(xp.zeros(shape, dtype=dt.np_dtype), requires_grad)


@seams.component("full")
def full(size=None, fill_value=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    """A tensor of shape `size` (a sequence) filled with `fill_value` (dtype inferred from the value)."""
    if size is None:
        raise TypeError('full() missing 2 required positional arguments: "size", "fill_value"')
    if fill_value is None:
        raise TypeError('full() missing 1 required positional arguments: "fill_value"')
    if not isinstance(size, (tuple, list)) and not hasattr(size, "_data"):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not {type(size).__name__}")
    shape = _shape(size_arg("full", (size,)))
    if hasattr(fill_value, "_data"):  # a 0-d tensor is a number to PyTorch (its dtype from the value's kind)
        if fill_value.ndim:
            raise TypeError("full(): argument 'fill_value' (position 2) must be Number, not Tensor")
        fill_value = fill_value.item()
    if dtype is None:
        dtype = _dt.scalar_dtype(fill_value)
    dt, dev, xp = _creation(dtype, device)
    return _finish(xp.full(shape, fill_value, dtype=dt.np_dtype), requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    """The identity matrix (n x m)."""
    dt, dev, xp = _creation(dtype, device)
    return _finish(xp.eye(n, m if m is not None else n, dtype=dt.np_dtype), requires_grad)


@seams.component("arange")
def arange(*args, start=None, end=None, step=None, out=None, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False):
    """Values start, start+step, ... < end; int64 unless an argument is a float: `arange(end)`,
    `arange(start, end)`, `arange(start, end, step)` (positionally or by keyword)."""
    start, end, step = arange_args(args, start, end, step)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if dtype is None:
        dtype = _dt.int64 if all(isinstance(v, (int, np.integer)) for v in (start, end, step)) else _dt.get_default_dtype()
    dt, dev, xp = _creation(dtype, device)
    if dt.category == 2:
        arr = start + np.arange(int(np.ceil((end - start) / step)), dtype=np.float64) * step
    else:
        arr = np.arange(start, end, step)
    return _finish(_place(arr.astype(dt.np_dtype, copy=False), dev), requires_grad)


def linspace(*args, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False, **kwargs):
    """`steps` evenly spaced values from start to end inclusive: `linspace(start, end, steps)`."""
    start, end, steps, _ = space_args("linspace", args, kwargs)
    _no_more(kwargs, "linspace")
    start, end = (v.item() if isinstance(v, TensorBase) else v for v in (start, end))
    dt, dev, xp = _creation(dtype, device)
    return _finish(_place(np.linspace(start, end, steps).astype(dt.np_dtype), dev), requires_grad)


def logspace(*args, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False, **kwargs):
    """`steps` values from base**start to base**end, evenly spaced in the exponent:
    `logspace(start, end, steps, base=10.0)`."""
    start, end, steps, base = space_args("logspace", args, kwargs)
    _no_more(kwargs, "logspace")
    start, end = (v.item() if isinstance(v, TensorBase) else v for v in (start, end))
    dt, dev, xp = _creation(dtype, device)
    return _finish(_place(np.logspace(start, end, steps, base=base).astype(dt.np_dtype), dev), requires_grad)


# ---- random ------------------------------------------------------------------------------------------

def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False, **kw):
    """Uniform samples from [0, 1): `rand(2, 3)`, `rand((2, 3))` or `rand(size=(2, 3))`."""
    shape = _shape(size_arg("rand", size, kw.pop("size", None), invalid_combination_error=True, **_no_more(kw, "rand")))
    dt, dev, xp = _creation(dtype, device)
    arr = sampler(generator, dev).random(shape, dt.np_dtype)
    return _finish(_place(arr, dev), requires_grad)


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, **kw):
    """Standard normal samples: `randn(2, 3)`, `randn((2, 3))` or `randn(size=(2, 3))`."""
    shape = _shape(size_arg("randn", size, kw.pop("size", None), invalid_combination_error=True,
                            **_no_more(kw, "randn")))
    dt, dev, xp = _creation(dtype, device)
    arr = sampler(generator, dev).normal(0.0, 1.0, shape, dt.np_dtype)
    return _finish(_place(arr, dev), requires_grad)


def randint(*args, low=None, high=None, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
            requires_grad=False, pin_memory=False):
    """Integers uniformly from [low, high) (int64 by default): `randint(high, size)`, `randint(low, high, size)`,
    and keyword forms such as `randint(high=5, size=(2,))`."""
    low, high, size = randint_args(args, low, high, size)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    dt, dev, xp = _creation(dtype or _dt.int64, device)
    arr = sampler(generator, dev).integers(low, high, _shape(size))
    return _finish(_place(arr.astype(dt.np_dtype), dev), requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    """A random permutation of 0..n-1 (int64)."""
    dt, dev, xp = _creation(dtype or _dt.int64, device)
    return _finish(_place(sampler(generator, dev).permutation(n).astype(dt.np_dtype), dev), requires_grad)


def normal(mean, std, size=None, *, generator=None, dtype=None, device=None):
    """Normal samples with the given mean and std (numbers with `size`, or tensors)."""
    if isinstance(mean, TensorBase) or isinstance(std, TensorBase):
        m = mean if isinstance(mean, TensorBase) else None
        s = std if isinstance(std, TensorBase) else None
        shape = np.broadcast_shapes(*(t.shape for t in (m, s) if t is not None))
        ref = m if m is not None else s
        z = randn(tuple(shape), generator=generator, dtype=ref.dtype, device=ref.device)
        return z * std + mean
    shape = _shape((size,)) if not isinstance(size, int) else (size,)
    dt, dev, xp = _creation(dtype, device)
    return _wrap(_place(sampler(generator, dev).normal(mean, std, shape, dt.np_dtype), dev))


def bernoulli(input, p=None, *, generator=None):
    """0/1 samples, 1 with the probability given by each element of `input` (or by `p`), drawn as
    PyTorch's CPU kernel draws them: 53-bit uniforms for float64 probabilities, 24-bit ones otherwise."""
    probs = input.detach()._data if p is None else p
    if not isinstance(probs, (int, float)):
        probs = input._xp.broadcast_to(probs, input._data.shape)
    r = sampler(generator, input._device).bernoulli(probs, input._data.shape)
    return _wrap(r.astype(input.dtype.np_dtype))


@seams.component("multinomial")
def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Indices sampled from the (unnormalised) probabilities in each row of `input` (1-d or 2-d), drawn
    where `input` lives and, on the CPU, as PyTorch draws them: without replacement (or one sample) the
    largest `p / q` with `q` exponential samples; with replacement a binary search of each row's
    normalised running sum for 53-bit uniforms. PyTorch's errors for bad distributions."""
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    n = input.shape[-1]
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    xp, data = input._xp, input.detach()._data
    rows = data.reshape(-1, n)
    if not bool((xp.isfinite(rows) & (rows >= 0)).all()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if bool((rows.astype(np.float64).sum(axis=1) <= 0).any()):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    draw = sampler(generator, input._device)
    if not replacement or num_samples == 1:
        q = rows / draw.exponential(1.0, rows.shape, rows.dtype)
        if num_samples == 1:
            out = xp.argmax(q, axis=1)[:, None]
        else:  # the top `num_samples`, largest first; categories of probability 0 come last
            out = xp.argsort(-q, axis=1, kind="stable")[:, :num_samples]
    else:
        cdf = xp.cumsum(rows, axis=1, dtype=rows.dtype)
        cdf = cdf / cdf[:, -1:]
        cdf[:, -1] = 1
        u = draw.random((rows.shape[0], num_samples), np.float64)
        out = xp.stack([xp.searchsorted(c.astype(np.float64), ui, side="left") for c, ui in zip(cdf, u)])
    out = out.reshape(tuple(input.shape[:-1]) + (num_samples,)).astype(np.int64)
    return _wrap(_place(out, input._device))


# ---- *_like ------------------------------------------------------------------------------------------

def _like(fn, t, dtype, device, requires_grad, **kw):
    return fn(tuple(t.shape), dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad, **kw)


@seams.component("zeros_like")
def zeros_like(input, *, dtype=None, device=None, requires_grad=False):
    """A tensor of zeros of `input`'s shape; its dtype and device unless given."""
    return _like(zeros, input, dtype, device, requires_grad)


@seams.component("ones_like")
def ones_like(input, *, dtype=None, device=None, requires_grad=False):
    """A tensor of ones of `input`'s shape; its dtype and device unless given."""
    return _like(ones, input, dtype, device, requires_grad)


def empty_like(input, *, dtype=None, device=None, requires_grad=False):
    """An uninitialised (here: zero-filled) tensor of `input`'s shape, dtype and device."""
    return _like(empty, input, dtype, device, requires_grad)


def rand_like(input, *, dtype=None, device=None, requires_grad=False):
    """A tensor of uniform samples from [0, 1) of `input`'s shape, dtype and device."""
    return _like(rand, input, dtype, device, requires_grad)


def randn_like(input, *, dtype=None, device=None, requires_grad=False):
    """A tensor of standard normal samples of `input`'s shape, dtype and device."""
    return _like(randn, input, dtype, device, requires_grad)


@seams.component("full_like")
def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False):
    """A tensor of `input`'s shape filled with `fill_value`, in `input`'s dtype (a float value is truncated
    for an integer input) and device unless given."""
    return full(tuple(input.shape), fill_value, dtype=dtype or input.dtype, device=device or input.device,
                requires_grad=requires_grad)


def randint_like(input, low, high=None, *, dtype=None, device=None):
    """Integers from [low, high) (or [0, low)) of `input`'s shape, dtype and device."""
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype, device=device or input.device)
