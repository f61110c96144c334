"""Creating tensors: `tensor`, `from_numpy`, `zeros`, `ones`, `arange`, `rand`, ... and seeding.

Random numbers come from a NumPy `Generator` (PCG64); `manual_seed` makes them reproducible.
The values differ from PyTorch's (different generator), the distributions and APIs do not.
"""
from __future__ import annotations

import numbers

import numpy as np

from . import dtypes as _dt
from ._backend import CPU, array_module, canonical_device, check_dtype_on_device, device_of_array, requested_device
from .tensor import Tensor, _wrap


# ---- random number generation ------------------------------------------------------------------------

class Generator:
    """A random number generator with its own state, like `torch.Generator`.

    A CPU generator draws with NumPy; `Generator(device="cuda")` draws on the GPU with its own CuPy
    random state. Tensors on the GPU use the CUDA default generator (CuPy's global random state, seeded by
    `tc.manual_seed` and `tc.cuda.manual_seed`), so as in PyTorch the GPU's numbers differ from the CPU's."""

    def __init__(self, device="cpu"):
        self.device = canonical_device(device) if str(device) != "cpu" else CPU
        self.manual_seed(67280421310721)

    def manual_seed(self, seed: int):
        """Reset the state from `seed`; returns the generator."""
        self._seed = int(seed)
        if self.device.type == "cpu":
            self._rng = np.random.default_rng(self._seed)
        else:
            self._rng = _CudaSampler(array_module(self.device).random.RandomState(self._seed % (2 ** 32)))
        return self

    def seed(self) -> int:
        """Re-seed from a non-deterministic source; returns the new seed."""
        s = int(np.random.SeedSequence().entropy % (2 ** 63))
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        """The generator state (restore it with `set_state`)."""
        if self.device.type != "cpu":
            raise RuntimeError("get_state of a cuda Generator is not supported here; re-seed it with manual_seed")
        return self._rng.bit_generator.state

    def set_state(self, state):
        if self.device.type != "cpu":
            raise RuntimeError("set_state of a cuda Generator is not supported here; re-seed it with manual_seed")
        self._rng.bit_generator.state = state
        return self

    # sampling helpers used by the factories and in-place initialisers (arrays on the generator's device)
    def uniform(self, a, b, shape):
        return self._rng.uniform(a, b, shape)

    def normal(self, mean, std, shape):
        return self._rng.normal(mean, std, shape)

    def random(self, shape):
        return self._rng.random(shape)

    def exponential(self, scale, shape):
        return self._rng.exponential(scale, shape)

    def integers(self, low, high, shape):
        return self._rng.integers(low, high, shape)

    def permutation(self, n):
        return self._rng.permutation(n)


class _CudaSampler:
    """NumPy-Generator-style draws from a CuPy RandomState (`None`: CuPy's global one), on the GPU."""

    def __init__(self, state=None):
        self._state = state

    def _rs(self):
        if self._state is not None:
            return self._state
        from ._backend import cupy_module

        return cupy_module().random.get_random_state()

    def uniform(self, a, b, shape):
        return self._rs().uniform(a, b, shape)

    def normal(self, mean, std, shape):
        return self._rs().normal(mean, std, shape)

    def random(self, shape):
        return self._rs().random_sample(shape)

    def exponential(self, scale, shape):
        return self._rs().exponential(scale, shape)

    def integers(self, low, high, shape):
        return self._rs().randint(low, high, shape)

    def permutation(self, n):
        return self._rs().permutation(n)


default_generator = Generator()
_cuda_default = _CudaSampler()


def _generator(g=None) -> Generator:
    return default_generator if g is None else g


def sampler(generator, device):
    """What draws random numbers for a tensor on `device`: `generator` (which must live on that device type,
    as PyTorch requires), else the device's default generator."""
    if generator is None:
        return default_generator if device.type == "cpu" else _cuda_default
    if generator.device.type != device.type:
        raise RuntimeError(f"Expected a '{device.type}' device type for generator but found '{generator.device.type}'")
    return generator


def manual_seed(seed: int) -> Generator:
    """Seed the default generator (and CuPy's when a GPU is present), like `torch.manual_seed`."""
    default_generator.manual_seed(seed)
    from ._backend import cupy_module

    cp = cupy_module()
    if cp is not None:
        cp.random.seed(int(seed) % (2 ** 32))
    return default_generator


