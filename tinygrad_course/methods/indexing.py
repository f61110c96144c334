"""Indexing as Tensor methods: `t[i]`, `t[mask] = v`, `gather`, `scatter`, `index_select`, `masked_fill`,
`tril`/`triu` (ops in `ops/movement.py`)."""
from __future__ import annotations

from ..ops import gather_scatter as GS
from ..ops import indexing as IX
from ..ops._util import operand as _operand
from ..tensor_base import TensorBase
from .numpy_names import numpy_arg_names


@numpy_arg_names
class IndexingMethods:
    """Reading and writing selected elements."""

    __slots__ = ()

    def gather(self, dim, index):
        """out[i][j] = self[index[i][j]][j] (for dim=0), etc."""
        return GS.Gather.apply(self, dim, index)

    def scatter(self, dim, index, src=None, *, value=None, reduce=None):
        """A copy of self with `src` (or `value`) written at `index` along `dim`."""
        src = value if src is None else src
        if reduce not in (None, "add"):
            raise NotImplementedError("scatter supports reduce=None or 'add'")
        return GS.Scatter.apply(self, dim, index, src, reduce)

    def scatter_add(self, dim, index, src):
        """A copy of self with `src` added at `index` along `dim` (repeated indices accumulate)."""
        return GS.ScatterAdd.apply(self, dim, index, src, "add")

    def index_select(self, dim, index):
        return IX.IndexSelect.apply(self, dim, index)

    def masked_fill(self, mask, value):
        """A copy with `value` where `mask` is True."""
        return IX.MaskedFill.apply(self, mask, value)

    def tril(self, diagonal=0):
        return IX.Triangle.apply(self, diagonal, False)

    def triu(self, diagonal=0):
        return IX.Triu.apply(self, diagonal, True)

    def __getitem__(self, idx):
        if type(idx) is int:
            return IX.SelectItem.apply(self, (idx,), True)
        nidx, basic = IX.normalize_index(idx, TensorBase)
        if basic:
            return IX.basic_item_op(nidx, self._data.shape).apply(self, nidx, True)
        return IX.AdvancedGetItem.apply(self, nidx, False)

    def __setitem__(self, idx, value):
        nidx, basic = IX.normalize_index(idx, TensorBase)
        value = _operand(value) if not isinstance(value, TensorBase) else value
        if value is None:
            raise TypeError("can't assign a value of this type to a tensor")
        if isinstance(value, TensorBase) and value._data.size and value.dtype is not self.dtype:
            value = value.to(self.dtype)
        if basic:
            IX._check_bounds(self._data.shape, nidx)
        else:
            IX.check_index_arrays(self._data, nidx)
        self._check_inplace(through_view=True)
        self._inplace(IX.CopySlices.apply, value, nidx, basic)
