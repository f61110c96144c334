"""`TensorBase`: one backend array (NumPy on the CPU, CuPy on a GPU) plus the fields autograd fills in.

This is the bottom of the framework (chapter 01): the object itself -- its storage, shape, strides,
dtype and device, conversion to Python and NumPy, printing. It imports no math. `tensor.py` defines
`Tensor`, the class every tensor is, as a subclass of this one (as PyTorch's `torch.Tensor` subclasses
its C base `torch._C.TensorBase`), with the operators and methods in its body and in the method families
it lists as bases; the layers in between (ops, autograd) only need this base to read and make tensors.
"""
from __future__ import annotations

import numpy as np

from . import dtypes as _dt
from . import seams
from ._backend import CPU, array_module, device_of_array
from ._namespace import namespace as _namespace
from ._printing import tensor_repr
from .shapes import Size, contiguous_strides, normalize_dim

_ndarray = np.ndarray
_BY_NP = _dt._BY_NP


def _wrap(arr):
    """A new tensor around backend array `arr` (no copy, no graph)."""
    t = object.__new__(_tensor_class)
    if type(arr) is not _ndarray and hasattr(arr, "__cuda_array_interface__") and not isinstance(arr, np.generic):
        t._device = device_of_array(arr)  # a CuPy array
    else:
        if type(arr) is not _ndarray:
            arr = np.asarray(arr)  # a NumPy scalar (what full reductions give) or anything array-like
        t._device = CPU
    t._data = arr
    t.dtype = _BY_NP[arr.dtype]
    t._requires_grad = False
    t.grad = None
    t.grad_fn = None
    t._output_nr = 0
    t._version = [0]
    t._base = None
    t._grad_acc = None
    t._view_version = 0  # for views: the version of the shared storage when the view's grad_fn was made
    t._hooks = None
    t._name = None
    return t


