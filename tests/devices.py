"""Device parametrization for tests: every device-aware test runs on "cpu" and on "cuda".

The cuda cases carry the `gpu` marker (so `pytest -m gpu` selects exactly them) and skip with one clear
reason where CuPy or a GPU is missing. With TC_STRICT_CUPY=1 they run on any machine against the strict
CuPy stand-in (tests/strict_cupy.py); tests marked `requires_real_gpu` still skip there. Use the `device` fixture (tests/conftest.py) or, for module-level
parametrization, `@pytest.mark.parametrize("device", DEVICES)`.
"""
import numpy as np
import pytest

import tinygrad_course as tc

CUDA_SKIP_REASON = "CUDA not available (CuPy or a GPU missing)"
ON_STAND_IN = getattr(tc._backend.cupy_module(), "is_strict_stand_in", False)

requires_cuda = pytest.mark.skipif(not tc.cuda.is_available(), reason=CUDA_SKIP_REASON)
requires_real_gpu = pytest.mark.skipif(not tc.cuda.is_available() or ON_STAND_IN,
                                       reason="needs a real GPU (kernels, memory, speed)")

CUDA = pytest.param("cuda", marks=[pytest.mark.gpu, requires_cuda], id="cuda")
DEVICES = ["cpu", CUDA]


def to_numpy(t):
    """A tensor's values as a NumPy array, whatever its device (float32 for 16-bit floats)."""
    t = t.detach().cpu()
    if t.dtype in (tc.float16, tc.bfloat16):
        t = t.float()
    return t.numpy()


def assert_close_across_devices(cpu_value, other_value, rtol=1e-5, atol=1e-6, what="value"):
    """The same computation on two devices agrees (dtype, shape and values)."""
    assert cpu_value.dtype == other_value.dtype, f"{what}: dtype {cpu_value.dtype} vs {other_value.dtype}"
    assert tuple(cpu_value.shape) == tuple(other_value.shape), f"{what}: shape differs"
    np.testing.assert_allclose(to_numpy(cpu_value), to_numpy(other_value), rtol=rtol, atol=atol, err_msg=what)
