"""Random number generators, like `torch.Generator` and `torch.manual_seed`.

A CPU generator is PyTorch's: the Mersenne Twister of `mt19937.py`, turned into values by the algorithms
of PyTorch's CPU kernels (`TransformationHelper.h`, `DistributionsHelper.h`, `cpu/DistributionTemplates.h`),
so after the same seed the same calls give PyTorch's numbers bit for bit. A GPU generator draws with
CuPy's random state (as in PyTorch, the GPU's numbers differ from the CPU's). `sampler` picks the one that
draws for a tensor's device; every method takes the NumPy dtype of the tensor being filled, because
PyTorch draws 32 random bits for a float32 value and 64 for a float64 one."""
from __future__ import annotations

import math
import os
from fractions import Fraction

import numpy as np

from . import seams
from ._backend import CPU, array_module, canonical_device, cupy_module
from ._random_math import fisher_yates, fma32, fma64, log_f64, standard_normals_f32
from .mt19937 import MT19937
from .tensor_base import TensorBase, _wrap

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_MASK53 = np.uint64((1 << 53) - 1)
# random_() with no bounds: [0, 2^digits] for floats, [0, max] for integers (PyTorch's uniform_int)
_FULL_RANGE = {"float64": 2 ** 53 + 1, "float32": 2 ** 24 + 1, "float16": 2 ** 11 + 1, "bfloat16": 2 ** 8 + 1,
               "int64": 2 ** 63, "int32": 2 ** 31, "int16": 2 ** 15, "int8": 2 ** 7, "uint8": 2 ** 8, "bool": 2}
_MASK24 = np.uint64((1 << 24) - 1)


