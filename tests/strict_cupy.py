"""A strict CuPy stand-in for machines without a GPU: CuPy's API and its rules, computed by NumPy.

The GPU test suite runs against it on every machine (`pytest --strict-cupy`, part of `make test`), so
that host-only code cannot hide in the cuda path between the sessions that have a real GPU. It enforces
what real CuPy enforces and a NumPy-backed run would otherwise let through:

* only the names real CuPy has exist (recorded from CuPy into tests/gpu/cupy_api.json by
  scripts/record_cupy_api.py): `cupy.seterr` or any other NumPy-only call raises AttributeError;
* a device array never turns into a NumPy array implicitly: `numpy.asarray(a)` raises CuPy's TypeError;
  `.get()`, `cupy.asnumpy`, `.item()`, `.tolist()` and `float()` are the explicit ways;
* NumPy arrays never mix into device computations: a NumPy array (even 0-d) or any other array-like
  handed to a CuPy function, ufunc or operator raises CuPy's "Unsupported type" TypeError; only the converters
  (`cupy.array`, `cupy.asarray`, `ndarray.set`), indexing and `take`/`put` accept them, as in CuPy;
* NumPy functions called on device arrays dispatch to CuPy's function of the same name
  (`__array_function__`), and fail where CuPy has none;
* reductions and integer indexing give 0-d device arrays, never NumPy scalars;
* out-of-range integer index arrays wrap around silently, as in CuPy (the framework must check bounds);
* dtypes CuPy lacks (bfloat16 from ml_dtypes, object) cannot live on the device.

What it cannot check: CUDA kernels (ElementwiseKernel/RawKernel sources are recorded, compiled by
tests/gpu/test_kernels_compile.py with NVRTC, and run only on a real GPU), speed, memory, and streams.
"""
from __future__ import annotations

import functools
import json
import pathlib
import sys
import types

import numpy as np

API = json.loads((pathlib.Path(__file__).parent / "gpu" / "cupy_api.json").read_text())
_DEVICE_KINDS = set("biufc")  # bool, int, uint, float, complex: the dtype kinds CuPy supports
_CONVERTERS = {"array", "asarray", "asanyarray", "asnumpy", "get_array_module", "isscalar", "ndim", "shape",
               "size", "result_type", "can_cast", "iinfo", "finfo", "dtype"}


def _unsupported(obj):
    return TypeError(f"Unsupported type {type(obj)}")


def _check_dtype(dt):
    dt = np.dtype(dt)
    if dt.kind not in _DEVICE_KINDS:
        raise ValueError(f"Unsupported dtype {dt}")
    return dt


class ndarray:
    """A device array: a NumPy array that refuses to be used as one."""

    __slots__ = ("_a", "__weakref__")
    __array_priority__ = 100
    __hash__ = None

    def __init__(self, array):
        _check_dtype(array.dtype)
        self._a = array

    # ---- what CuPy forbids -------------------------------------------------------------------------
    def __array__(self, *args, **kwargs):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. "
                        "Please use `.get()` to construct a NumPy array explicitly.")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        cupy_ufunc = getattr(cupy, ufunc.__name__, None)
        if cupy_ufunc is None:
            return NotImplemented
        target = cupy_ufunc if method == "__call__" else getattr(cupy_ufunc, method, None)
        if target is None:
            return NotImplemented
        return target(*inputs, **kwargs)

    def __array_function__(self, func, types_, args, kwargs):
        path = func.__module__.split(".")[1:]
        if func.__name__ not in API.get(".".join(["cupy"] + path), {}):
            return NotImplemented  # NumPy then raises "no implementation found for ...", as with CuPy
        return getattr(functools.reduce(getattr, path, cupy), func.__name__)(*args, **kwargs)

    # ---- attributes --------------------------------------------------------------------------------
    @property
    def shape(self):
        return self._a.shape

    @shape.setter
    def shape(self, value):  # CuPy reshapes in place when no copy is needed, else raises AttributeError
        try:
            self._a = self._a.reshape(value, copy=False)
        except ValueError:
            raise AttributeError("incompatible shape") from None

    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    strides = property(lambda self: self._a.strides)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    flags = property(lambda self: self._a.flags)
    T = property(lambda self: ndarray(self._a.T))
    mT = property(lambda self: ndarray(self._a.mT))
    device = property(lambda self: cuda.Device(0))
    data = property(lambda self: types.SimpleNamespace(ptr=self._a.__array_interface__["data"][0]))  # MemoryPointer

    @property
    def __cuda_array_interface__(self):  # how code recognises device arrays without importing CuPy
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (0, False), "version": 3,
                "strides": None if self._a.flags.c_contiguous else self.strides}

    @property
    def base(self):
        return None if self._a.base is None else ndarray(self._a.base) if isinstance(self._a.base, np.ndarray) else None

    def __getattr__(self, name):
        if name not in API["ndarray"] or not hasattr(self._a, name):
            raise AttributeError(f"'cupy.ndarray' object has no attribute '{name}'")
        attr = getattr(self._a, name)
        if not callable(attr):
            return _wrap(attr)
        lenient = name in ("take", "put", "repeat")
        def method(*a, **k):
            _check_keywords(f"ndarray.{name}", k)
            return _wrap(attr(*_unwrap(a, lenient), **_unwrap(k, lenient)))
        return method

    def get(self, stream=None, out=None):
        """The data as a NumPy array (a copy on the host)."""
        return self._a.copy()

    def set(self, arr, stream=None):
        """Copy a NumPy array into this device array."""
        self._a[...] = arr

    def item(self):
        return self._a.item()

    def tolist(self):
        return self._a.tolist()

    # ---- Python protocols --------------------------------------------------------------------------
    def __repr__(self):
        return repr(self._a)

    def __str__(self):
        return str(self._a)

    def __format__(self, spec):
        return format(self._a, spec)

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        return (_wrap(x) for x in self._a)

    def __bool__(self):
        return bool(self._a)

    def __float__(self):
        return float(self._a)

    def __int__(self):
        return int(self._a)

    def __complex__(self):
        return complex(self._a)

    def __getitem__(self, key):
        return _wrap(self._a[_wrap_around(self._a.shape, _unwrap(key, lenient=True))])

    def __setitem__(self, key, value):
        self._a[_wrap_around(self._a.shape, _unwrap(key, lenient=True))] = _unwrap(value, lenient=True)

    def __copy__(self):
        return ndarray(self._a.copy())

    def __deepcopy__(self, memo):
        return ndarray(self._a.copy())

    def __reduce__(self):
        return ndarray, (self._a,)


