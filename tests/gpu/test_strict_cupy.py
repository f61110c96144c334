"""The strict CuPy stand-in (tests/strict_cupy.py) rejects what real CuPy rejects, so a green stand-in run
means something: each rule is checked here, on every machine, without installing the stand-in."""
import json
import pathlib

import ml_dtypes
import numpy as np
import pytest

import strict_cupy
from strict_cupy import cupy as cp

API = json.loads((pathlib.Path(__file__).parent / "cupy_api.json").read_text())


def test_the_recorded_api_is_cupys():
    assert API["cupy_version"].split(".")[0] >= "13"
    assert {"asnumpy", "ElementwiseKernel", "put_along_axis"} <= set(API["cupy"])
    assert "seterr" not in API["cupy"] and "errstate" not in API["cupy"]  # NumPy has them, CuPy does not
    assert "sliding_window_view" in API["cupy.lib.stride_tricks"]


def test_names_cupy_lacks_are_missing():
    with pytest.raises(AttributeError):
        cp.seterr
    with pytest.raises(AttributeError):
        cp.ones(2).ctypes  # a NumPy-only ndarray attribute
    assert cp.exp(cp.zeros(2)).get().tolist() == [1.0, 1.0]


def test_no_implicit_conversion_to_numpy():
    a = cp.arange(3.0)
    with pytest.raises(TypeError, match="Implicit conversion to a NumPy array is not allowed"):
        np.asarray(a)
    with pytest.raises(TypeError, match="Implicit conversion"):
        np.asarray(a, dtype=np.float64)
    assert cp.asnumpy(a).tolist() == [0.0, 1.0, 2.0] and a.get().tolist() == [0.0, 1.0, 2.0]
    assert float(a[1]) == 1.0 and a.sum().item() == 3.0 and a.tolist() == [0.0, 1.0, 2.0]


@pytest.mark.parametrize("host", [np.ones(3), np.array(2.0)], ids=["1-d", "0-d"])
def test_numpy_arrays_do_not_mix_with_device_arrays(host):
    a = cp.ones(3)
    for compute in (lambda: a + host, lambda: host * a, lambda: cp.add(a, host), lambda: cp.where(a > 0, host, a),
                    lambda: cp.concatenate([a, host.reshape(-1)]), lambda: np.add(a, host)):
        with pytest.raises(TypeError, match="Unsupported type"):
            compute()


def test_scalars_converters_and_indices_are_accepted():
    a = cp.arange(4.0)
    assert (a * np.float32(2) + 1).get().tolist() == [1.0, 3.0, 5.0, 7.0]
    assert cp.asarray(np.ones(2)).get().tolist() == [1.0, 1.0]
    assert a[np.array([3, 0])].get().tolist() == [3.0, 0.0]
    cp.add.at(a, np.array([0, 0]), cp.ones(2))
    assert a.get().tolist() == [2.0, 1.0, 2.0, 3.0]


def test_numpy_functions_dispatch_only_where_cupy_has_them():
    a = cp.ones((2, 3))
    out = np.concatenate([a, a])
    assert isinstance(out, cp.ndarray) and out.shape == (4, 3)
    assert "insert" not in API["cupy"]
    with pytest.raises(TypeError, match="no implementation found"):
        np.insert(a, 1, 5.0)


def test_reductions_and_integer_indexing_give_device_arrays():
    a = cp.arange(6.0).reshape(2, 3)
    for value in (a.sum(), a.max(), a[1, 2], cp.mean(a)):
        assert isinstance(value, cp.ndarray) and value.ndim == 0


def test_dtypes_cupy_lacks_cannot_live_on_the_device():
    with pytest.raises(ValueError, match="Unsupported dtype"):
        cp.asarray(np.ones(2, dtype=ml_dtypes.bfloat16))


def test_kernels_are_recorded_not_run():
    kernel = cp.ElementwiseKernel("float32 x", "float32 y", "y = x * 2", "double_it")
    assert kernel in strict_cupy._KernelSource.recorded
    with pytest.raises(NotImplementedError, match="real GPU"):
        kernel(cp.ones(2, dtype=np.float32))


def test_out_of_range_index_arrays_wrap_around_like_cupy():
    a = cp.arange(3.0)
    assert a[np.array([3, -4])].get().tolist() == [0.0, 2.0]
    a[cp.asarray(np.array([4]))] = 9.0
    assert a.get().tolist() == [0.0, 9.0, 2.0]


def test_cupys_signatures_not_numpys():
    assert API["signatures"]["cupy.indices"] == ["dimensions", "dtype"]
    with pytest.raises(TypeError, match="unexpected keyword argument 'sparse'"):
        cp.indices((2, 3), sparse=True)  # NumPy has `sparse`, CuPy does not
    with pytest.raises(TypeError, match="unexpected keyword argument 'initial'"):
        cp.ones(3).max(initial=0.0)
    assert cp.ones((2, 3)).sum(axis=1, keepdims=True).shape == (2, 1)


def test_shape_can_be_set_only_without_a_copy():
    a = cp.arange(6.0)
    a.shape = (2, 3)
    assert a.shape == (2, 3)
    with pytest.raises(AttributeError):
        a.T.shape = (6,)