class Generator:
    """A random number generator with its own state, like `torch.Generator`.

    On the CPU it is PyTorch's MT19937 generator (same seeds, same numbers); `Generator(device="cuda")`
    draws on the GPU with its own CuPy random state. Tensors on the GPU use the CUDA default generator
    (CuPy's global random state, seeded by `tc.manual_seed` and `tc.cuda.manual_seed`)."""

    def __init__(self, device="cpu"):
        self.device = canonical_device(device) if str(device) != "cpu" else CPU
        self._engine = MT19937() if self.device.type == "cpu" else None
        self.manual_seed(67280421310721)

    def manual_seed(self, seed):
        """Reset the state from `seed` (any integer in [-2^63, 2^64)); returns the generator."""
        seed = int(seed)
        if not -0x8000_0000_0000_0000 <= seed <= 0xFFFF_FFFF_FFFF_FFFF:
            raise RuntimeError("Overflow when unpacking long long")
        self._seed = seed & 0xFFFF_FFFF_FFFF_FFFF
        self._next_double = self._next_float = None  # Box-Muller's cached second value
        if self._engine is not None:
            self._engine.seed(self._seed)
        else:
            self._rng = _CudaSampler(array_module(self.device).random.RandomState(self._seed % (2 ** 32)))
        return self

    def seed(self) -> int:
        """Re-seed from a non-deterministic source; returns the new seed."""
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        """The seed this generator was last seeded with."""
        return self._seed

    def get_state(self):
        """The generator's state as a uint8 tensor in PyTorch's layout (restore it with `set_state`)."""
        if self._engine is None:
            raise RuntimeError("get_state of a cuda Generator is not supported here; re-seed it with manual_seed")
        return _wrap(self._engine.to_bytes(self._next_double, self._next_float))

    def set_state(self, new_state):
        """Restore a state from `get_state` (also one saved by PyTorch's `torch.get_rng_state()`)."""
        if self._engine is None:
            raise RuntimeError("set_state of a cuda Generator is not supported here; re-seed it with manual_seed")
        data = new_state._data if isinstance(new_state, TensorBase) else new_state
        data = data.numpy() if hasattr(data, "numpy") else np.asarray(data)
        if data.dtype != np.uint8:
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__} of dtype {data.dtype}")
        self._next_double, self._next_float = self._engine.from_bytes(data)
        self._seed = self._engine.initial_seed
        return self

    # ---- uniform bits ----------------------------------------------------------------------------------
    def _unit(self, n, dtype):
        """`n` values of `uniform_real_distribution<T>(0, 1)` before scaling: 53 bits of a 64-bit draw
        for float64, else the low 24 bits of a 32-bit draw, as float32 (half and bfloat16 are drawn in
        float32 and rounded, as PyTorch's CPU kernels do)."""
        if dtype == _F64:
            return (self._engine.random64(n) & _MASK53) * 2.0 ** -53
        u = np.bitwise_and(self._engine.words32(n), _MASK24).astype(np.float32)
        return np.multiply(u, np.float32(2.0 ** -24), out=u)

    # ---- sampling helpers used by the factories and in-place initialisers ------------------------------
    def uniform(self, a, b, shape, dtype=_F32):
        """U(a, b) samples like `Tensor.uniform_`: `x * (b - a) + a`, fused, in the tensor's precision."""
        dtype, n = np.dtype(dtype), math.prod(shape)
        x = self._unit(n, dtype)
        if dtype == _F64:
            out = x if (a, b) == (0, 1) else fma64(x, float(b) - float(a), float(a))
        else:
            lo, hi = np.float32(a), np.float32(b)
            out = x if (a, b) == (0, 1) else fma32(x, hi - lo, lo)
        out = out.astype(dtype, copy=False)
        if (a, b) != (0, 1) or dtype.itemsize < 4:  # a value rounded up to `b` becomes `a`, as in PyTorch
            top = dtype.type(b)
            if (out == top).any():
                out[out == top] = dtype.type(a)
        return out.reshape(shape)

    def random(self, shape, dtype=_F32):
        """U(0, 1) samples like `torch.rand`."""
        return self.uniform(0, 1, shape, dtype)

    def normal(self, mean, std, shape, dtype=_F32, contiguous=True):
        """N(mean, std^2) samples like `Tensor.normal_`: with 16 or more elements PyTorch's vectorised
        Box-Muller over blocks of 16 uniforms, else its scalar normal distribution (which caches the
        second value of each pair)."""
        dtype, n = np.dtype(dtype), math.prod(shape)
        if n >= 16 and contiguous:
            k = n // 16 * 16
            if dtype == _F64:
                out = np.empty(n, _F64)
                out[:k] = self._box_muller_16(self._unit(n, _F64)[:k], mean, std)
                if n % 16:  # PyTorch redraws 16 uniforms for the last 16 elements
                    out[n - 16:] = self._box_muller_16(self._unit(16, _F64), mean, std)
            else:  # float32 (half and bfloat16 too, rounded at the end): 32-bit words, AVX2 arithmetic
                out = np.empty(n, _F32)
                standard_normals_f32(self._engine.word_pairs, out[:k])
                if n % 16:  # the last 16 redrawn; float32 first draws (and leaves) the other n - k words
                    if dtype == _F32:
                        self._engine.words32(n - k)
                    standard_normals_f32(self._engine.word_pairs, out[n - 16:])
                if (mean, std) != (0, 1):
                    out = fma32(out, np.float32(std), np.float32(mean))
        else:
            out = self._scalar_normals(n, mean, std)
        return out.astype(dtype, copy=False).reshape(shape)

    @staticmethod
    def _box_muller_16(u, mean, std):
        """float64 `normal_fill_16` on each block of 16: u1 = 1 - u[:8], u2 = u[8:], cos results first."""
        u = u.reshape(-1, 16)
        radius = np.sqrt(-2.0 * log_f64(1.0 - u[:, :8]))
        theta = 2.0 * math.pi * u[:, 8:]
        z = np.concatenate([radius * np.cos(theta), radius * np.sin(theta)], axis=1).reshape(-1)
        return z if (mean, std) == (0, 1) else fma64(z, float(std), float(mean))

    def _scalar_normals(self, n, mean, std):
        """`at::normal_distribution<double>` drawn `n` times (float64 results)."""
        vals = []
        if n and self._next_double is not None:
            vals.append(self._next_double)
            self._next_double = None
        pairs = (n - len(vals) + 1) // 2
        u = ((self._engine.random64(2 * pairs) & _MASK53) * 2.0 ** -53).tolist()
        for i in range(pairs):
            r = math.sqrt(-2.0 * math.log1p(-u[2 * i + 1]))
            theta = 2.0 * math.pi * u[2 * i]
            vals += [r * math.cos(theta), r * math.sin(theta)]
        if len(vals) > n:
            self._next_double = vals.pop()
        if (mean, std) != (0, 1):  # val * std + mean, fused
            m, s = Fraction(float(mean)), Fraction(float(std))
            vals = [float(Fraction(v) * s + m) for v in vals]
        return np.array(vals, np.float64)

    def exponential(self, lambd, shape, dtype=_F32):
        """Exponential samples like `Tensor.exponential_`: `-1/lambd * log1p(-u)` in float64 (with the C
        library's `log1p`, which NumPy's vectorised one does not always match)."""
        u = self._unit(math.prod(shape), _F64)
        logs = np.array([math.log1p(-v) for v in u.tolist()], np.float64)
        return ((-1.0 / lambd) * logs).astype(dtype).reshape(shape)

    def bernoulli(self, p, shape):
        """Booleans, True with probability `p` (a number, or an array of `shape` whose float64 entries draw
        53-bit and other float entries 24-bit uniforms, as PyTorch's kernels do)."""
        n = math.prod(shape)
        if isinstance(p, np.ndarray) and p.dtype != _F64:
            return (self._unit(n, _F32).reshape(shape) < p.astype(np.float32))
        return self._unit(n, _F64).reshape(shape) < p

    def integers(self, low, high, shape):
        """Integers in [low, high) like `Tensor.random_(low, high)`: a 32-bit draw (64-bit when the range
        reaches 2^32) modulo the range (int64 array)."""
        span = int(high) - int(low)
        n = math.prod(shape)
        r = self._engine.random64(n) if span >= 2 ** 32 else self._engine.random32(n)
        return ((r % np.uint64(span)).astype(np.int64) + int(low)).reshape(shape)

    def full_range(self, shape, dtype):
        """`Tensor.random_()` without bounds: [0, 2^mantissa] for floats, [0, max] for integers."""
        dtype = np.dtype(dtype)
        n = math.prod(shape)
        wide = dtype.name in ("float64", "int64")
        r = self._engine.random64(n) if wide else self._engine.random32(n)
        return (r % np.uint64(_FULL_RANGE[dtype.name])).astype(dtype).reshape(shape)

    def permutation(self, n):
        """A random permutation of 0..n-1 like `torch.randperm`: PyTorch's Fisher-Yates swaps, each with
        `random() % (n - i)`."""
        n = int(n)
        if n < 2:
            return np.arange(n, dtype=np.int64)
        return fisher_yates(self._engine.random32(n - 1) % np.arange(n, 1, -1, dtype=np.uint64))


