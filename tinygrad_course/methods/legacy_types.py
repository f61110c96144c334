"""The legacy typed-tensor constructors `tc.FloatTensor`, `tc.LongTensor`, ... (PyTorch's `torch.FloatTensor`).

`FloatTensor([1, 2])` is a float32 tensor holding the data, `FloatTensor(2, 3)` (or a `Size`) an uninitialised
one of that shape, `FloatTensor()` an empty one; `isinstance(t, tc.FloatTensor)` is True for float32 CPU
tensors, and `t.type(tc.LongTensor)` converts."""
from __future__ import annotations

from .. import dtypes as _dt
from .._namespace import namespace
from ..factories import empty, tensor
from ..shapes import Size
from ..tensor import Tensor

METHOD_FUNCTIONS: tuple[str, ...] = ()
__all__ = [d._tensor_type for d in _dt.ALL_DTYPES]


class _LegacyTensorType(type):
    """Metaclass: instances are the tensors of one dtype on the CPU; calling it builds one."""

    def __instancecheck__(cls, other):
        return (isinstance(other, Tensor) and other.dtype is cls.dtype
                and other.device.type == ("cuda" if cls.is_cuda else "cpu"))

    def __call__(cls, *args, device=None):
        dtype = cls.dtype
        device = device if device is not None or not cls.is_cuda else "cuda"
        if not args:
            return empty(0, dtype=dtype, device=device)
        if len(args) == 1 and isinstance(args[0], Tensor):
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
