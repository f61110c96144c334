"""Matrix products as Tensor methods and the `@` operator (ops in `ops/matmul.py`)."""
from __future__ import annotations

from ..ops import matmul as M
from ..ops.sparse_coo import SparseCOOTensor, dense_mm


class ProductMethods:
    """`@`, `matmul`, `mm`, `bmm`, `mv`, `dot`."""

    __slots__ = ()

    def __matmul__(self, other):
        if not hasattr(other, "_data"):
            return NotImplemented
        return M.matmul(self, other)

    def __rmatmul__(self, other):
        if not hasattr(other, "_data"):
            return NotImplemented
        return M.matmul(other, self)

    # ---- matrix products ----------------------------------------------------------------------------
    def matmul(self, other):
        """Matrix product with broadcasting, like `torch.matmul`; a sparse COO `other` gives a dense result."""
        if isinstance(other, SparseCOOTensor):
            return dense_mm(self, other)
        return M.matmul(self, other)

    def mm(self, other):
        """2-D matrix product, like `torch.mm`; a sparse COO `other` gives a dense result."""
        if isinstance(other, SparseCOOTensor):
            return dense_mm(self, other)
        return M.mm(self, other)

    def bmm(self, other):
        return M.bmm(self, other)

    def mv(self, vec):
        return M.mv(self, vec)

    def dot(self, other):
        return M.dot(self, other)