# chapter 04's exercise: the learner writes the three draws the course's models make (nn.init's uniform and
# normal, RandomSampler's randperm); installing one sets Generator's own attribute (a slot), so the reference
# path calls nothing extra
LEARNER_METHODS = ("uniform", "normal", "permutation")
seams.offer_methods(Generator, LEARNER_METHODS, "Generator.")

class _CudaSampler:
    """Draws from a CuPy RandomState (`None`: CuPy's global one), on the GPU, with the CPU generator's methods."""

    def __init__(self, state=None):
        self._state = state

    def _rs(self):
        if self._state is not None:
            return self._state
        return cupy_module().random.get_random_state()

    def uniform(self, a, b, shape, dtype=_F32):
        return self._rs().uniform(a, b, shape).astype(dtype)

    def random(self, shape, dtype=_F32):
        return self._rs().random_sample(shape).astype(dtype)

    def normal(self, mean, std, shape, dtype=_F32, contiguous=True):
        return self._rs().normal(mean, std, shape).astype(dtype)

    def exponential(self, lambd, shape, dtype=_F32):
        return self._rs().exponential(1.0 / lambd, shape).astype(dtype)

    def bernoulli(self, p, shape):
        return self._rs().random_sample(shape) < p

    def integers(self, low, high, shape):
        return self._rs().randint(low, high, shape)

    def full_range(self, shape, dtype):
        return self._rs().randint(0, _FULL_RANGE[np.dtype(dtype).name] - 1, shape).astype(dtype)

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
    return generator if generator._engine is not None else generator._rng


def manual_seed(seed) -> Generator:
    """Seed the default generator (and CuPy's when a GPU is present), like `torch.manual_seed`."""
    default_generator.manual_seed(seed)
    cp = cupy_module()
    if cp is not None:
        cp.random.seed(int(seed) % (2 ** 32))
    return default_generator


def seed() -> int:
    """Seed the default generator non-deterministically; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator was last seeded with, like `torch.initial_seed`."""
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state as a uint8 tensor, like `torch.get_rng_state`."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restore the default generator's state, like `torch.set_rng_state`."""
    default_generator.set_state(new_state)
