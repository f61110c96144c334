"""The legacy typed-tensor constructors `tc.FloatTensor`, `tc.LongTensor`, ... (PyTorch's `torch.FloatTensor`).

`FloatTensor([1, 2])` is a float32 tensor holding the data, `FloatTensor(2, 3)` (or a `Size`) an uninitialised
one of that shape, `FloatTensor()` an empty one; `isinstance(t, tc.FloatTensor)` is True for float32 CPU
tensors, and `t.type(tc.LongTensor)` converts."""
from __future__ import annotations

import warnings

from .. import dtypes as _dt
from .._backend import set_default_device
from .._namespace import namespace
from ..factories import empty, tensor
from ..shapes import Size
from ..tensor_base import TensorBase

METHOD_FUNCTIONS: tuple[str, ...] = ()
__all__ = [d._tensor_type for d in _dt.ALL_DTYPES] + ["set_default_tensor_type"]


class _LegacyTensorType(type):
    """Metaclass: instances are the tensors of one dtype on the CPU; calling it builds one."""

    def __instancecheck__(cls, other):
        return (isinstance(other, TensorBase) and other.dtype is cls.dtype
                and other.device.type == ("cuda" if cls.is_cuda else "cpu"))

    def __call__(cls, *args, device=None):
        dtype = cls.dtype
        device = device if device is not None or not cls.is_cuda else "cuda"
        if not args:
            return empty(0, dtype=dtype, device=device)
        if len(args) == 1 and isinstance(args[0], TensorBase):
            if args[0].dtype is not dtype:
                raise TypeError(f"expected {dtype} (got {args[0].dtype}) for tc.{cls.__name__}(tensor); "
                                f"convert it with tensor.to({dtype}) or tensor.type(tc.{cls.__name__}).")
            return args[0].detach()
        if len(args) == 1 and isinstance(args[0], Size):
            return empty(tuple(args[0]), dtype=dtype, device=device)
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            return empty(args, dtype=dtype, device=device)
        if len(args) == 1 and not isinstance(args[0], (str, bytes, dict, set)):
            return tensor(args[0], dtype=dtype, device=device)
        raise TypeError(f"new(): invalid data type '{type(args[-1]).__name__}'")

    def __repr__(cls):
        return f"<class '{namespace()}.{'cuda.' if cls.is_cuda else ''}{cls.__name__}'>"


def _make(d, cuda=False):
    where = "CUDA" if cuda else "CPU"
    return _LegacyTensorType(d._tensor_type, (), {"dtype": d, "is_cuda": cuda, "__module__": "tinygrad_course",
                                                   "__doc__": f"Legacy constructor of {d} {where} tensors."})


for _d in _dt.ALL_DTYPES:
    globals()[_d._tensor_type] = _make(_d)
# tc.cuda.FloatTensor, ... (reached through tc.cuda's module __getattr__)
CUDA_TYPES = {d._tensor_type: _make(d, cuda=True) for d in _dt.ALL_DTYPES}


def set_default_tensor_type(t) -> None:
    """`torch.set_default_tensor_type(tc.DoubleTensor)` (or `'torch.DoubleTensor'`, `'torch.cuda.FloatTensor'`):
    sets the default floating dtype, and the default device for a CUDA type; deprecated as in PyTorch."""
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.", UserWarning, stacklevel=2)
    if isinstance(t, str):
        ns, _, name = t.partition(".")
        cuda = name.startswith("cuda.")
        found = (CUDA_TYPES if cuda else globals()).get(name[5:] if cuda else name)
        if ns not in ("torch", "tc", "tinygrad_course") or not isinstance(found, _LegacyTensorType):
            raise AttributeError(f"module '{ns}' has no attribute '{name}'")
        t = found
    if not isinstance(t, _LegacyTensorType):
        raise TypeError("invalid type object: only floating-point types are supported as the default type")
    _dt.set_default_dtype(t.dtype)
    set_default_device("cuda" if t.is_cuda else None)


class LegacyMethods:
    """`Tensor.new`, the legacy constructor of a tensor with this tensor's dtype and device."""

    __slots__ = ()

    def new(self, *args, **kwargs):
        """`x.new(2, 3)` (uninitialised), `x.new([1, 2])` (data), `x.new()` (empty): a tensor with `x`'s dtype
        and device, like PyTorch's legacy `Tensor.new`."""
        cls = (CUDA_TYPES[self.dtype._tensor_type] if self.device.type == "cuda"
               else globals()[self.dtype._tensor_type])
        return cls(*args, device=kwargs.get("device", self.device))
