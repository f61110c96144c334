"""GPU queries and memory statistics, like `torch.cuda`. Everything works (and says "no GPU")
on machines without CuPy or without an NVIDIA GPU."""
from __future__ import annotations

import importlib

from .._backend import cupy_module
from .._backend import device as device_cls


def is_available() -> bool:
    """True when CuPy is installed and sees at least one GPU."""
    return cupy_module() is not None


def device_count() -> int:
    """Number of visible GPUs (0 without CuPy or a GPU)."""
    cp = cupy_module()
    return cp.cuda.runtime.getDeviceCount() if cp is not None else 0


def _require():
    cp = cupy_module()
    if cp is None:
        raise RuntimeError(
            "Torch not compiled with CUDA enabled: no CUDA GPU is available here. "
            "Hint: check tc.cuda.is_available() before using the GPU."
        )
    return cp


def _index(device):
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    d = device_cls(device)
    return d.index if d.index is not None else current_device()


def current_device() -> int:
    """Index of the current GPU."""
    return _require().cuda.runtime.getDevice()


def set_device(device) -> None:
    """Make `device` the current GPU."""
    _require().cuda.runtime.setDevice(_index(device))


def get_device_name(device=None) -> str:
    """The GPU's product name, e.g. 'NVIDIA H100 80GB HBM3'."""
    cp = _require()
    props = cp.cuda.runtime.getDeviceProperties(_index(device))
    name = props["name"]
    return name.decode() if isinstance(name, bytes) else name


def synchronize(device=None) -> None:
    """Wait until all queued GPU work has finished (needed for honest timings)."""
    cp = cupy_module()
    if cp is not None:
        with cp.cuda.Device(_index(device)):
            cp.cuda.Stream.null.synchronize()
            cp.cuda.get_current_stream().synchronize()


def manual_seed(seed: int) -> None:
    """Seed the GPU random generator (a no-op without a GPU)."""
    cp = cupy_module()
    if cp is not None:
        cp.random.seed(int(seed) % (2 ** 32))


manual_seed_all = manual_seed


_peak = {}


def memory_allocated(device=None) -> int:
    """Bytes currently held by tensors on the GPU (0 without a GPU)."""
    cp = cupy_module()
    if cp is None:
        return 0
    used = cp.get_default_memory_pool().used_bytes()
    idx = _index(device)
    _peak[idx] = max(_peak.get(idx, 0), used)
    return used


def memory_reserved(device=None) -> int:
    """Bytes reserved by the caching allocator (0 without a GPU)."""
    cp = cupy_module()
    return cp.get_default_memory_pool().total_bytes() if cp is not None else 0


def max_memory_allocated(device=None) -> int:
    """Highest `memory_allocated` seen since start or the last reset (sampled at each query)."""
    return max(memory_allocated(device), _peak.get(_index(device) if is_available() else 0, 0))


def reset_peak_memory_stats(device=None) -> None:
    _peak.pop(_index(device) if is_available() else 0, None)


def empty_cache() -> None:
    """Return cached, unused GPU memory to the driver."""
    cp = cupy_module()
    if cp is not None:
        cp.get_default_memory_pool().free_all_blocks()
        cp.get_default_pinned_memory_pool().free_all_blocks()


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False here: the GPU path (CuPy) has no bfloat16 arrays."""
    return False


def get_device_capability(device=None):
    """(major, minor) compute capability of the GPU."""
    cp = _require()
    props = cp.cuda.runtime.getDeviceProperties(_index(device))
    return props["major"], props["minor"]


def __getattr__(name):
    if name == "amp":  # `tc.cuda.amp` (the old mixed-precision spelling) sits above this layer
        return importlib.import_module(".amp", __name__)
    if name.endswith("Tensor"):  # legacy `tc.cuda.FloatTensor`, defined with the CPU ones above this layer
        found = importlib.import_module("tinygrad_course.methods.legacy_types").CUDA_TYPES.get(name)
        if found is not None:
            return found
    raise AttributeError(f"module 'tinygrad_course.cuda' has no attribute '{name}'")
