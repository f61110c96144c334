"""Sparse COO tensors at the level graph networks need, like PyTorch's `layout=torch.sparse_coo`:
`sparse_coo_tensor(indices, values, size)`, `to_dense`, `coalesce`, `indices`/`values`, `t()`, and the
sparse-dense product `sparse.mm` / `spmm` / `S @ D`, differentiable with respect to the dense operand and
to the values (so learned edge weights train).

`SparseCOOTensor` holds an int64 `(ndim, nnz)` indices tensor and a `(nnz,)` values tensor; it is not a
dense `Tensor` (its `is_sparse` is True and dense-only methods are absent).
"""
from __future__ import annotations

import numpy as np

from .._namespace import namespace
from .._unsupported import UnsupportedError
from ..autograd.engine import Op
from .concat import cat as _cat
from ..factories import tensor as _tensor
from ..factories import zeros
from ..shapes import Size
from ..tensor_base import TensorBase


class _Layout:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"{namespace()}.{self.name}"


sparse_coo = _Layout("sparse_coo")
strided = _Layout("strided")


def _indent(text: str, width: int) -> str:
    return text.replace("\n", "\n" + " " * width)


class SparseCOOTensor:
    """A sparse tensor in coordinate format (PyTorch's `torch.sparse_coo` layout)."""

    is_sparse = True
    is_sparse_csr = False
    layout = sparse_coo

    def __init__(self, indices: TensorBase, values: TensorBase, size, coalesced: bool = False):
        self._indices_t, self._values_t = indices, values
        self._size = Size(size)
        self._coalesced = coalesced

    # ---- attributes ----------------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return self._size

    def size(self, dim=None):
        """The shape, or one dimension of it."""
        return self._size if dim is None else self._size[dim]

    def dim(self) -> int:
        return len(self._size)

    ndim = property(dim)

    @property
    def dtype(self):
        return self._values_t.dtype

    @property
    def device(self):
        return self._values_t.device

    @property
    def requires_grad(self) -> bool:
        return self._values_t.requires_grad

    def _nnz(self) -> int:
        """Number of stored entries (duplicates included until `coalesce()`)."""
        return int(self._values_t.shape[0])

    def is_coalesced(self) -> bool:
        """True when entries are sorted with no duplicate coordinates."""
        return self._coalesced

    def _indices(self) -> TensorBase:
        return self._indices_t

    def _values(self) -> TensorBase:
        return self._values_t

    def indices(self) -> TensorBase:
        """The `(ndim, nnz)` coordinates (only on a coalesced tensor, as in PyTorch)."""
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._indices_t

    def values(self) -> TensorBase:
        """The `(nnz,)` stored values (only on a coalesced tensor, as in PyTorch)."""
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._values_t

    # ---- conversions ---------------------------------------------------------------------------------
    def coalesce(self) -> SparseCOOTensor:
        """Entries sorted by coordinate with duplicates summed."""
        if self._coalesced:
            return self
        idx = self._indices_t.numpy()
        if idx.shape[1] == 0:
            return SparseCOOTensor(self._indices_t, self._values_t, self._size, True)
        flat = np.ravel_multi_index(tuple(idx), tuple(self._size))
        uniq, inverse = np.unique(flat, return_inverse=True)
        new_idx = _tensor(np.stack(np.unravel_index(uniq, tuple(self._size))).astype(np.int64))
        vals = zeros(len(uniq), dtype=self.dtype, device=self.device).index_add(
            0, _tensor(inverse.astype(np.int64)), self._values_t)
        return SparseCOOTensor(new_idx, vals, self._size, True)

    def to_dense(self) -> TensorBase:
        """The dense tensor with the stored values summed at their coordinates (differentiable in the values)."""
        flat = _tensor(np.ravel_multi_index(tuple(self._indices_t.numpy()), tuple(self._size)).astype(np.int64)
                       if self._nnz() else np.zeros(0, dtype=np.int64))
        n = int(np.prod(tuple(self._size)))
        return zeros(n, dtype=self.dtype, device=self.device).index_add(0, flat, self._values_t).reshape(self._size)

    def to_sparse(self) -> SparseCOOTensor:
        return self

    def t(self) -> SparseCOOTensor:
        """The transpose of a 2-D sparse tensor."""
        if self.dim() != 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but self is "
                               f"{self.dim()}D")
        return SparseCOOTensor(self._indices_t.flip(0), self._values_t, (self._size[1], self._size[0]))

    def transpose(self, dim0: int, dim1: int) -> SparseCOOTensor:
        """The sparse tensor with two dimensions swapped (its coordinates' rows exchanged)."""
        d0, d1 = dim0 % self.dim(), dim1 % self.dim()
        order = list(range(self.dim()))
        order[d0], order[d1] = d1, d0
        size = [self._size[i] for i in order]
        return SparseCOOTensor(self._indices_t.index_select(0, _tensor(order)), self._values_t, size)

    def sparse_dim(self) -> int:
        return self.dim()

    def dense_dim(self) -> int:
        return 0

    def detach(self) -> SparseCOOTensor:
        return SparseCOOTensor(self._indices_t, self._values_t.detach(), self._size, self._coalesced)

    def clone(self) -> SparseCOOTensor:
        return SparseCOOTensor(self._indices_t.clone(), self._values_t.clone(), self._size, self._coalesced)

    def requires_grad_(self, requires_grad: bool = True) -> SparseCOOTensor:
        self._values_t.requires_grad_(requires_grad)
        return self

    def to(self, *args, **kwargs) -> SparseCOOTensor:
        """The same sparse tensor with its values converted (dtype/device)."""
        return SparseCOOTensor(self._indices_t.to(*args, **kwargs) if not any(
            getattr(a, "is_floating_point", False) for a in args) else self._indices_t,
            self._values_t.to(*args, **kwargs), self._size, self._coalesced)

    def float(self):
        return SparseCOOTensor(self._indices_t, self._values_t.float(), self._size, self._coalesced)

    def double(self):
        return SparseCOOTensor(self._indices_t, self._values_t.double(), self._size, self._coalesced)

    # ---- products ------------------------------------------------------------------------------------
    def mm(self, mat2):
        return mm(self, mat2)

    def matmul(self, other):
        """Sparse (n, m) @ dense (m, k) or dense vector (m,)."""
        if isinstance(other, TensorBase) and other.ndim == 1:
            return mm(self, other.unsqueeze(1)).squeeze(1)
        return mm(self, other)

    mv = matmul
    __matmul__ = matmul

    def __rmatmul__(self, other):
        """dense @ sparse is dense."""
        if isinstance(other, TensorBase):
            return dense_mm(other, self)
        return NotImplemented

    def __add__(self, other):
        """sparse + sparse is sparse (entries concatenated, uncoalesced); dense + sparse is dense."""
        if isinstance(other, SparseCOOTensor):
            if other.shape != self.shape:
                raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size "
                                   f"{list(self.shape)} while other has size {list(other.shape)} (FYI: op2-sparse "
                                   f"addition does not currently support broadcasting)")
            return SparseCOOTensor(_cat([self._indices_t, other._indices_t], 1),
                                   _cat([self._values_t, other._values_t], 0), self._size)
        if isinstance(other, TensorBase):
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
        return NotImplemented

    def __radd__(self, other):
        """dense + sparse is dense."""
        if isinstance(other, TensorBase):
            return other + self.to_dense()
        return NotImplemented

    def add(self, other):
        return self + other

    def __getattr__(self, name):
        if not name.startswith("__") and hasattr(type(self._values_t), name):  # a method of Tensor
            raise UnsupportedError(f"sparse tensors do not implement .{name}() in tinygrad_course. Instead, make "
                                   f"the tensor dense with .to_dense() first.")
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __mul__(self, other):
        if isinstance(other, (int, float)):
            return SparseCOOTensor(self._indices_t, self._values_t * other, self._size, self._coalesced)
        return NotImplemented

    __rmul__ = __mul__

    def __repr__(self):
        ns = namespace()
        ind = _indent(repr(self._indices_t), 15)
        vals = _indent(repr(self._values_t), 14)
        if self._nnz() == 0:
            ind = f"tensor([], size=({self.dim()}, 0))"
            vals = f"tensor([], size=(0,){', dtype=' + repr(self.dtype) if self.dtype.name != 'float32' else ''})"
        size = "(" + ", ".join(map(str, self._size)) + ("," if self.dim() == 1 else "") + ")"
        return (f"tensor(indices={ind},\n       values={vals},\n       size={size}, nnz={self._nnz()}, "
                f"layout={ns}.sparse_coo)")