def _operator(op_name, reflected=False, inplace=False):
    ufunc = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
             "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "matmul": "matmul",
             "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "left_shift",
             "rshift": "right_shift", "lt": "less", "le": "less_equal", "gt": "greater",
             "ge": "greater_equal", "eq": "equal", "ne": "not_equal"}[op_name]

    def method(self, other):
        f = getattr(cupy, ufunc)
        if inplace:
            return f(self, other, out=self)
        return f(other, self) if reflected else f(self, other)

    return method


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
              "lshift", "rshift"):
    setattr(ndarray, f"__{_name}__", _operator(_name))
    setattr(ndarray, f"__r{_name}__", _operator(_name, reflected=True))
    setattr(ndarray, f"__i{_name}__", _operator(_name, inplace=True))
for _name in ("lt", "le", "gt", "ge", "eq", "ne"):
    setattr(ndarray, f"__{_name}__", _operator(_name))
ndarray.__neg__ = lambda self: cupy.negative(self)
ndarray.__pos__ = lambda self: cupy.positive(self)
ndarray.__abs__ = lambda self: cupy.absolute(self)
ndarray.__invert__ = lambda self: cupy.invert(self)


# ---- crossing the device boundary ------------------------------------------------------------------
def _unwrap(obj, lenient=False):
    """Device arrays -> their NumPy data; NumPy arrays -> TypeError (unless `lenient`, for indices)."""
    if isinstance(obj, ndarray):
        return obj._a
    if isinstance(obj, np.ndarray):
        if lenient:
            return obj
        raise _unsupported(obj)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_unwrap(x, lenient) for x in obj)
    if isinstance(obj, dict):
        return {k: _unwrap(v, lenient) for k, v in obj.items()}
    if not lenient and hasattr(obj, "__array__") and not isinstance(obj, (np.generic, type)):
        raise _unsupported(obj)  # another array-like (a framework Tensor, say): CuPy would not take it either
    return obj


def _wrap_around(shape, key):
    """CuPy's integer-array indexing: out-of-range indices wrap around silently instead of raising."""
    key = key if isinstance(key, tuple) else (key,)
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    out, dim = [], 0
    for k in key:
        if k is Ellipsis:
            dim += len(shape) - n_real
        elif k is None:
            pass
        elif isinstance(k, np.ndarray) and k.dtype.kind == "b":
            dim += k.ndim
        else:
            if isinstance(k, (np.ndarray, list)) and dim < len(shape) and shape[dim]:
                k = np.asarray(k)
                if k.dtype.kind in "iu":
                    k = k % shape[dim]
            dim += 1
        out.append(k)
    return tuple(out)


