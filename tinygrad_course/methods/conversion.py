"""Conversions as Tensor methods: `to` (dtype and/or device), `cpu`, `cuda`, `float`, `long`, ..."""
from __future__ import annotations

from .. import dtypes as _dt
from .._backend import canonical_device
from .._backend import device as device_cls
from ..ops.sparse_coo import to_sparse as _to_sparse
from ..ops.views import ToCopy
from ..tensor_base import TensorBase


class ConversionMethods:
    """Copies of a tensor in another dtype or on another device."""

    __slots__ = ()

    def to(self, *args, dtype=None, device=None, non_blocking=False, copy=False):
        """Convert dtype and/or device: `t.to(tc.float64)`, `t.to("cuda")`, `t.to(other)`."""
        for a in args:
            if isinstance(a, _dt.dtype):
                dtype = a
            elif isinstance(a, TensorBase):
                dtype, device = a.dtype, a.device
            elif isinstance(a, (str, device_cls)):
                device = a
            elif a is not None:
                dtype = _dt.to_dtype(a)
        dtype = _dt.to_dtype(dtype) if dtype is not None else None
        device = canonical_device(device) if device is not None else None
        if (dtype is None or dtype is self.dtype) and (device is None or device == self._device) and not copy:
            return self
        return ToCopy.apply(self, dtype=dtype, device=device, copy=copy)

    def to_sparse(self, sparse_dim=None, *, layout=None):
        """The nonzero entries as a sparse COO tensor, like `Tensor.to_sparse`."""
        return _to_sparse(self, sparse_dim, layout=layout)

    def to_dense(self, dtype=None, *, masked_grad=None):
        """A dense tensor is already dense: itself (converted to `dtype` if given)."""
        return self if dtype is None else self.to(dtype)

    def cpu(self):
        """A copy on the CPU (or this tensor if it is already there)."""
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False):
        """A copy on the GPU (`cuda:0` unless `device` says otherwise)."""
        return self.to("cuda" if device is None else (device if not isinstance(device, int) else f"cuda:{device}"))

    def float(self):
        return self.to(_dt.float32)

    def double(self):
        return self.to(_dt.float64)

    def half(self):
        return self.to(_dt.float16)

    def bfloat16(self):
        return self.to(_dt.bfloat16)

    def long(self):
        return self.to(_dt.int64)

    def int(self):
        return self.to(_dt.int32)

    def short(self):
        return self.to(_dt.int16)

    def char(self):
        return self.to(_dt.int8)

    def byte(self):
        return self.to(_dt.uint8)

    def bool(self):
        return self.to(_dt.bool_)