class SparseMM(Op):
    """sparse (n, m) @ dense (m, k): a scatter-add of the dense rows picked by the stored entries."""

    @staticmethod
    def forward(ctx, values, dense, rows, cols, n):
        xp = dense._xp
        out = xp.zeros((n, dense.shape[1]), dtype=np.result_type(values._data.dtype, dense._data.dtype))
        np.add.at(out, rows._data, values._data[:, None] * dense._data[cols._data])
        ctx.saved = (values, dense, rows, cols)
        return out

    @staticmethod
    def backward(ctx, grad):
        values, dense, rows, cols = ctx.saved
        g_values = g_dense = None
        if ctx.needs_input_grad[0]:
            g_values = (grad.index_select(0, rows) * dense.index_select(0, cols)).sum(1)
        if ctx.needs_input_grad[1]:
            picked = grad.index_select(0, rows) * values.unsqueeze(1)
            g_dense = zeros(tuple(dense.shape), dtype=grad.dtype, device=grad.device).index_add(0, cols, picked)
        return g_values, g_dense, None, None, None


def dense_mm(dense, sparse):
    """dense (k, n) @ sparse COO (n, m), or a dense vector (n,) @ sparse: the transpose of sparseᵀ @ denseᵀ, so
    gradients reach the dense operand and the stored values, as in PyTorch."""
    if dense.ndim == 1:
        return dense_mm(dense.unsqueeze(0), sparse).squeeze(0)
    if sparse.dim() != 2 or dense.ndim != 2:
        raise RuntimeError(f"mm: expects a 2-D dense tensor and a 2-D sparse tensor, got {dense.ndim}-D and "
                           f"{sparse.dim()}-D")
    if dense.shape[1] != sparse.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({dense.shape[0]}x{dense.shape[1]} and "
                           f"{sparse.shape[0]}x{sparse.shape[1]})")
    return mm(sparse.t(), dense.t()).t()


