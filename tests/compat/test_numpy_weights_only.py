"""NumPy objects in a checkpoint with `weights_only=True`: refused, accepted and worded as by PyTorch.

PyTorch pickles a NumPy array as `numpy._core.multiarray._reconstruct(numpy.ndarray, ...)` with a
`numpy.dtype` whose state is set on an instance of the dtype's class (`numpy.dtypes.Float64DType`), and a
scalar as `numpy._core.multiarray.scalar(dtype, bytes)`; its weights-only unpickler refuses each of those
until it is allow-listed. `tc.save` stores arrays and scalars as raw data, but `tc.load` must accept and
refuse the same objects at the same steps, with the same messages (the framework's name where PyTorch's
says `torch`). Each case below is saved by both, then loaded again and again, each time allow-listing what
the previous refusal asked for, until it loads.
"""
import io
import pickle
import re

import ml_dtypes
import numpy as np
import pytest
import torch

import tinygrad_course as tc

_RECONSTRUCT, _SCALAR = np._core.multiarray._reconstruct, np._core.multiarray.scalar
_DTYPE_CLASSES = {f"<class '{type(np.dtype(t)).__module__}.{type(np.dtype(t)).__qualname__}'>": type(np.dtype(t))
                  for t in (np.float64, np.float32, np.float16, ml_dtypes.bfloat16, np.int64, np.int32, np.int16,
                            np.int8, np.uint8, np.bool_, np.complex64, np.complex128, object)}
_GLOBALS = {"numpy._core.multiarray._reconstruct": _RECONSTRUCT, "numpy._core.multiarray.scalar": _SCALAR,
            "numpy.ndarray": np.ndarray, "numpy.dtype": np.dtype, "ml_dtypes.bfloat16": ml_dtypes.bfloat16,
            "bytes": bytes}


@pytest.fixture(autouse=True)
def _clean_allow_list():
    tc.serialization.clear_safe_globals()
    yield
    tc.serialization.clear_safe_globals()


def _comparable(ns, message: str) -> str:
    """The message without PyTorch's bold markers and the framework's extra hint, names spelled as PyTorch's."""
    message = message.replace("\x1b[1m", "").replace("\x1b[0m", "").split("\nHint:")[0]
    return message.replace("`tc.", "`torch.") if ns is tc else message


def _to_allow(message: str):
    """The object a refusal asks to allow-list."""
    found = re.search(r"GLOBAL (\S+) was not an allowed global", message)
    if found:
        return _GLOBALS[found.group(1)]
    return _DTYPE_CLASSES[re.search(r"but got (<class '[^']+'>)", message).group(1)]


def _steps(ns, obj):
    """Save `obj` with `ns`, then load it with weights_only=True, allow-listing what each refusal names."""
    buf = io.BytesIO()
    ns.save(obj, buf)
    allowed, steps = [], []
    for _ in range(8):
        buf.seek(0)
        try:
            with ns.serialization.safe_globals(allowed):
                loaded = ns.load(buf, weights_only=True)
        except pickle.UnpicklingError as e:
            steps.append(_comparable(ns, str(e)))
            allowed.append(_to_allow(str(e)))
            continue
        return steps, loaded
    raise AssertionError(f"{ns.__name__} still refuses after {len(steps)} allow-listings: {steps[-1]}")


CASES = {
    "float64 array": np.arange(3.0), "int64 array": np.arange(3), "int16 array": np.arange(3, dtype=np.int16),
    "bool array": np.array([True, False]), "uint8 array": np.arange(3, dtype=np.uint8),
    "float16 array": np.arange(3, dtype=np.float16), "bfloat16 array": np.arange(3, dtype=ml_dtypes.bfloat16),
    "complex64 array": np.arange(3, dtype=np.complex64), "0-d array": np.array(2.0),
    "Fortran-order array": np.asfortranarray(np.ones((2, 3))), "big-endian array": np.arange(3, dtype=">f4"),
    "empty array": np.empty((0, 3), np.float32), "empty complex array": np.empty(0, np.complex64),
    "float64 scalar": np.float64(1.5), "float32 scalar": np.float32(1.5), "int64 scalar": np.int64(3),
    "bool scalar": np.bool_(True), "bfloat16 scalar": ml_dtypes.bfloat16(1.5), "complex128 scalar": np.complex128(1j),
    "NumPy dtype": np.dtype("float32"), "object array": np.array([1, "a"], dtype=object),
    "empty bytes": b"", "scalar then array": {"s": np.float64(1.0), "a": np.arange(2), "b": np.arange(2.0)},
}


@pytest.mark.parametrize("name", list(CASES))
def test_same_refusals_in_the_same_order_then_the_same_object(name):
    obj = {"epoch": 3, "w": CASES[name]}
    theirs, their_obj = _steps(torch, obj)
    ours, our_obj = _steps(tc, obj)
    assert ours == theirs
    assert repr(our_obj) == repr(their_obj)


