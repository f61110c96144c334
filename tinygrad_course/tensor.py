"""`Tensor`: one backend array (NumPy on the CPU, CuPy on a GPU) plus autograd bookkeeping.

The math lives in `tinygrad_course/ops/`; this file holds the object itself — its attributes,
conversions, autograd entry points and in-place machinery. The operator and method bindings
are in `tensor_methods.py`, printing in `_printing.py`.
"""
from __future__ import annotations

import numpy as np

from . import dtypes as _dt
from ._backend import CPU, array_module, device_of_array
from .autograd import function as _function
from .autograd.function import AccumulateGrad, add_hook
from .autograd.grad_mode import _state
from .tensor_methods import TensorMethods

_ndarray = np.ndarray
_BY_NP = _dt._BY_NP


class Size(tuple):
    """The shape of a tensor: a tuple that prints like PyTorch's `torch.Size` (`tc.Size([2, 3])`)."""

    def __repr__(self):
        return f"tc.Size([{', '.join(map(str, self))}])"

    __str__ = __repr__

    def numel(self) -> int:
        """Number of elements a tensor of this shape holds."""
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        r = tuple.__getitem__(self, item)
        return Size(r) if isinstance(item, slice) else r

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))


def _wrap(arr):
    """A new tensor around backend array `arr` (no copy, no graph)."""
    t = object.__new__(Tensor)
    if type(arr) is not _ndarray:
        if isinstance(arr, np.generic) or not hasattr(arr, "__cuda_array_interface__"):
            arr = np.asarray(arr)
        t._device = device_of_array(arr)
    else:
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


