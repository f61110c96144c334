"""Index updates as Tensor methods (index_add/copy/fill, masked_scatter, put, index_put, scatter_reduce, like
torch) and the in-place shape changes (`squeeze_`, `t_`, ...) that give nodes PyTorch's in-place names."""
from __future__ import annotations

from ..ops import gather_scatter as GS
from ..ops import index_update as IU
from ..ops import indexing as IX
from ..ops import views as V
from ..ops._util import as_tensor_like
from ..tensor_base import TensorBase
from .numpy_names import numpy_arg_names

METHOD_FUNCTIONS: tuple[str, ...] = (
    "index_add", "index_copy", "index_fill", "masked_scatter", "put", "index_put", "index_put_", "scatter_reduce",
)
__all__: list[str] = []



_RENAMED_NODES = {}


def _renamed(node, name):
    """Give `node` PyTorch's name for the in-place variant of its op (`SqueezeBackward3`, `TBackward1`, ...)."""
    cls = _RENAMED_NODES.get((type(node), name))
    if cls is None:
        cls = _RENAMED_NODES[(type(node), name)] = type(name, (type(node),), {})
    node.__class__ = cls
    return node


@numpy_arg_names
class IndexUpdateMethods:
    """Writing into selected positions, and in-place reshapes."""

    __slots__ = ()

    # ---- in-place shape changes ---------------------------------------------------------------------
    def _restride_(self, view, node_name):
        """Make this tensor `view` (a view of itself) in place, as PyTorch's squeeze_/t_/... do."""
        self._check_inplace()
        self._data = view._data
        if view.grad_fn is not None:
            self.grad_fn, self._output_nr, self._requires_grad = _renamed(view.grad_fn, node_name), 0, True
        self._version[0] += 1
        self._view_version = self._version[0]
        return self

    def squeeze_(self, dim=None):
        """`squeeze` in place (changes this tensor's shape)."""
        name = "SqueezeBackward3" if dim is None else ("SqueezeBackward4" if isinstance(dim, int) else "SqueezeBackward5")
        return self._restride_(V.Squeeze.apply(self, dim), name)

    def unsqueeze_(self, dim):
        """`unsqueeze` in place (changes this tensor's shape)."""
        return self._restride_(V.Unsqueeze.apply(self, dim), "UnsqueezeBackward1")

    def t_(self):
        """`t` in place (transposes a matrix; 0-d and 1-d tensors are unchanged)."""
        if self.ndim > 2:
            raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
        view = V.T.apply(self, 0, 1) if self.ndim == 2 else V.AliasView.apply(self)
        return self._restride_(view, "TBackward1")

    def transpose_(self, dim0, dim1):
        """`transpose` in place (swaps two dims of this tensor)."""
        return self._restride_(V.Transpose.apply(self, dim0, dim1), "TransposeBackward1")

    swapdims_ = swapaxes_ = transpose_

    # ---- index updates ------------------------------------------------------------------------------
    def index_add(self, dim, index, source, *, alpha=1):
        """A copy with `alpha * source` added at positions `index` along `dim`, like `torch.index_add`."""
        return IU.IndexAdd.apply(self, dim, index, source, alpha)

    def index_add_(self, dim, index, source, *, alpha=1):
        """`index_add` in place."""
        return self._inplace(IU.IndexAdd.apply, dim, index, source, alpha)

    def index_copy(self, dim, index, source):
        """A copy with the slices at `index` along `dim` replaced by `source`, like `torch.index_copy`."""
        return IU.IndexCopy.apply(self, dim, index, source)

    def index_copy_(self, dim, index, source):
        """`index_copy` in place."""
        return self._inplace(IU.IndexCopy.apply, dim, index, source)

    def index_fill(self, dim, index, value):
        """A copy with the slices at `index` along `dim` set to `value`, like `torch.index_fill`."""
        return IU.IndexFill.apply(self, dim, index, value)

    def index_fill_(self, dim, index, value):
        """`index_fill` in place."""
        return self._inplace(IU.IndexFill.apply, dim, index, value)

    def masked_scatter(self, mask, source):
        """A copy with the True positions of `mask` filled, in order, from `source`, like `torch.masked_scatter`."""
        return IU.MaskedScatter.apply(self, mask, source)

    def masked_scatter_(self, mask, source):
        """`masked_scatter` in place (`mask` must broadcast to this tensor's shape)."""
        mask.expand(self.shape)  # PyTorch's error when the mask does not broadcast to self
        return self._inplace(IU.MaskedScatter.apply, mask, source)

    def put(self, index, source, accumulate=False):
        """A copy with `source` written (or added) at flat positions `index`, like `torch.put`."""
        return IU.Put.apply(self, index, source, accumulate)

    def put_(self, index, source, accumulate=False):
        """`put` in place."""
        return self._inplace(IU.Put.apply, index, source, accumulate)

    def index_put(self, indices, values, accumulate=False):
        """A copy with `self[indices] = values` (or `+=`), like `torch.index_put`."""
        nidx, _ = IX.normalize_index(tuple(indices), TensorBase)
        return IU.IndexPut.apply(self, as_tensor_like(values, self), nidx, accumulate)

    def index_put_(self, indices, values, accumulate=False):
        """`self[indices] = values` (or `+=` with accumulate) in place, like `torch.Tensor.index_put_`."""
        return self._inplace(lambda t, v: t.index_put(indices, v, accumulate), as_tensor_like(values, self))

    def scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
        """Reduce `src` into a copy of self at `index` along `dim` ('sum', 'prod', 'mean', 'amax', 'amin')."""
        return GS.ScatterReduce.apply(self, dim, index, src, reduce, include_self)

    def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
        """`scatter_reduce` in place."""
        return self._inplace(GS.ScatterReduce.apply, dim, index, src, reduce, include_self)
