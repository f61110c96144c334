"""Shape methods: views that share storage (`view`, `transpose`, `permute`, `expand`, slicing helpers)
and the copies `reshape`/`contiguous`/`clone` make when a view is impossible (ops in `ops/movement.py`)."""
from __future__ import annotations

from ..ops import concat as CT
from ..ops import indexing as IX
from ..ops import rearrange as RA
from ..ops import views as V
from ..shapes import normalize_dim, shape_from_args
from .numpy_names import numpy_arg_names


@numpy_arg_names
class ViewMethods:
    """Views and reshapes of `Tensor`."""

    __slots__ = ()

    # ---- shape and views -----------------------------------------------------------------------------
    def view(self, *shape):
        """Same data, new shape, without copying (fails if the strides do not allow it)."""
        return V.View.apply(self, shape_from_args(shape))

    def view_as(self, other):
        return V.View.apply(self, other.shape)

    def reshape(self, *shape):
        """New shape: a view when possible, otherwise a copy."""
        shape = shape_from_args(shape)
        if self._data.flags.c_contiguous:
            return V.View.apply(self, shape)
        try:
            return V.ReshapeAlias.apply(self, shape)  # the strides may still allow a view
        except RuntimeError:
            return V.UnsafeView.apply(self.contiguous(), shape)  # a copy: CloneBackward0 -> UnsafeViewBackward0

    def reshape_as(self, other):
        return self.reshape(other.shape)

    def flatten(self, start_dim=0, end_dim=-1):
        """Merge dims start_dim..end_dim into one."""
        if self.ndim == 0:
            return self.reshape(1)
        s, e = normalize_dim(start_dim, self.ndim), normalize_dim(end_dim, self.ndim)
        if s > e:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        if s == e:
            return self
        shape = self._data.shape
        return self.reshape(shape[:s] + (-1,) + shape[e + 1:])

    def unflatten(self, dim, sizes):
        """Split dimension `dim` into `sizes`."""
        d = normalize_dim(dim, self.ndim)
        shape = self._data.shape
        return self.view(shape[:d] + tuple(sizes) + shape[d + 1:])

    def squeeze(self, dim=None):
        """Remove size-1 dimensions (all, or only `dim`)."""
        return V.Squeeze.apply(self, dim)

    def unsqueeze(self, dim):
        """Insert a size-1 dimension at `dim`."""
        return V.Unsqueeze.apply(self, dim)

    def permute(self, *dims):
        """Reorder dimensions (a view)."""
        return V.Permute.apply(self, shape_from_args(dims))

    def transpose(self, dim0, dim1):
        """Swap two dimensions (a view)."""
        return V.Transpose.apply(self, dim0, dim1)

    swapaxes = swapdims = transpose

    def t(self):
        """Transpose of a matrix (<= 2-D)."""
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
        if self.ndim < 2:
            return V.AliasView.apply(self)
        return V.T.apply(self, 0, 1)

    @property
    def T(self):
        """All dimensions reversed (the matrix transpose for 2-D tensors)."""
        if self.ndim == 2:
            return V.T.apply(self, 0, 1)
        return V.Permute.apply(self, tuple(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self):
        """Transpose of the last two dimensions (a batch of matrices)."""
        return self._matrix_transpose("tensor.mT")

    @property
    def mH(self):
        """Conjugate transpose of the last two dimensions (the same as `mT` for real tensors)."""
        return self._matrix_transpose("tensor.mH")

    def adjoint(self):
        """Conjugate transpose of the last two dimensions (a view; `mT` for real tensors)."""
        return self._matrix_transpose("tensor.adjoint()")

    @property
    def H(self):
        """Conjugate transpose of a matrix (the same as `T` on a 2-D real tensor)."""
        if self.ndim == 0:
            return self
        if self.ndim != 2:
            hint = " For batches of matrices, consider using tensor.mH" if self.ndim > 2 else ""
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor.{hint}")
        return V.T.apply(self, 0, 1)

    def _matrix_transpose(self, what):
        if self.ndim < 2:
            raise RuntimeError(f"{what} is only supported on matrices or batches of matrices. Got {self.ndim}-D tensor.")
        return V.Transpose.apply(self, -2, -1)

    def expand(self, *sizes):
        """Broadcast size-1 dims to `sizes` without copying (stride 0); -1 keeps a size."""
        return V.Expand.apply(self, shape_from_args(sizes))

    def expand_as(self, other):
        return V.Expand.apply(self, other.shape)

    def repeat(self, *sizes):
        """Tile the tensor `sizes` times along each dimension (a copy)."""
        return RA.Repeat.apply(self, shape_from_args(sizes))

    def flip(self, *dims):
        """Reverse the order of elements along `dims` (a copy)."""
        return RA.Flip.apply(self, shape_from_args(dims))

    def narrow(self, dim, start, length):
        """The slice start:start+length along `dim` (a view)."""
        return IX.Narrow.apply(self, dim, int(start), int(length))

    def split(self, split_size_or_sections, dim=0):
        """Split into chunks of a given size (the last may be smaller), or of the listed sizes."""
        size = self._data.shape[normalize_dim(dim, self.ndim)]
        if isinstance(split_size_or_sections, int):
            step = split_size_or_sections
            if step <= 0 and size:
                raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
            sizes = [min(step, size - i) for i in range(0, size, step)] if step else [0]
        else:
            sizes = list(split_size_or_sections)
        return CT.Split.apply(self, sizes, dim, isinstance(split_size_or_sections, int))

    def chunk(self, chunks, dim=0):
        """Split into `chunks` nearly equal pieces (like `torch.chunk`)."""
        if chunks <= 0:
            raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
        size = self._data.shape[normalize_dim(dim, self.ndim)]
        step = -(-size // chunks)
        return self.split(step, dim) if step else self.split([0] * 1, dim)

    def unbind(self, dim=0):
        """The slices along `dim`, as a tuple of views."""
        return CT.Unbind.apply(self, dim)

    def contiguous(self, memory_format=None):
        """This tensor if already contiguous, else a contiguous copy."""
        if self._data.flags.c_contiguous:
            return self
        return V.Clone.apply(self)

    def clone(self, *, memory_format=None):
        """A copy with its own storage (recorded in the graph)."""
        return V.Clone.apply(self)
