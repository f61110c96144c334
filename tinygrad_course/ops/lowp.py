"""Matrix products of float16/bfloat16 arrays with PyTorch's result dtype and float32 accumulation.

NumPy has no BLAS kernel for 16-bit floats: a bfloat16 matmul comes back as float32 and a float16 one
runs a slow generic loop. On the CPU we therefore multiply in float32 and round the result once to the
input dtype — what PyTorch's CPU kernels (and GPU tensor cores) do: 16-bit inputs, float32 accumulation.
CuPy's float16 matmul already runs on cuBLAS and returns float16, so GPU arrays go straight through.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

_LOW = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def matmul_arrays(xp, a, b):
    """`a @ b` for backend arrays, keeping 16-bit float inputs 16-bit in the result."""
    if xp is np and a.dtype in _LOW:
        return np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(a.dtype)
    return xp.matmul(a, b)
