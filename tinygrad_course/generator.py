"""Random number generators, like `torch.Generator` and `torch.manual_seed`: one NumPy generator for the
CPU, CuPy's random state for the GPU; `sampler` picks the one that draws for a tensor's device."""
from __future__ import annotations

import numpy as np

from ._backend import CPU, array_module, canonical_device, cupy_module


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