def test_the_refusals_pytorch_gives_for_arrays_and_scalars():
    """The sequence the issue describes, spelled out: what each step asks for, in PyTorch 2.13's words."""
    steps, _ = _steps(tc, {"a": np.arange(3.0)})
    assert [re.search(r"GLOBAL (\S+) was not|but got (<[^>]+>)", s).group(1, 2) for s in steps] == [
        ("numpy._core.multiarray._reconstruct", None), ("numpy.ndarray", None), ("numpy.dtype", None),
        (None, "<class 'numpy.dtypes.Float64DType'>")]
    assert "Please use `torch.serialization.add_safe_globals([numpy.ndarray])` or the " \
           "`torch.serialization.safe_globals([numpy.ndarray])` context manager" in steps[1]
    assert steps[3].startswith("Weights only load failed. In PyTorch 2.6, we changed the default value of the "
                               "`weights_only` argument in `torch.load` from `False` to `True`.")
    assert "Can only build Tensor, Parameter, OrderedDict or types allowlisted via `add_safe_globals`, but got " \
           "<class 'numpy.dtypes.Float64DType'>" in steps[3]
    steps, _ = _steps(tc, {"s": np.float64(1.5)})
    assert [re.search(r"GLOBAL (\S+) was not|but got (<[^>]+>)", s).group(1, 2) for s in steps] == [
        ("numpy._core.multiarray.scalar", None), ("numpy.dtype", None), (None, "<class 'numpy.dtypes.Float64DType'>")]


def test_messages_use_the_framework_name_and_name_the_class_to_allow_list():
    buf = io.BytesIO()
    tc.save({"a": np.arange(3.0)}, buf)
    with tc.serialization.safe_globals([_RECONSTRUCT, np.ndarray, np.dtype]):
        buf.seek(0)
        with pytest.raises(pickle.UnpicklingError) as info:
            tc.load(buf)
    message = str(info.value)
    assert "`tc.load`" in message and "`torch.load`" not in message
    assert "Hint: allow-list the class with `tc.serialization.add_safe_globals([numpy.dtypes.Float64DType])`" in message


def test_the_allow_list_loads_the_arrays_and_scalars_unchanged():
    obj = {"a": np.arange(6.0).reshape(2, 3), "i": np.arange(4, dtype=np.int32), "s": np.float64(2.5),
           "t": tc.ones(2), "e": np.empty(0, np.float64)}
    buf = io.BytesIO()
    tc.save(obj, buf)
    allow = [_RECONSTRUCT, np.ndarray, np.dtype, np.dtypes.Float64DType, np.dtypes.Int32DType, _SCALAR]
    tc.serialization.add_safe_globals(allow)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL bytes was not an allowed global"):
        tc.load(buf)  # an empty array's data is b"", which PyTorch's protocol-2 pickle writes as bytes()
    tc.serialization.add_safe_globals([bytes])
    buf.seek(0)
    back = tc.load(buf)
    assert back["a"].dtype == np.float64 and back["a"].tolist() == obj["a"].tolist()
    assert back["i"].dtype == np.int32 and back["s"] == np.float64(2.5) and type(back["s"]) is np.float64
    assert back["e"].shape == (0,) and back["t"].tolist() == [1.0, 1.0]
    back["a"][0, 0] = 7.0  # writable, like PyTorch's
    buf.seek(0)
    assert tc.load(buf, weights_only=False)["s"] == np.float64(2.5)


def test_weights_only_false_loads_numpy_objects_without_a_warning(recwarn):
    buf = io.BytesIO()
    tc.save({"a": np.arange(3), "s": np.int64(1)}, buf)
    buf.seek(0)
    back = tc.load(buf, weights_only=False)
    assert back["a"].tolist() == [0, 1, 2] and back["s"] == 1
    assert not [w for w in recwarn if "unpickling" in str(w.message)]


def test_numpy_inside_a_pickled_object_is_checked_like_pytorch():
    """Arrays inside an allow-listed object are pickled (not stored as raw data); the same rules apply."""
    for ns in (tc, torch):
        model = ns.nn.Linear(2, 2)
        model.stats = np.arange(3.0)  # an attribute: pickled with the module
        buf = io.BytesIO()
        ns.save({"model": model}, buf)
        with ns.serialization.safe_globals([ns.nn.Linear, _RECONSTRUCT, np.ndarray, np.dtype]):
            buf.seek(0)
            with pytest.raises(pickle.UnpicklingError, match="but got <class 'numpy.dtypes.Float64DType'>"):
                ns.load(buf)
        with ns.serialization.safe_globals([ns.nn.Linear, _RECONSTRUCT, np.ndarray, np.dtype, np.dtypes.Float64DType]):
            buf.seek(0)
            assert ns.load(buf)["model"].stats.tolist() == [0.0, 1.0, 2.0]