def seed() -> int:
    """Seed the default generator non-deterministically; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state):
    default_generator.set_state(state)


# ---- from data ---------------------------------------------------------------------------------------

def _infer_dtype(data):
    """PyTorch's dtype for nested Python data: bool, int64, or the default float (also for empty lists)."""
    kind = None
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, Tensor):
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
    if isinstance(data, Tensor):
        return data.detach().cpu()._data
    if isinstance(data, (list, tuple)):
        return [_to_plain(x) for x in data]
    return data


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of `data` (nested lists, numbers, NumPy arrays or tensors).

    dtype is inferred like PyTorch: bools -> bool, ints -> int64, floats -> float32; NumPy arrays
    keep their dtype.
    """
    dev = requested_device(device)
    if isinstance(data, Tensor):
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
    from ._backend import to_device_array

    return to_device_array(arr, dev) if dev is not CPU or not isinstance(arr, np.ndarray) else arr


def as_tensor(data, dtype=None, device=None):
    """Like `tensor`, but reuses `data`'s memory when dtype and device already match."""
    if isinstance(data, Tensor):
        return data.to(dtype=dtype, device=device) if (dtype or device) else data
    if (isinstance(data, np.ndarray) and (dtype is None or _dt.to_dtype(dtype).np_dtype == data.dtype)
            and requested_device(device) in (None, CPU)):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing memory with a NumPy array: changes to one show in the other."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    _dt.from_numpy_dtype(array.dtype)
    return _wrap(array)


# ---- filled with constants ---------------------------------------------------------------------------

def _shape(size, check=True):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    shape = tuple(int(s) for s in size)
    if check and any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: [{', '.join(map(str, shape))}]")
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


