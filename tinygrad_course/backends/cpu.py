"""`tc.backends.cpu`: what the CPU offers."""
import numpy as np


def get_cpu_capability() -> str:
    """The SIMD level NumPy's kernels use ("AVX512", "AVX2", "NO AVX"), like `torch.backends.cpu`."""
    found = getattr(getattr(np, "_core", np).__dict__.get("_multiarray_umath"), "__cpu_features__", {}) or {}
    for name, label in (("AVX512F", "AVX512"), ("AVX2", "AVX2")):
        if found.get(name):
            return label
    return "NO AVX"