def mm(sparse, dense):
    """`torch.sparse.mm(sparse, dense)`: the product of a 2-D sparse COO tensor and a dense matrix (either
    operand may be the sparse one)."""
    if isinstance(dense, SparseCOOTensor) and not isinstance(sparse, SparseCOOTensor):
        return dense_mm(sparse, dense)
    if isinstance(dense, SparseCOOTensor):
        return mm(sparse, dense.to_dense())
    if not isinstance(sparse, SparseCOOTensor):
        return sparse.mm(dense)
    if sparse.dim() != 2 or dense.ndim != 2:
        raise RuntimeError(f"sparse.mm expects a 2-D sparse tensor and a 2-D dense tensor, got {sparse.dim()}-D and "
                           f"{dense.ndim}-D")
    if sparse.shape[1] != dense.shape[0]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {sparse.shape[1]}, got {dense.shape[0]}")
    idx = sparse._indices_t
    if sparse.dtype is not dense.dtype:
        raise RuntimeError(f"expected scalar type {dense.dtype} but found {sparse.dtype}")
    return SparseMM.apply(sparse._values_t, dense, idx[0], idx[1], sparse.shape[0])


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, requires_grad=False,
                      check_invariants=None, is_coalesced=None):
    """A sparse COO tensor with `values[k]` at coordinate `indices[:, k]`, like `torch.sparse_coo_tensor`;
    `size` defaults to the smallest shape holding every coordinate."""
    indices = indices if isinstance(indices, TensorBase) else _tensor(indices)
    values = values if isinstance(values, TensorBase) else _tensor(values, dtype=dtype)
    if dtype is not None:
        values = values.to(dtype)
    if device is not None:
        values = values.to(device)
    indices = indices.long()
    if indices.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if indices.shape[1] != values.shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {indices.shape[1]}, "
                           f"nnz from values: {values.shape[0]}")
    if size is None:
        size = tuple(int(m) + 1 for m in indices.numpy().max(1)) if indices.shape[1] else (0,) * indices.shape[0]
    if requires_grad:
        values = values.detach().requires_grad_(True)
    return SparseCOOTensor(indices, values, tuple(size), bool(is_coalesced))


def to_sparse(dense: TensorBase, sparse_dim=None, *, layout=None) -> SparseCOOTensor:
    """The nonzero entries of a dense tensor as a coalesced sparse COO tensor (`Tensor.to_sparse`)."""
    nz = np.nonzero(dense.detach().cpu().numpy())
    idx = _tensor(np.stack(nz).astype(np.int64) if nz else np.zeros((dense.ndim, 0), dtype=np.int64))
    if dense.ndim and idx.shape[1] == 0:
        idx = _tensor(np.zeros((dense.ndim, 0), dtype=np.int64))
    flat = _tensor(np.ravel_multi_index(nz, tuple(dense.shape)).astype(np.int64) if idx.shape[1] else
                   np.zeros(0, dtype=np.int64))
    return SparseCOOTensor(idx, dense.reshape(-1).index_select(0, flat), tuple(dense.shape), True)
