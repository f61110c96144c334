"""Tensor predicates PyTorch programs ask: the device kinds (`is_xpu`, `is_mps`, `is_meta`, ...) and
layouts (`is_sparse`, `is_quantized`, `is_nested`, ...). A tensor here is a dense, strided tensor on the
CPU or a CUDA GPU, so these are all False (`is_cpu`/`is_cuda` live in the core)."""
from __future__ import annotations

from ..ops.sparse_coo import strided

METHOD_FUNCTIONS: tuple[str, ...] = ()
__all__: list[str] = []


def _false(name):
    def getter(self) -> bool:
        return False

    getter.__name__ = name
    getter.__doc__ = f"`Tensor.{name}`: False (the framework's tensors are dense, on the CPU or a CUDA GPU)."
    return property(getter)


class PredicateMethods:
    """Device and layout predicates."""

    __slots__ = ()

    is_xpu = _false("is_xpu")
    is_mps = _false("is_mps")
    is_meta = _false("is_meta")
    is_ipu = _false("is_ipu")
    is_mtia = _false("is_mtia")
    is_maia = _false("is_maia")
    is_xla = _false("is_xla")
    is_hpu = _false("is_hpu")
    is_vulkan = _false("is_vulkan")
    is_mkldnn = _false("is_mkldnn")
    is_quantized = _false("is_quantized")
    is_sparse = _false("is_sparse")
    is_sparse_csr = _false("is_sparse_csr")
    is_nested = _false("is_nested")

    @property
    def layout(self):
        """`tc.strided`: every tensor here is dense (sparse COO tensors are their own class)."""
        return strided

    def is_inference(self) -> bool:
        """False: inference tensors are not distinguished here."""
        return False

    def is_set_to(self, other) -> bool:
        """True when both tensors view the same memory with the same shape and strides."""
        return (self.data_ptr() == other.data_ptr() and tuple(self.shape) == tuple(other.shape)
                and self.stride() == other.stride())
