"""Products and matrix functions: einsum, outer, inner, tensordot, kron, trace, diag, diagonal, cross,
cdist, addmm, baddbmm, ... (like torch)."""
from __future__ import annotations

import math

import numpy as np

from ..factories import arange, empty, eye
from ..linalg import inv
from ..ops import cross_distance as XD
from ..ops import diagonal as DG
from ..ops import products as PR
from ..ops import reduce as R
from ..dtypes import type_name
from ..shapes import normalize_dim
from ..ops.out_arg import supports_out
from .numpy_names import numpy_arg_names

METHOD_FUNCTIONS: tuple[str, ...] = (
    "outer", "ger", "inner", "kron", "trace", "diag", "diagonal", "diag_embed", "cross", "dist", "addmm",
    "addmv", "addbmm", "baddbmm", "matrix_power",
)
__all__: list[str] = ["einsum", "tensordot", "cdist", "vander", "block_diag"]


class Dist(R.Norm):
    """p-norm of a difference, under PyTorch's node name for `dist`."""

    node_name = "DistBackward0"


@numpy_arg_names
class LinalgMethods:
    """Mixin with linalg methods of `Tensor`."""

    __slots__ = ()

    def outer(self, vec2):
        """Outer product of two 1-D tensors, like `torch.outer`."""
        for name, v in (("self", self), ("vec2", vec2)):
            if v.ndim != 1:
                raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v.ndim}-D")
        return self.reshape(-1, 1) * vec2

    ger = outer

    def inner(self, other):
        """Sum of products over the last dimension of both tensors, like `torch.inner`."""
        if self.ndim == 0 or other.ndim == 0:
            return self * other
        if self.shape[-1] != other.shape[-1]:
            raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                               f"{list(self.shape)} and {list(other.shape)}")
        return tensordot(self, other, ([-1], [-1]))

    def kron(self, other):
        """Kronecker product: every element of self times a copy of other, like `torch.kron`."""
        n = max(self.ndim, other.ndim)
        a = self.reshape((1,) * (n - self.ndim) + tuple(self.shape))
        b = other.reshape((1,) * (n - other.ndim) + tuple(other.shape))
        a_shape = [s for d in a.shape for s in (d, 1)]
        b_shape = [s for d in b.shape for s in (1, d)]
        out = a.reshape(a_shape) * b.reshape(b_shape)
        return out.reshape([x * y for x, y in zip(a.shape, b.shape)])

    def trace(self):
        """Sum of the main diagonal of a matrix, like `torch.trace`."""
        return DG.Trace.apply(self)

    def diagonal(self, offset=0, dim1=0, dim2=1):
        """The diagonal over dims (dim1, dim2), shifted by `offset`, as a view (like `torch.diagonal`)."""
        return DG.Diagonal.apply(self, offset, dim1, dim2)

    def diag_embed(self, offset=0, dim1=-2, dim2=-1):
        """A tensor whose (dim1, dim2) diagonals hold the last dimension of self, like `torch.diag_embed`."""
        return DG.DiagEmbed.apply(self, offset, dim1, dim2)

    def diag(self, diagonal=0):
        """1-D: a matrix with self on a diagonal; 2-D: that diagonal as a 1-D copy (like `torch.diag`)."""
        if self.ndim == 1:
            return DG.DiagEmbed.apply(self, diagonal, 0, 1)
        if self.ndim == 2:
            return DG.DiagonalCopy.apply(self, diagonal, 0, 1)
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {self.ndim}D")

    def cross(self, other, dim=None):
        """Cross product of 3-vectors along `dim` (default: the first dim of size 3), like `torch.cross`."""
        if dim is None:
            shape = np.broadcast_shapes(tuple(self.shape), tuple(other.shape))
            dim = next((i for i, s in enumerate(shape) if s == 3), None)
            if dim is None:
                raise RuntimeError("no dimension of size 3 in input")
        return XD.Cross.apply(self, other, dim)

    def dist(self, other, p=2):
        """p-norm of (self - other), like `torch.dist`."""
        diff = self - other
        if diff.dtype.category != 2:
            raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                               f"Got {type_name(diff.dtype)} instead.")
        return Dist.apply(diff, float(p), None, False)

    def addmm(self, mat1, mat2, *, beta=1, alpha=1):
        """beta * self + alpha * (mat1 @ mat2), like `torch.addmm`."""
        return PR.AddProduct.apply(self, mat1, mat2, beta, alpha)

    def addmv(self, mat, vec, *, beta=1, alpha=1):
        """beta * self + alpha * (mat @ vec), like `torch.addmv`."""
        return PR.Addmv.apply(self, mat, vec, beta, alpha)

    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
        """beta * self + alpha * bmm(batch1, batch2), like `torch.baddbmm`."""
        return PR.Baddbmm.apply(self, batch1, batch2, beta, alpha)

    def addbmm(self, batch1, batch2, *, beta=1, alpha=1):
        """beta * self + alpha * sum_b(batch1[b] @ batch2[b]), like `torch.addbmm`."""
        return PR.Addbmm.apply(self, batch1, batch2, beta, alpha)

    def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
        """In-place addmm, like `Tensor.addmm_`."""
        return self._inplace(lambda t, a, b: t.addmm(a, b, beta=beta, alpha=alpha), mat1, mat2)

    def addmv_(self, mat, vec, *, beta=1, alpha=1):
        """In-place addmv, like `Tensor.addmv_`."""
        return self._inplace(lambda t, a, b: t.addmv(a, b, beta=beta, alpha=alpha), mat, vec)

    def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
        """In-place baddbmm, like `Tensor.baddbmm_`."""
        return self._inplace(lambda t, a, b: t.baddbmm(a, b, beta=beta, alpha=alpha), batch1, batch2)

    def addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
        """In-place addbmm, like `Tensor.addbmm_`."""
        return self._inplace(lambda t, a, b: t.addbmm(a, b, beta=beta, alpha=alpha), batch1, batch2)

    def matrix_power(self, n):
        """The (batched) square matrix multiplied by itself n times (the inverse's for n < 0), like
        `torch.matrix_power`."""
        if self.ndim < 2 or self.shape[-1] != self.shape[-2]:
            if self.ndim < 2:
                raise RuntimeError(f"linalg.matrix_power: The input tensor A must have at least 2 dimensions.")
            raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are "
                               f"{self.shape[-2]} by {self.shape[-1]} matrices")
        if n < 0:
            return inv(self).matrix_power(-n)
        if n == 0:
            return eye(self.shape[-1], dtype=self.dtype, device=self.device).expand(self.shape).clone()
        if n == 1:
            return self.clone()
        result, square = None, self
        while n:
            if n & 1:
                result = square if result is None else result @ square
            n >>= 1
            if n:
                square = square @ square
        return result