def zeros(*size, dtype=None, device=None, requires_grad=False, out=None):
    """A tensor of zeros of the given shape."""
    dt, dev, xp = _creation(dtype, device)
    shape = _shape(size, check=False)
    if any(s < 0 for s in shape):
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    return _finish(xp.zeros(shape, dtype=dt.np_dtype), requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    """A tensor of ones of the given shape."""
    dt, dev, xp = _creation(dtype, device)
    return _finish(xp.ones(_shape(size), dtype=dt.np_dtype), requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False):
    """An uninitialised tensor of the given shape (here: zero-filled, so results are reproducible)."""
    dt, dev, xp = _creation(dtype, device)
    return _finish(xp.zeros(_shape(size), dtype=dt.np_dtype), requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    """A tensor of the given shape filled with `fill_value` (dtype inferred from the value)."""
    if dtype is None:
        dtype = _dt.scalar_dtype(fill_value)
    dt, dev, xp = _creation(dtype, device)
    return _finish(xp.full(_shape((size,)) if not isinstance(size, int) else (size,), fill_value, dtype=dt.np_dtype), requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    """The identity matrix (n x m)."""
    dt, dev, xp = _creation(dtype, device)
    return _finish(xp.eye(n, m if m is not None else n, dtype=dt.np_dtype), requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """Values start, start+step, ... < end; int64 unless an argument is a float."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if dtype is None:
        dtype = _dt.int64 if all(isinstance(v, (int, np.integer)) for v in (start, end, step)) else _dt.get_default_dtype()
    dt, dev, xp = _creation(dtype, device)
    n = int(np.ceil((end - start) / step))
    arr = (start + np.arange(n, dtype=np.float64) * step) if dt.category == 2 else np.arange(start, end, step)
    return _finish(_place(arr.astype(dt.np_dtype), dev), requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    """`steps` evenly spaced values from start to end inclusive."""
    dt, dev, xp = _creation(dtype, device)
    return _finish(_place(np.linspace(start, end, steps).astype(dt.np_dtype), dev), requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """`steps` values from base**start to base**end, evenly spaced in the exponent."""
    dt, dev, xp = _creation(dtype, device)
    return _finish(_place(np.logspace(start, end, steps, base=base).astype(dt.np_dtype), dev), requires_grad)


# ---- random ------------------------------------------------------------------------------------------

def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Uniform samples from [0, 1)."""
    dt, dev, xp = _creation(dtype, device)
    arr = sampler(generator, dev).random(_shape(size)).astype(dt.np_dtype)
    return _finish(_place(arr, dev), requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Standard normal samples."""
    dt, dev, xp = _creation(dtype, device)
    arr = sampler(generator, dev).normal(0.0, 1.0, _shape(size)).astype(dt.np_dtype)
    return _finish(_place(arr, dev), requires_grad)


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """Integers uniformly from [low, high) (int64 by default): `randint(high, size)` or `randint(low, high, size)`."""
    if size is None:
        low, high, size = 0, low, high
    if high is None:
        raise TypeError("randint() missing required argument 'size'")
    dt, dev, xp = _creation(dtype or _dt.int64, device)
    arr = sampler(generator, dev).integers(low, high, _shape((size,)) if not isinstance(size, int) else (size,))
    return _finish(_place(arr.astype(dt.np_dtype), dev), requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    """A random permutation of 0..n-1 (int64)."""
    dt, dev, xp = _creation(dtype or _dt.int64, device)
    return _finish(_place(sampler(generator, dev).permutation(n).astype(dt.np_dtype), dev), requires_grad)


def normal(mean, std, size=None, *, generator=None, dtype=None, device=None):
    """Normal samples with the given mean and std (numbers with `size`, or tensors)."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        m = mean if isinstance(mean, Tensor) else None
        s = std if isinstance(std, Tensor) else None
        shape = np.broadcast_shapes(*(t.shape for t in (m, s) if t is not None))
        ref = m if m is not None else s
        z = randn(*shape, generator=generator, dtype=ref.dtype, device=ref.device)
        return z * std + mean
    return randn(*_shape((size,)) if not isinstance(size, int) else (size,), generator=generator, dtype=dtype,
                 device=device) * std + mean


def bernoulli(input, p=None, *, generator=None):
    """0/1 samples, 1 with the probability given by each element of `input`."""
    probs = input.detach()._data if p is None else p
    r = sampler(generator, input._device).random(input._data.shape)
    return _wrap((r < probs).astype(input.dtype.np_dtype))


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Indices sampled from the (unnormalised) probabilities in each row of `input` (1-d or 2-d), drawn
    where `input` lives; PyTorch's errors for bad distributions."""
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    n = input.shape[-1]
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    xp, rows = input._xp, input.detach()._data.astype(np.float64).reshape(-1, n)
    if not bool((xp.isfinite(rows) & (rows >= 0)).all()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    totals = rows.sum(axis=1, keepdims=True)
    if bool((totals <= 0).any()):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    draw = sampler(generator, input._device)
    if input._device.type == "cpu" and (replacement or int((rows > 0).sum(axis=1).min()) >= num_samples):
        out = np.stack([draw._rng.choice(n, num_samples, replace=replacement, p=r / r.sum()) for r in rows])
    elif replacement:  # inverse CDF: the first category whose cumulative probability exceeds a uniform draw
        cdf = xp.cumsum(rows / totals, axis=1)
        u = draw.random((rows.shape[0], num_samples))
        out = xp.minimum((u[:, :, None] >= cdf[:, None, :]).sum(axis=2), n - 1)
    else:  # Gumbel top-k; categories of probability 0 come last, as in PyTorch
        with np.errstate(divide="ignore"):
            keys = xp.log(rows) - xp.log(-xp.log(draw.random(rows.shape)))
        out = xp.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    out = out.reshape(tuple(input.shape[:-1]) + (num_samples,)).astype(np.int64)
    return _wrap(_place(out, input._device))


# ---- *_like ------------------------------------------------------------------------------------------

def _like(fn, t, dtype, device, requires_grad, **kw):
    return fn(*t.shape, dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad, **kw)


def zeros_like(input, *, dtype=None, device=None, requires_grad=False):
    return _like(zeros, input, dtype, device, requires_grad)


def ones_like(input, *, dtype=None, device=None, requires_grad=False):
    return _like(ones, input, dtype, device, requires_grad)


def empty_like(input, *, dtype=None, device=None, requires_grad=False):
    return _like(empty, input, dtype, device, requires_grad)


def rand_like(input, *, dtype=None, device=None, requires_grad=False):
    return _like(rand, input, dtype, device, requires_grad)


def randn_like(input, *, dtype=None, device=None, requires_grad=False):
    return _like(randn, input, dtype, device, requires_grad)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False):
    return full(tuple(input.shape), fill_value, dtype=dtype or input.dtype, device=device or input.device,
                requires_grad=requires_grad)


def randint_like(input, low, high=None, *, dtype=None, device=None):
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype, device=device or input.device)


# ---- joining (module-level functions) ----------------------------------------------------------------

def cat(tensors, dim=0, *, out=None):
    """Concatenate tensors along an existing dimension."""
    from .ops.concat import Cat

    return Cat.apply(*tensors, dim=dim)


concat = concatenate = cat


def stack(tensors, dim=0, *, out=None):
    """Stack equally shaped tensors along a new dimension."""
    from .ops.concat import Stack

    return Stack.apply(*tensors, dim=dim)


def where(condition, input=None, other=None):
    """Elements of `input` where `condition` is True, else of `other` (broadcasting)."""
    from .ops.comparison import Where
    from .tensor_methods import _operand

    if input is None and other is None:
        return tuple(_wrap(a) for a in condition._xp.nonzero(condition._data))
    return Where.apply(condition, _operand(input), _operand(other))
