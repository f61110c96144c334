"""Tensor methods about storage: `new_*` tensors like this one, `type_as`, `pin_memory`/`share_memory_`,
`apply_`/`map_` with Python callables, `resize_` (like torch)."""
from __future__ import annotations

import math
import warnings
import weakref

import numpy as np

from .. import _shared, cuda
from ..autograd.sum_to_shape import sum_to_shape
from ..factories import empty, full, ones, tensor, zeros
from ..shapes import shape_from_args
from ..tensor_base import TensorBase, _wrap

METHOD_FUNCTIONS: tuple[str, ...] = ("is_complex", "resize_as_")
__all__: list[str] = []


_PINNED = {}  # id -> weakref of the storage roots marked by pin_memory()
_SHARED = {}  # id -> weakref of the storage roots marked by share_memory_()


def _root(t):
    return t if t._base is None else t._base


def _mark(table, t):
    root = _root(t)
    key = id(root)
    table[key] = weakref.ref(root, lambda _, key=key: table.pop(key, None))


def _is_marked(table, t):
    root = _root(t)
    ref = table.get(id(root))
    return ref is not None and ref() is root
class StorageMethods:
    """New tensors, memory placement and resizing."""

    __slots__ = ()

    # ---- new tensors like this one ------------------------------------------------------------------
    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
        """Zeros of shape `size` with this tensor's dtype and device (unless given)."""
        return zeros(shape_from_args(size), dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
        """Ones of shape `size` with this tensor's dtype and device (unless given)."""
        return ones(shape_from_args(size), dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
        """An uninitialised (here zero-filled) tensor with this tensor's dtype and device (unless given)."""
        return empty(shape_from_args(size), dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None,
                 pin_memory=False):
        """A tensor of shape `size` filled with `fill_value`, with this tensor's dtype and device (unless given)."""
        return full(tuple(size) if not isinstance(size, int) else (size,), fill_value, dtype=dtype or self.dtype,
                    device=device or self.device, requires_grad=requires_grad)

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
        """A copy of `data` with this tensor's dtype and device (unless given), like `Tensor.new_tensor`."""
        if isinstance(data, TensorBase):
            warnings.warn(
                "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                "sourceTensor.detach().clone().requires_grad_(True), rather than tensor.new_tensor(sourceTensor).",
                UserWarning, stacklevel=2)
            return tensor(data.detach().to(dtype or data.dtype), device=device or data.device,
                          requires_grad=requires_grad)
        return tensor(data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)

    def type_as(self, other):
        """This tensor converted to `other`'s dtype (and device), like `Tensor.type_as`."""
        return self.to(dtype=other.dtype, device=other.device)

    def ndimension(self) -> int:
        """Number of dimensions (same as `dim()`)."""
        return self.ndim

    def is_complex(self) -> bool:
        """False: complex dtypes are not supported."""
        return False

    def sum_to_size(self, *size):
        """Sum this tensor down to `size` (which must broadcast to this tensor's shape), like `Tensor.sum_to_size`."""
        size = shape_from_args(size)
        shape = self._data.shape
        lead = len(shape) - len(size)
        if lead < 0 or any(s != 1 and s != shape[lead + i] for i, s in enumerate(size)):
            raise RuntimeError(f"size {{[{', '.join(map(str, size))}]}} is not expandable to size "
                               f"{{[{', '.join(map(str, shape))}]}}.")

        return sum_to_shape(self, size)

    # ---- memory placement (CPU semantics of PyTorch) ------------------------------------------------
    def pin_memory(self, device=None):
        """A copy in page-locked host memory (needs a GPU, as in PyTorch; here a plain copy marked pinned)."""
        if self.device.type != "cpu":
            raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
        if not cuda.is_available():
            raise RuntimeError("Cannot access accelerator device when none is available. "
                               "Hint: pinned memory only speeds up copies to a GPU; without one, skip pin_memory().")
        if self.is_pinned():
            return self
        out = self.clone()
        _mark(_PINNED, out)
        return out

    def is_pinned(self, device=None) -> bool:
        """True for tensors returned by `pin_memory()` (and views of them)."""
        return _is_marked(_PINNED, self)

    def share_memory_(self):
        """Move the storage into shared memory, so processes started with `tc.multiprocessing` that receive
        this tensor read and write the same numbers (as `Tensor.share_memory_`); returns self. CUDA tensors
        are only marked, as in PyTorch. On a view, the tensor it views is moved."""
        root = _root(self)
        if root._device.type == "cpu" and not _shared.is_shared(root._data):
            root._data = _shared.share_array(root._data)
        _mark(_SHARED, self)
        return self

    def is_shared(self) -> bool:
        """True when the storage is in shared memory (after `share_memory_()`, or received through a queue)."""
        return _is_marked(_SHARED, self) or _shared.is_shared(self._data)

    # ---- Python callables per element (CPU only) ----------------------------------------------------
    def apply_(self, callable):
        """Replace each element `x` by `callable(x)` in place (slow; CPU tensors only), like `Tensor.apply_`."""
        self._check_python_callable("apply_")
        return self._write_values([callable(v) for v in self._data.reshape(-1).tolist()])

    def map_(self, tensor, callable):
        """Replace each element `x` by `callable(x, y)` with `y` from `tensor` (broadcast) in place; CPU only."""
        self._check_python_callable("map_")
        other = tensor.expand(self.shape)
        values = [callable(a, b) for a, b in zip(self._data.reshape(-1).tolist(), other._data.reshape(-1).tolist())]
        return self._write_values(values)

    def _check_python_callable(self, name):
        if self.device.type != "cpu":
            raise TypeError(f"{name} is only implemented on CPU tensors")
        if self._requires_grad:
            raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() instead.")

    def _write_values(self, values):
        self._write(_wrap(np.asarray(values).astype(self._data.dtype).reshape(self._data.shape)))
        return self

    def resize_(self, *sizes, memory_format=None):
        """Change the shape in place, keeping the first elements in row-major order (new ones are zero)."""
        size = shape_from_args(sizes)
        if self._requires_grad:
            raise RuntimeError("cannot resize variables that require grad")
        if any(s < 0 for s in size):
            raise RuntimeError("numel: integer multiplication overflow")

        n = math.prod(size)
        data = self._data
        xp = self._xp
        if data.flags.c_contiguous and n <= data.size:
            self._data = data.reshape(-1)[:n].reshape(size)
        else:
            out = xp.zeros(n, dtype=data.dtype)
            k = min(n, data.size)
            out[:k] = data.reshape(-1)[:k]
            self._data = out.reshape(size)
            self._base = None
        self._version[0] += 1
        return self

    def resize_as_(self, the_template, memory_format=None):
        """`resize_` to the shape of `the_template`."""
        return self.resize_(the_template.shape)