# ---- standalone functions ------------------------------------------------------------------------------

einsum = PR.einsum


def tensordot(a, b, dims=2):
    """Contract dims of `a` with dims of `b` (an int: a's last `dims` with b's first), like `torch.tensordot`."""
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    else:
        dims_a, dims_b = dims
        dims_a = [dims_a] if isinstance(dims_a, int) else list(dims_a)
        dims_b = [dims_b] if isinstance(dims_b, int) else list(dims_b)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    ca = [normalize_dim(d, a.ndim) for d in dims_a]
    cb = [normalize_dim(d, b.ndim) for d in dims_b]
    for da, db, ua, ub in zip(ca, cb, dims_a, dims_b):
        if a.shape[da] != b.shape[db]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[da]} in dim {ua} "
                               f"and second has size {b.shape[db]} in dim {ub}")
    free_a = [d for d in range(a.ndim) if d not in ca]
    free_b = [d for d in range(b.ndim) if d not in cb]
    k = math.prod(a.shape[d] for d in ca)
    left = a.permute(*free_a, *ca).reshape(math.prod(a.shape[d] for d in free_a), k)
    right = b.permute(*cb, *free_b).reshape(k, math.prod(b.shape[d] for d in free_b))
    return left.mm(right).reshape([a.shape[d] for d in free_a] + [b.shape[d] for d in free_b])


tensordot = supports_out("tensordot", tensordot)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """p-norm distance between each row of x1 (.., P, M) and each row of x2 (.., R, M), like `torch.cdist`."""
    if x1.ndim > 2 or x2.ndim > 2:
        batch = np.broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
        x1 = x1.expand(*batch, *x1.shape[-2:]) if tuple(x1.shape[:-2]) != batch else x1
        x2 = x2.expand(*batch, *x2.shape[-2:]) if tuple(x2.shape[:-2]) != batch else x2
    return XD.Cdist.apply(x1, x2, float(p))


def vander(x, N=None, increasing=False):
    """Vandermonde matrix: columns are powers of `x` (decreasing unless `increasing`), like `torch.vander`."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    out = x.unsqueeze(1) ** arange(n, device=x.device)
    return out if increasing else out.flip(1)


def block_diag(*tensors):
    """The tensors (0-, 1- or 2-D) placed along the diagonal of a zero matrix, like `torch.block_diag`."""
    if not tensors:
        return empty(1, 0)
    return DG.BlockDiag.apply(*tensors)