def _wrap(obj):
    """NumPy results -> device arrays (NumPy scalars become 0-d arrays, as CuPy returns)."""
    if isinstance(obj, np.ndarray):
        return ndarray(obj)
    if isinstance(obj, np.generic):
        return ndarray(np.asarray(obj))
    if isinstance(obj, tuple):
        return tuple(_wrap(x) for x in obj)
    if isinstance(obj, list):
        return [_wrap(x) for x in obj]
    return obj


SIGNATURES = API.get("signatures", {})


def _check_keywords(qualname, kwargs):
    """CuPy's signature, not NumPy's: a keyword CuPy does not take is a TypeError (cupy.indices has no
    `sparse`, ndarray.max no `initial`, ...)."""
    allowed = SIGNATURES.get(qualname)
    if allowed is not None:
        for key in kwargs:
            if key not in allowed:
                raise TypeError(f"{qualname}() got an unexpected keyword argument '{key}'")


def _device_function(numpy_function, name, qualname=None):
    def call(*args, **kwargs):
        _check_keywords(qualname or f"cupy.{name}", kwargs)
        out = kwargs.get("out")
        out = out[0] if isinstance(out, tuple) and len(out) == 1 else out
        with np.errstate(all="ignore"):  # CuPy computes inf/nan without warnings
            result = numpy_function(*_unwrap(args), **_unwrap(kwargs))
        if out is not None and isinstance(result, np.ndarray) and result is out._a:
            return out
        return _wrap(result)

    call.__name__ = call.__qualname__ = name
    return call


class _Ufunc:
    """A CuPy ufunc: `add(x, y)`, `add.reduce`, `add.at`, ... over device arrays only."""

    def __init__(self, numpy_ufunc):
        self._u = numpy_ufunc
        self.__name__ = self.name = numpy_ufunc.__name__
        self.nin, self.nout, self.nargs = numpy_ufunc.nin, numpy_ufunc.nout, numpy_ufunc.nargs

    def __call__(self, *args, **kwargs):
        return _device_function(self._u, self.name)(*args, **kwargs)

    def __getattr__(self, method):
        if method not in API["ufunc"]:
            raise AttributeError(f"'cupy.ufunc' object has no attribute '{method}'")
        if method == "at":  # indices may be host arrays; the operands may not
            def at(a, indices, b=None):
                args = (_unwrap(a), _wrap_around(a.shape, _unwrap(indices, lenient=True)))
                args += () if b is None else (_unwrap(b),)
                self._u.at(*args)
            return at
        return _device_function(getattr(self._u, method), f"{self.name}.{method}")


def _converter(numpy_function):
    def convert(obj, *args, **kwargs):
        return _wrap(numpy_function(obj._a if isinstance(obj, ndarray) else _unwrap(obj, lenient=True), *args, **kwargs))
    return convert


def asnumpy(a, stream=None, order="C", out=None):
    """A NumPy copy of a device array (NumPy arrays pass through)."""
    return a.get() if isinstance(a, ndarray) else np.asarray(a)


def get_array_module(*args):
    return cupy if any(isinstance(a, ndarray) for a in args) else np


class _KernelSource:
    """What `ElementwiseKernel`/`RawKernel` were given: recorded so their CUDA source can be compiled
    with NVRTC (tests/gpu/test_kernels_compile.py); calling one needs a real GPU."""

    recorded: list = []

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs
        _KernelSource.recorded.append(self)

    def __call__(self, *args, **kwargs):
        raise NotImplementedError("CUDA kernels need a real GPU; the strict CuPy stand-in only records them")


class ElementwiseKernel(_KernelSource):
    pass


class RawKernel(_KernelSource):
    pass


class ReductionKernel(_KernelSource):
    pass


class _Namespace(types.ModuleType):
    """A CuPy (sub)module offering exactly the names recorded from real CuPy."""

    def __init__(self, name, numpy_module, extra=None):
        super().__init__(name)
        self._numpy = numpy_module
        self._recorded = API.get(name, {})
        self.__dict__.update(extra or {})

    def __getattr__(self, name):
        kind = self._recorded.get(name)
        if kind is None or kind == "module":
            raise AttributeError(f"module '{self.__name__}' has no attribute '{name}'")
        obj = getattr(self._numpy, name, None)
        if obj is None:
            raise AttributeError(f"the strict CuPy stand-in does not provide {self.__name__}.{name}")
        if kind in ("same_as_numpy", "type", "constant"):
            value = obj
        elif isinstance(obj, np.ufunc):  # (CuPy's sinc is a ufunc, NumPy's a plain function)
            value = _Ufunc(obj)
        elif name in _CONVERTERS:
            value = _converter(obj)
        else:
            value = _device_function(obj, name, f"{self.__name__}.{name}")
        setattr(self, name, value)
        return value


