"""repr/str print exactly like PyTorch's, with `torch.` replaced by `tc.`."""
import numpy as np
import pytest
import torch

import tinygrad_course as tc
from core_helpers import to_tc

CASES = {
    "ints": lambda m: m.tensor([1, 2, 3]),
    "negative_ints": lambda m: m.tensor([[-10, 2], [3, 400]]),
    "floats": lambda m: m.tensor([1.5, 2.25, -3.125]),
    "int_valued_floats": lambda m: m.tensor([1.0, 2.0, -3.0]),
    "small_floats": lambda m: m.tensor([0.0001, 0.5]),
    "tiny_floats": lambda m: m.tensor([1e-5, 1.0]),
    "sci_large": lambda m: m.tensor([1e10, 1.0]),
    "sci_range": lambda m: m.tensor([0.001, 1500.0]),
    "big_ints_as_float": lambda m: m.tensor([1e9, 2.0]),
    "bool": lambda m: m.tensor([True, False]),
    "zero_dim_float": lambda m: m.tensor(3.5),
    "zero_dim_int": lambda m: m.tensor(7),
    "zero_dim_bool": lambda m: m.tensor(False),
    "empty": lambda m: m.tensor([]),
    "empty_2d": lambda m: m.zeros(0, 3),
    "empty_int": lambda m: m.zeros(0, dtype=m.int64),
    "multi_dim": lambda m: m.arange(24.0).reshape(2, 3, 4) / 7,
    "multi_dim_int": lambda m: m.arange(24).reshape(2, 3, 4),
    "summarised": lambda m: m.arange(2000.0),
    "summarised_2d": lambda m: m.arange(3000).reshape(50, 60),
    "summarised_3d": lambda m: (m.arange(2 * 40 * 30.0) / 3).reshape(2, 40, 30),
    "wide_wrap": lambda m: m.arange(30.0) * 1.25,
    "nan_inf": lambda m: m.tensor([float("nan"), float("inf"), -float("inf"), 1.5]),
    "nan_int_valued": lambda m: m.tensor([float("nan"), 1.0, 2.0]),
    "float64": lambda m: m.tensor([1.5, 2.0], dtype=m.float64),
    "float16": lambda m: m.tensor([1.5, 2.0], dtype=m.float16),
    "int32": lambda m: m.tensor([1, 2], dtype=m.int32),
    "uint8": lambda m: m.tensor([1, 255], dtype=m.uint8),
    "requires_grad": lambda m: m.tensor([1.0, 2.0], requires_grad=True),
    "grad_fn": lambda m: m.tensor([1.0, 2.0], requires_grad=True) * 2,
    "grad_fn_float64": lambda m: m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True) + 1,
    "grad_fn_sum": lambda m: m.tensor([1.0, 2.0], requires_grad=True).sum(),
    "neg_zero": lambda m: m.tensor([-0.0, 1.0]),
    "mixed_sign": lambda m: m.tensor([[-1.5, 2.0], [3.25, -400.5]]),
    "column": lambda m: m.arange(5.0).reshape(5, 1),
    "row_of_rows": lambda m: m.ones(2, 1, 3),
    "wide_with_grad_fn": lambda m: m.arange(30.0, requires_grad=True) * 1.25,
    "wide_2d_with_grad_fn": lambda m: m.arange(40.0, requires_grad=True).reshape(4, 10) * 1.25,
    "float64_rows": lambda m: m.arange(12.0, dtype=m.float64).reshape(3, 4) / 3,
    "negative_int_range": lambda m: m.arange(-50, 50),
    "sum_float64_grad_fn": lambda m: m.ones(3, dtype=m.float64, requires_grad=True).sum(),
    "very_small": lambda m: m.tensor([1e-8, 2e-8]),
    "big_and_small": lambda m: m.tensor([123456.7, 0.001]),
    "bool_2d": lambda m: m.tensor([[True, False], [False, True]]),
    "int8": lambda m: m.tensor([-1, 2], dtype=m.int8),
    "half_grad_fn": lambda m: m.tensor([1.5], dtype=m.float16, requires_grad=True) * 2,
    "empty_requires_grad": lambda m: m.zeros(0, requires_grad=True),
    "zero_dim_grad_fn": lambda m: m.tensor(2.0, requires_grad=True) * 3,
    "summarised_3d_int": lambda m: m.arange(1100).reshape(11, 10, 10),
    "inf_only": lambda m: m.tensor([float("inf"), -float("inf")]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_repr_matches_torch(name):
    ours = repr(CASES[name](tc))
    theirs = repr(CASES[name](torch)).replace("torch.", "tc.")
    assert ours == theirs, f"\n{ours}\n{theirs}"
    assert str(CASES[name](tc)) == ours


def test_random_values_print_like_torch():
    rng = np.random.default_rng(0)
    for shape in [(3,), (2, 5), (4, 3, 2), (12,)]:
        data = rng.standard_normal(shape).astype(np.float32) * rng.choice([0.01, 1.0, 100.0])
        assert repr(tc.tensor(data)) == repr(torch.tensor(data)).replace("torch.", "tc.")


def test_bfloat16_repr():
    t = torch.tensor([1.5, 2.0], dtype=torch.bfloat16)
    assert repr(to_tc(t)) == repr(t).replace("torch.", "tc.")


def test_set_printoptions_precision():
    try:
        tc.set_printoptions(precision=2)
        torch.set_printoptions(precision=2)
        assert repr(tc.tensor([1.23456])) == repr(torch.tensor([1.23456]))
    finally:
        tc.set_printoptions(profile="default")
        torch.set_printoptions(profile="default")


def test_dtype_and_device_reprs():
    assert repr(tc.float32) == "tc.float32" and repr(tc.int64) == "tc.int64" and repr(tc.bool) == "tc.bool"
    assert repr(tc.device("cpu")) == "device(type='cpu')"
    assert tc.zeros(1).type() == "tc.FloatTensor"


def test_max_with_dim_prints_like_torch():
    data = [[1.0, 5.0], [7.0, 2.0]]
    for op in ("max", "min"):
        ours = repr(getattr(tc.tensor(data), op)(1))
        assert ours == repr(getattr(torch.tensor(data), op)(1)).replace("torch.", "tc.")