class TensorBase:
    """The storage, shape, dtype, device and autograd fields of a tensor (`torch._C.TensorBase`'s part).

    Every tensor is a `tinygrad_course.tensor.Tensor`, this class's subclass with the operators and methods.
    """

    __slots__ = ("_data", "dtype", "_device", "_requires_grad", "grad", "grad_fn", "_output_nr", "_version",
                 "_base", "_grad_acc", "_hooks", "_name", "_view_version", "__weakref__")
    __array_priority__ = 1000  # make `ndarray + Tensor` defer to Tensor.__radd__

    # ---- basic attributes -------------------------------------------------------------------------
    @property
    def _xp(self):
        return np if self._device is CPU else array_module(self._device)

    @property
    def shape(self) -> Size:
        """The tensor's size, as a `tc.Size`."""
        return Size(self._data.shape)

    def size(self, dim=None):
        """The shape (`tc.Size`), or the size of one dimension."""
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[normalize_dim(dim, self.ndim)] if self.ndim else 1

    @property
    def device(self):
        """The device the data lives on (`device(type='cpu')` or `device(type='cuda', index=0)`)."""
        return self._device

    @property
    def is_cpu(self) -> bool:
        """True if the tensor lives in host memory."""
        return self._device.type == "cpu"

    @property
    def is_cuda(self) -> bool:
        return self._device.type == "cuda"

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return self._data.ndim

    def dim(self) -> int:
        """Number of dimensions (same as `ndim`)."""
        return self._data.ndim

    def numel(self) -> int:
        """Number of elements."""
        return int(self._data.size)

    nelement = numel

    def element_size(self) -> int:
        """Bytes per element."""
        return self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return int(self._data.size) * self.dtype.itemsize

    def stride(self, dim=None):
        """Steps, in elements, between neighbours along each dimension (PyTorch's `stride()`)."""
        item = self.dtype.itemsize
        strides = [s // item for s in self._data.strides]
        shape = self._data.shape
        # NumPy gives a dim inserted by `None` stride 0; PyTorch gives it size * stride of the next dim.
        for d in range(len(strides) - 1, -1, -1):
            if shape[d] == 1 and strides[d] == 0:
                strides[d] = shape[d + 1] * strides[d + 1] if d + 1 < len(strides) else 1
        strides = tuple(strides)
        if dim is None:
            return strides
        return strides[normalize_dim(dim, self.ndim)]

    def storage_offset(self) -> int:
        """Index of this view's first element within the storage it shares with its base."""
        if self._base is None or self._data.size == 0:
            return 0
        return (_address(self._data) - _address(self._base._data)) // self.dtype.itemsize

    def untyped_storage_size(self) -> int:
        """Number of elements in the underlying storage (the base tensor's)."""
        return (self._base or self)._data.size

    def data_ptr(self) -> int:
        """Address of the first element."""
        return _address(self._data)

    def _is_view(self) -> bool:
        """True when this tensor is a view of another one (`_base`), like PyTorch's `Tensor._is_view()`."""
        return self._base is not None

    def is_contiguous(self, memory_format=None) -> bool:
        """True when elements are laid out row-major without gaps (size-1 dims are ignored), i.e. the strides
        are those of `shapes.contiguous_strides` wherever a dim has more than one element."""
        shape = self._data.shape
        if self._data.size == 0:
            return True
        return all(s == c for s, c, n in zip(self.stride(), contiguous_strides(shape), shape) if n != 1)

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def type(self, dtype=None, non_blocking=False, **kwargs):
        """The legacy type name (`'tc.FloatTensor'`), or a copy converted to `dtype`: a dtype, a legacy
        type (`tc.LongTensor`) or its name (`'torch.LongTensor'`, `'tc.cuda.FloatTensor'`)."""
        if dtype is None:
            prefix = "cuda." if self._device.type == "cuda" else ""
            return _namespace() + "." + prefix + self.dtype._tensor_type
        if isinstance(dtype, str):
            ns, _, name = dtype.partition(".")
            on_cuda = name.startswith("cuda.")
            name = name[5:] if on_cuda else name
            found = [d for d in _dt.ALL_DTYPES if d._tensor_type == name]
            if ns not in ("torch", "tc", "tinygrad_course") or not found:
                raise ValueError(f"invalid type: '{dtype}'")
            return self.to(found[0], device="cuda" if on_cuda else "cpu")
        if isinstance(getattr(dtype, "dtype", None), _dt.dtype):  # a legacy type such as tc.LongTensor
            return self.to(dtype.dtype, device="cuda" if dtype.is_cuda else "cpu")
        return self.to(dtype)

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self):
        return id(self)

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with more than one value is ambiguous"
                if self._data.size else "Boolean value of Tensor with no values is ambiguous"
            )
        return bool(self._data.reshape(()))

    def __index__(self):
        if self.dtype.category == 2 or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._data.reshape(()))

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __format__(self, spec):
        if self.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __repr__(self):
        return tensor_repr(self)

    def __str__(self):
        return self.__repr__()  # print(x) prints what repr(x) gives, whoever wrote __repr__ (chapter 01b)

    def __array__(self, dtype=None, copy=None):
        if self._requires_grad:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
            )
        a = self.cpu()._data
        return a if dtype is None else a.astype(dtype)

    # ---- conversion -----------------------------------------------------------------------------
    def item(self):
        """The value of a one-element tensor as a Python number."""
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar. "
                "Hint: reduce it first (e.g. .sum() or .mean()), or index one element."
            )
        v = self._data.reshape(()).item() if self._device is CPU else self.cpu()._data.reshape(()).item()
        return float(v) if self.dtype in (_dt.bfloat16, _dt.float16) else v

    def tolist(self):
        """The data as (nested) Python lists of numbers."""
        data = self.cpu()._data
        if self.dtype in (_dt.bfloat16, _dt.float16):
            data = data.astype(np.float32)
        return data.tolist()

    def numpy(self, *, force=False):
        """The data as a NumPy array sharing memory (CPU tensors that do not require grad)."""
        if force:
            return self.detach().cpu()._data.copy()
        if self._requires_grad:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
            )
        if self._device.type != "cpu":
            raise TypeError(
                f"can't convert {self._device} device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
                "to host memory first."
            )
        return self._data

    # ---- autograd ---------------------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        """Whether operations on this tensor are recorded for autograd."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        """Set `requires_grad` in place (leaves only); returns self."""
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                    "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
                )
            return self
        if requires_grad and not self.dtype.is_floating_point:
            raise RuntimeError(
                "only Tensors of floating point dtype can require gradients. "
                "Hint: create it with dtype=tc.float32 (e.g. tc.tensor([1., 2.]))."
            )
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        """True for tensors not created by a recorded operation (their `.grad` gets filled)."""
        return self.grad_fn is None

    @property
    def output_nr(self) -> int:
        """Which output of its `grad_fn` this tensor is (0 for a single-output op and for leaves), as in PyTorch:
        the graph edge to it is `(t.grad_fn, t.output_nr)`."""
        return self._output_nr

    @property
    def data(self):
        """A tensor sharing this one's storage but detached from the graph."""
        return self.detach()

    @data.setter
    def data(self, value):
        self._data = value._data
        self.dtype = value.dtype
        self._device = value._device

    def detach(self):
        """A tensor sharing this one's data, cut from the graph (`requires_grad=False`)."""
        t = _wrap(self._data)
        t._version = self._version
        t._view_version = self._version[0]
        t._base = self if self._base is None else self._base
        return t

    def detach_(self):
        """Cut this tensor from the graph in place."""
        self.grad_fn = None
        self._requires_grad = False
        return self

    @staticmethod
    def _make_subclass(cls, data, require_grad=False):
        """A leaf tensor of class `cls` (a subclass of Tensor) over `data`'s storage, like PyTorch's
        `torch.Tensor._make_subclass(cls, data, require_grad=False)`: no copy, the version counter shared (an
        in-place change of either shows in both), cut from `data`'s graph, requiring grad when `require_grad`.
        `nn.Parameter(data)` is made this way."""
        if not isinstance(cls, type):
            raise TypeError(f"cls must be a type (got {type(cls).__name__})")
        if not issubclass(cls, _tensor_class):
            raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not "
                            "possible. Make sure your class inherits from Tensor.")
        if not isinstance(data, TensorBase):
            raise TypeError(f"_make_subclass(): argument 'data' (position 2) must be Tensor, not {type(data).__name__}"
                            ". Hint: make a tensor first, e.g. tc.tensor(values).")
        if require_grad and not data.dtype.is_floating_point:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients. "
                               "Hint: make the data a float tensor first (data.float()).")
        t = object.__new__(cls)
        t._data, t.dtype, t._device, t._name = data._data, data.dtype, data._device, data._name
        t._version, t._view_version = data._version, data._version[0]  # one counter: in-place changes show in both
        t._requires_grad, t.grad, t.grad_fn, t._output_nr = bool(require_grad), None, None, 0
        t._base = t._grad_acc = t._hooks = None  # a leaf of its own, not a view
        return t

    # ---- helpers used by the engine ---------------------------------------------------------------
    @staticmethod
    def _zeros_meta(meta):
        shape, dtype, device = meta
        return _wrap(array_module(device).zeros(shape, dtype=dtype.np_dtype))

    @staticmethod
    def _ones_meta(meta):
        shape, dtype, device = meta
        return _wrap(array_module(device).ones(shape, dtype=dtype.np_dtype))

    def _write(self, result):
        """Copy `result`'s values into this tensor's storage (dtype rules and shape checks as in PyTorch)."""
        if result.dtype is not self.dtype and not _dt.can_cast(result.dtype, self.dtype):
            raise RuntimeError(
                f"result type {_dt.type_name(result.dtype)} can't be cast to the desired output type {_dt.type_name(self.dtype)}"
            )
        if result._data.shape != self._data.shape:
            raise RuntimeError(
                f"output with shape [{', '.join(map(str, self._data.shape))}] doesn't match the broadcast shape "
                f"[{', '.join(map(str, result._data.shape))}]"
            )
        if not self._data.flags.writeable:
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to tensor refers to a single memory "
                "location. Please clone() the tensor before performing the operation."
            )
        self._xp.copyto(self._data, result._data, casting="unsafe")
        self._version[0] += 1