# ---- cupy.cuda: one device, no streams to speak of -------------------------------------------------
class _Device:
    def __init__(self, device=None):
        self.id = 0 if device is None else int(device)
        if self.id != 0:
            raise RuntimeError("cudaErrorInvalidDevice: invalid device ordinal")

    compute_capability = "90"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def use(self):
        pass

    def synchronize(self):
        pass

    def __eq__(self, other):
        return isinstance(other, _Device) and other.id == self.id

    def __hash__(self):
        return hash(self.id)


class _Stream:
    ptr = 0

    def synchronize(self):
        pass


class _MemoryPool:
    def used_bytes(self):
        return 0

    def total_bytes(self):
        return 0

    def free_all_blocks(self):
        pass


_POOL, _PINNED_POOL = _MemoryPool(), _MemoryPool()


class _Runtime:
    @staticmethod
    def getDeviceCount():
        return 1

    @staticmethod
    def getDevice():
        return 0

    @staticmethod
    def setDevice(index):
        _Device(index)

    @staticmethod
    def getDeviceProperties(index):
        _Device(index)
        return {"name": b"Strict CuPy stand-in (NumPy)", "totalGlobalMem": 0, "major": 9, "minor": 0}


cuda = types.SimpleNamespace(
    Device=_Device, runtime=_Runtime(), Stream=types.SimpleNamespace(null=_Stream()),
    get_current_stream=lambda: _Stream(), Event=lambda **kw: types.SimpleNamespace(record=lambda *a: None,
                                                                                   synchronize=lambda: None),
)


class _RandomState:
    """cupy.random.RandomState: NumPy's legacy RandomState drawing device arrays."""

    _METHODS = ("rand", "randn", "random_sample", "standard_normal", "normal", "uniform", "randint",
                "permutation", "exponential", "choice", "shuffle")

    def __init__(self, seed=None):
        self._rs = np.random.RandomState(seed)

    def seed(self, seed=None):
        self._rs.seed(seed)

    def __getattr__(self, name):
        if name not in self._METHODS:
            raise AttributeError(f"'cupy.random.RandomState' object has no attribute '{name}'")
        draw = getattr(self._rs, name)
        return lambda *args, **kwargs: _wrap(draw(*_unwrap(args), **_unwrap(kwargs)))


_global_random_state = _RandomState(0)


def _module_draw(name):
    return lambda *args, **kwargs: getattr(_global_random_state, name)(*args, **kwargs)


_RANDOM = {"seed": _global_random_state.seed, "RandomState": _RandomState,
           "get_random_state": lambda: _global_random_state}
_RANDOM.update({name: _module_draw(name) for name in _RandomState._METHODS if name != "shuffle"})
_RANDOM["random"] = _module_draw("random_sample")

stride_tricks = _Namespace("cupy.lib.stride_tricks", np.lib.stride_tricks)
cupy = _Namespace("cupy", np, {
    "__file__": __file__, "ndarray": ndarray, "ufunc": _Ufunc, "asnumpy": asnumpy,
    "get_array_module": get_array_module, "ElementwiseKernel": ElementwiseKernel, "RawKernel": RawKernel,
    "ReductionKernel": ReductionKernel, "cuda": cuda,
    "get_default_memory_pool": lambda: _POOL, "get_default_pinned_memory_pool": lambda: _PINNED_POOL,
    "random": _Namespace("cupy.random", np.random, _RANDOM),
    "linalg": _Namespace("cupy.linalg", np.linalg),
    "lib": _Namespace("cupy.lib", np.lib, {"stride_tricks": stride_tricks}),
    "is_strict_stand_in": True,
})


def install():
    """Make the framework see this stand-in as CuPy with one GPU (tinygrad_course._backend.cupy_module).

    The fused kernels cannot run here, so their hooks take the array-call reference path, which is the
    path they are compared against on a real GPU."""
    from tinygrad_course import _backend
    from tinygrad_course.ops import gpu_kernels

    _backend._cupy, _backend._cupy_checked = cupy, True
    gpu_kernels.uses_kernel = lambda *arrays: False
    _install_cupyx()
    return cupy


def _install_cupyx():
    """`cupyx.scipy.special.erf`, `erfc` and `erfinv` (the cupyx functions the framework imports), from SciPy
    if present."""
    try:
        from scipy import special
    except ImportError:
        return
    for name in ("cupyx", "cupyx.scipy", "cupyx.scipy.special"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["cupyx"].scipy = sys.modules["cupyx.scipy"]
    sys.modules["cupyx.scipy"].special = sys.modules["cupyx.scipy.special"]
    for name in ("erf", "erfc", "erfinv"):
        setattr(sys.modules["cupyx.scipy.special"], name, _Ufunc(getattr(special, name)))

