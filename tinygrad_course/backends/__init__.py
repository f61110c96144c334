"""`tc.backends`: the switches programs set for PyTorch's back ends (`torch.backends.cudnn.benchmark = True`,
`torch.backends.cuda.matmul.allow_tf32 = True`, `torch.backends.mps.is_available()`).

The framework computes with NumPy/CuPy, so the switches are recorded with PyTorch's defaults and read back,
but change no numerics (there is no cuDNN, TF32 or MPS path)."""
from . import cpu, cuda, cudnn, mkl, mps, openmp, opt_einsum

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mps", "openmp", "opt_einsum"]