class Tensor(TensorMethods):
    """A multi-dimensional array that can record operations for automatic differentiation.

    Create tensors with `tc.tensor(data)` or the factory functions (`tc.zeros`, `tc.randn`, ...).
    `tc.Tensor(data)` also works and, as in PyTorch, gives float32 data.
    """

    __slots__ = ("_data", "dtype", "_device", "_requires_grad", "grad", "grad_fn", "_output_nr", "_version",
                 "_base", "_grad_acc", "_hooks", "_name", "_view_version", "__weakref__")
    __array_priority__ = 1000  # make `ndarray + Tensor` defer to Tensor.__radd__

    def __new__(cls, *args, **kwargs):
        from . import factories

        if len(args) == 1 and not isinstance(args[0], int):
            t = factories.tensor(args[0], dtype=kwargs.get("dtype") or _dt.get_default_dtype(), device=kwargs.get("device"))
        else:
            t = factories.empty(*args, dtype=kwargs.get("dtype") or _dt.get_default_dtype(), device=kwargs.get("device"))
        if cls is not Tensor:
            t2 = object.__new__(cls)
            for s in Tensor.__slots__[:-1]:
                setattr(t2, s, getattr(t, s))
            return t2
        return t

    def __init__(self, *args, **kwargs):
        pass

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
        from .ops._util import normalize_dim

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
        from .ops._util import normalize_dim

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
        """True when elements are laid out row-major without gaps (size-1 dims are ignored)."""
        return bool(self._data.flags.c_contiguous)

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def type(self, dtype=None):
        """The legacy type name (`'tc.FloatTensor'`), or a copy converted to `dtype`."""
        if dtype is None:
            prefix = "tc.cuda." if self._device.type == "cuda" else "tc."
            return prefix + self.dtype._tensor_type
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
        from ._printing import tensor_repr

        return tensor_repr(self)

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self.detach().cpu()._data, self._requires_grad, str(self._device)))

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

    def to(self, *args, dtype=None, device=None, non_blocking=False, copy=False):
        """Convert dtype and/or device: `t.to(tc.float64)`, `t.to("cuda")`, `t.to(other)`."""
        from ._backend import canonical_device, device as device_cls

        for a in args:
            if isinstance(a, _dt.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                dtype, device = a.dtype, a.device
            elif isinstance(a, (str, device_cls)):
                device = a
            elif a is not None:
                dtype = _dt.to_dtype(a)
        dtype = _dt.to_dtype(dtype) if dtype is not None else None
        device = canonical_device(device) if device is not None else None
        if (dtype is None or dtype is self.dtype) and (device is None or device == self._device) and not copy:
            return self
        from .ops.views import ToCopy

        return ToCopy.apply(self, dtype=dtype, device=device, copy=copy)

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
    def data(self):
        """A tensor sharing this one's storage but detached from the graph."""
        return self.detach()

    @data.setter
    def data(self, value):
        self._data = value._data
        self.dtype = value.dtype
        self._device = value._device

    @property
    def retains_grad(self) -> bool:
        """True when a non-leaf tensor keeps its `.grad` (see `retain_grad`)."""
        fn = self.grad_fn
        return bool(fn is not None and fn._retain_hooks and self._output_nr in fn._retain_hooks)

    def retain_grad(self):
        """Keep `.grad` for this non-leaf tensor during backward (leaves always keep it)."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        fn = self.grad_fn
        if fn is None:
            return
        import weakref

        if fn._retain_hooks is None:
            fn._retain_hooks = {}
        fn._retain_hooks[self._output_nr] = weakref.ref(self)

    def register_hook(self, hook):
        """Call `hook(grad)` whenever this tensor's gradient is computed; it may return a new gradient."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        fn = self.grad_fn
        if fn is None:
            return add_hook(self, "_hooks", hook)
        if fn._tensor_pre_hooks is None:
            fn._tensor_pre_hooks = {}
        holder = _HookSlot(fn._tensor_pre_hooks, self._output_nr)
        return add_hook(holder, "hooks", hook)

    def _grad_accumulator(self):
        acc = self._grad_acc() if self._grad_acc is not None else None
        if acc is None:
            import weakref

            acc = AccumulateGrad(self)
            self._grad_acc = weakref.ref(acc)
        return acc

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute gradients of this tensor w.r.t. the graph leaves and accumulate them into `.grad`."""
        from .autograd.engine import backward

        backward(self, None if gradient is None else (gradient,), retain_graph, create_graph, inputs=inputs)

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

    # ---- helpers used by the engine ---------------------------------------------------------------
    @staticmethod
    def _zeros_meta(meta):
        shape, dtype, device = meta
        return _wrap(array_module(device).zeros(shape, dtype=dtype.np_dtype))

    @staticmethod
    def _ones_meta(meta):
        shape, dtype, device = meta
        return _wrap(array_module(device).ones(shape, dtype=dtype.np_dtype))

    # ---- in-place machinery -----------------------------------------------------------------------
    def _check_inplace(self, through_view=False):
        """Raise PyTorch's error for in-place ops on leaves that require grad (outside no_grad).
        `through_view`: the write goes through an indexing view (`x[i] = v`)."""
        if _state.enabled:
            if self._requires_grad and self.grad_fn is None and through_view:
                raise RuntimeError(
                    "a view of a leaf Variable that requires grad is being used in an in-place operation. "
                    "Hint: wrap parameter updates in `with tc.no_grad():`."
                )
            if self._requires_grad and self.grad_fn is None:
                raise RuntimeError(
                    "a leaf Variable that requires grad is being used in an in-place operation. "
                    "Hint: wrap parameter updates in `with tc.no_grad():`."
                )
            base = self._base
            # a view that does not require grad while its base does is detached (`x.data`, `x.detach()`)
            if base is not None and self._requires_grad and base._requires_grad and base.grad_fn is None:
                raise RuntimeError(
                    "a view of a leaf Variable that requires grad is being used in an in-place operation."
                )

    def _inplace(self, fn, *args, **kwargs):
        """Run out-of-place `fn(self, ...)` and write the result into this tensor's storage."""
        self._check_inplace()
        others_need_grad = any(getattr(a, "_requires_grad", False) for a in args)
        record = _state.enabled and (self._requires_grad or others_need_grad)
        if record:
            base = self._base
            if base is not None and (self._requires_grad or not base._requires_grad):  # not a detached view
                return self._inplace_on_view(fn, args, kwargs)
            old = _wrap(self._data.copy())
            old._requires_grad, old.grad_fn, old._output_nr = self._requires_grad, self.grad_fn, self._output_nr
            result = fn(old, *args, **kwargs)
        else:
            result = fn(self, *args, **kwargs)
        self._write(result)
        if record and result.grad_fn is not None:
            self.grad_fn, self._output_nr, self._requires_grad = result.grad_fn, result._output_nr, True
        return self

    def _inplace_on_view(self, fn, args, kwargs):
        """In-place op on a view whose base is in the graph: the base gets the new history
        (`CopySlices`, as in PyTorch) and this view is re-derived from it."""
        base = self._base
        idx = _positions_in_base(self, base)
        if idx is None:
            raise RuntimeError(
                "In-place operations on this view of a tensor that requires grad are not supported. "
                "Hint: compute a new tensor instead (e.g. with tc.where or tc.cat) rather than modifying a slice."
            )
        from .ops.indexing import AdvancedGetItem, AsStridedView, CopySlices

        old = _wrap(base._data.copy())
        old._requires_grad, old.grad_fn, old._output_nr = base._requires_grad, base.grad_fn, base._output_nr
        result = fn(AdvancedGetItem.apply(old, idx, False), *args, **kwargs)
        if result.dtype is not self.dtype:
            if not _dt.can_cast(result.dtype, self.dtype):
                self._write(result)  # raises PyTorch's casting error
            result = result.to(self.dtype)
        new_base = CopySlices.apply(old, result, idx, False)
        base._write(new_base)
        base.grad_fn, base._output_nr, base._requires_grad = new_base.grad_fn, 0, True
        view = AsStridedView.apply(new_base, idx, False)
        self.grad_fn, self._output_nr, self._requires_grad = view.grad_fn, 0, True
        self._view_version = self._version[0]
        return self

    def _refresh_view_history(self):
        """Give a view whose base was modified in place since the view was made (`a = y[0]; y.mul_(2)`)
        a grad_fn that reads it from the base's current history, as PyTorch regenerates it."""
        base = self._base
        self._view_version = self._version[0]
        if self.grad_fn is None or base.grad_fn is None:
            return  # detached views (leaves of their own), and views of leaves (whose history cannot change)
        idx = _positions_in_base(self, base)
        if idx is not None:
            from .ops.indexing import AsStridedView

            view = AsStridedView.apply(base, idx, False)
            self.grad_fn, self._output_nr = view.grad_fn, 0

    def _write(self, result):
        """Copy `result`'s values into this tensor's storage (dtype rules and shape checks as in PyTorch)."""
        from .ops._util import type_name

        if result.dtype is not self.dtype and not _dt.can_cast(result.dtype, self.dtype):
            raise RuntimeError(
                f"result type {type_name(result.dtype)} can't be cast to the desired output type {type_name(self.dtype)}"
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


class _HookSlot:
    """Adapter so a node's per-output hook dict can be created by `add_hook`."""

    def __init__(self, table, nr):
        self.table, self.nr = table, nr

    @property
    def hooks(self):
        return self.table.get(self.nr)

    @hooks.setter
    def hooks(self, value):
        self.table[self.nr] = value


def _positions_in_base(view, base):
    """Index (a tuple of integer arrays) of the view's elements inside its base, or None when the
    base's layout is not row-major."""
    b = base._data
    if not b.flags.c_contiguous or view._data.size == 0:
        return None
    xp = base._xp
    item = b.itemsize
    offset = (_address(view._data) - _address(b)) // item
    flat = xp.arange(b.size, dtype=np.int64)[offset:]
    strides = tuple(s // item * flat.itemsize for s in view._data.strides)
    pos = xp.lib.stride_tricks.as_strided(flat, shape=view._data.shape, strides=strides).copy()
    return xp.unravel_index(pos, b.shape)


def _address(arr):
    if isinstance(arr, np.ndarray):
        return arr.__array_interface__["data"][0]
    return arr.data.ptr


def _rebuild(data, requires_grad, device):
    t = _wrap(data)
    if device != "cpu":
        t = t.to(device)
    t._requires_grad = requires_grad
    return t


_function._Tensor = Tensor
_function._wrap = _wrap