def _address(arr):
    if isinstance(arr, np.ndarray):
        return arr.__array_interface__["data"][0]
    return arr.data.ptr


_tensor_class = TensorBase  # the class `_wrap` makes: `tensor.Tensor` once it is defined (it registers itself)


def register_tensor_class(cls):
    """Make `cls` (`tensor.Tensor`) the class of every tensor `_wrap` creates; called once, where it is defined."""
    global _tensor_class
    _tensor_class = cls



# chapter 01b: the methods a learner writes (the classes ShapeMethods, StrideMethods, ValueMethods,
# AutogradFields and TensorPrinting); build mode sets TensorBase's attribute to the learner's while it is installed
# (`seams.offer_methods`), so these calls cost nothing extra here.
BASE_METHODS = ("shape", "ndim", "dim", "numel", "size", "__len__",  # 01b.1
                "stride", "is_contiguous",  # 01b.2
                "__bool__", "item", "tolist", "numpy",  # 01b.3
                "requires_grad", "requires_grad_", "is_leaf", "detach",  # 01b.4
                "__repr__")  # 01b.5
seams.offer_methods(TensorBase, BASE_METHODS, "Tensor.")
# chapter 03b: the learner's `_make_subclass` (exercise 03b.1), how every nn.Parameter is made; a slot, so nothing
# extra runs while none is installed
seams.offer_methods(TensorBase, ("_make_subclass",), "Tensor.")
