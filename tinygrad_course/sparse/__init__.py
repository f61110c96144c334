"""`tc.sparse`: sparse COO tensors and their product with dense matrices, like `torch.sparse`."""
from .._unsupported import missing as _missing
from ..ops.sparse_coo import SparseCOOTensor, mm, sparse_coo_tensor, to_sparse


def sum(input, dim=None):
    """Sum of the stored values (over all entries, or a dense result over `dim`), like `torch.sparse.sum`."""
    dense = input.to_dense()
    return dense.sum() if dim is None else dense.sum(dim)


def addmm(mat, mat1, mat2, *, beta=1, alpha=1):
    """beta * mat + alpha * (mat1 @ mat2) with a sparse `mat1`, like `torch.sparse.addmm`."""
    return mat * beta + mm(mat1, mat2) * alpha


__all__ = ["SparseCOOTensor", "addmm", "mm", "sparse_coo_tensor", "sum", "to_sparse"]


def __getattr__(name):
    raise _missing("tc.sparse", name, f"module '{__name__}' has no attribute '{name}'")
