"""Creation functions, dtype inference, PyTorch's promotion rules and conversions."""
import itertools

import numpy as np
import pytest
import torch
from core_helpers import DTYPE_PAIRS, TC_TO_TORCH, assert_same, to_tc, to_torch

import tinygrad_course as tc


@pytest.mark.parametrize("data", [
    [1, 2, 3], [1.0, 2], [True, False], [[1, 2], [3, 4]], 3, 2.5, True, [[True, 1]], [[1, 2.5], [3, 4]], [],
    [[]], (1, 2), [tc.tensor(1), tc.tensor(2)],
])
def test_tensor_infers_dtype_like_torch(data):
    torch_data = [torch.tensor(1), torch.tensor(2)] if isinstance(data, list) and data and isinstance(
        data[0], tc.Tensor) else data
    assert_same(tc.tensor(data), torch.tensor(torch_data))


def test_tensor_from_numpy_keeps_dtype_and_copies():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = tc.tensor(a)
    assert t.dtype is tc.int32 and t.shape == (2, 3)
    a[0, 0] = 100
    assert t[0, 0].item() == 0


def test_from_numpy_shares_memory():
    a = np.zeros(3, dtype=np.float64)
    t = tc.from_numpy(a)
    assert t.dtype is tc.float64
    a[1] = 5
    assert t.tolist() == [0.0, 5.0, 0.0]
    t[2] = 7
    assert a[2] == 7
    assert t.numpy() is a or np.shares_memory(t.numpy(), a)


def test_from_numpy_rejects_unsupported():
    with pytest.raises(TypeError, match="can't convert np.ndarray of type numpy.complex128"):
        tc.from_numpy(np.zeros(2, dtype=np.complex128))


@pytest.mark.parametrize("name,args,kw", [
    ("zeros", (2, 3), {}), ("zeros", ((2, 3),), {}), ("ones", (4,), {"dtype": "int64"}),
    ("empty", (2, 2), {}), ("full", ((2, 2), 7), {}), ("full", ((2,), 1.5), {}), ("full", ((2,), True), {}),
    ("arange", (5,), {}), ("arange", (1, 4, 0.5), {}), ("arange", (0.0, 3), {}), ("arange", (10, 0, -3), {}),
    ("linspace", (0, 1, 5), {}), ("eye", (3,), {}), ("eye", (2, 4), {}), ("zeros", (0, 3), {}),
    ("ones", (2,), {"dtype": "float64"}), ("arange", (3,), {"dtype": "float16"}),
])
def test_constant_factories_match_torch(name, args, kw):
    tkw = {k: getattr(torch, v) for k, v in kw.items()}
    ckw = {k: getattr(tc, v) for k, v in kw.items()}
    ours, theirs = getattr(tc, name)(*args, **ckw), getattr(torch, name)(*args, **tkw)
    if name == "empty":
        assert ours.shape == theirs.shape and TC_TO_TORCH[ours.dtype] is theirs.dtype
    else:
        assert_same(ours, theirs)


@pytest.mark.parametrize("name", ["rand", "randn"])
def test_random_factories_shape_dtype_and_seed(name):
    tc.manual_seed(0)
    a = getattr(tc, name)(3, 4)
    tc.manual_seed(0)
    b = getattr(tc, name)(3, 4)
    assert a.shape == (3, 4) and a.dtype is tc.float32
    assert a.equal(b)
    assert not a.equal(getattr(tc, name)(3, 4))
    assert getattr(tc, name)(2, dtype=tc.float64).dtype is tc.float64


def test_rand_range_and_randn_moments():
    tc.manual_seed(1)
    u = tc.rand(10000)
    assert 0 <= u.min().item() and u.max().item() < 1
    n = tc.randn(20000, dtype=tc.float64)
    assert abs(n.mean().item()) < 0.05 and abs(n.std().item() - 1) < 0.05


def test_randint():
    tc.manual_seed(2)
    r = tc.randint(0, 5, (100,))
    assert r.dtype is tc.int64 and r.shape == (100,)
    assert 0 <= r.min().item() and r.max().item() < 5
    assert tc.randint(3, (2, 2)).shape == (2, 2)


@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like", "rand_like", "randn_like"])
def test_like_family(name):
    x = tc.zeros(2, 3, dtype=tc.float64)
    y = getattr(tc, name)(x)
    assert y.shape == (2, 3) and y.dtype is tc.float64 and y.device == x.device
    assert getattr(tc, name)(x, dtype=tc.float32).dtype is tc.float32
    assert getattr(tc, name)(x, requires_grad=True).requires_grad


def test_full_like_and_randint_like():
    x = tc.zeros(2, 2, dtype=tc.int32)
    assert_same(tc.full_like(x, 3), torch.full_like(torch.zeros(2, 2, dtype=torch.int32), 3))
    r = tc.randint_like(x, 10)
    assert r.dtype is tc.int32 and r.shape == (2, 2)


def test_creation_keywords():
    t = tc.ones(2, dtype=tc.float64, device="cpu", requires_grad=True)
    assert t.requires_grad and t.is_leaf and t.dtype is tc.float64 and str(t.device) == "cpu"
    assert tc.tensor([1.0], device=tc.device("cpu")).device.type == "cpu"
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype can require gradients"):
        tc.tensor([1, 2], requires_grad=True)


# ---- promotion ------------------------------------------------------------------------------------

NUMERIC = [p for p in DTYPE_PAIRS]


@pytest.mark.parametrize("a,b", list(itertools.product(range(len(NUMERIC)), repeat=2)))
def test_promote_types_matches_torch(a, b):
    (ta, pa), (tb, pb) = NUMERIC[a], NUMERIC[b]
    assert TC_TO_TORCH[tc.promote_types(ta, tb)] is torch.promote_types(pa, pb)


def _operand(kind, pair, value=1):
    ours_dt, torch_dt = pair
    if kind == "tensor":
        return tc.ones(2, dtype=ours_dt), torch.ones(2, dtype=torch_dt)
    if kind == "zerodim":
        return tc.ones((), dtype=ours_dt), torch.ones((), dtype=torch_dt)
    raise AssertionError(kind)


SCALARS = [True, 2, 2.5]


@pytest.mark.parametrize("a", range(len(NUMERIC)))
@pytest.mark.parametrize("b", range(len(NUMERIC)))
@pytest.mark.parametrize("kinds", [("tensor", "tensor"), ("tensor", "zerodim"), ("zerodim", "tensor"),
                                   ("zerodim", "zerodim")])
def test_result_type_tensor_pairs(a, b, kinds):
    xa, ta = _operand(kinds[0], NUMERIC[a])
    xb, tb = _operand(kinds[1], NUMERIC[b])
    assert TC_TO_TORCH[tc.result_type(xa, xb)] is torch.result_type(ta, tb)


@pytest.mark.parametrize("a", range(len(NUMERIC)))
@pytest.mark.parametrize("scalar", SCALARS)
@pytest.mark.parametrize("kind", ["tensor", "zerodim"])
def test_result_type_with_python_scalars_and_real_ops(a, scalar, kind):
    x, tx = _operand(kind, NUMERIC[a])
    assert TC_TO_TORCH[tc.result_type(x, scalar)] is torch.result_type(tx, scalar)
    assert TC_TO_TORCH[tc.result_type(scalar, x)] is torch.result_type(scalar, tx)
    # the dtype of actual results follows the same rule
    for op in ("add", "mul"):
        if NUMERIC[a][0] is tc.bool and scalar is True and op == "add":
            continue
        assert TC_TO_TORCH[getattr(x, op)(scalar).dtype] is getattr(tx, op)(scalar).dtype
    assert TC_TO_TORCH[(x / scalar).dtype] is (tx / scalar).dtype
    assert TC_TO_TORCH[(x > scalar).dtype] is torch.bool


@pytest.mark.parametrize("a", range(len(NUMERIC)))
@pytest.mark.parametrize("b", range(len(NUMERIC)))
def test_binary_op_result_dtypes_match_torch(a, b):
    xa, ta = _operand("tensor", NUMERIC[a])
    xb, tb = _operand("zerodim", NUMERIC[b])
    for op in ("__add__", "__mul__", "__truediv__", "maximum", "__eq__"):
        assert TC_TO_TORCH[getattr(xa, op)(xb).dtype] is getattr(ta, op)(tb).dtype, op
        assert TC_TO_TORCH[getattr(xb, op)(xa).dtype] is getattr(tb, op)(ta).dtype, op


def test_promotion_examples_from_the_issue():
    assert (tc.tensor([1, 2]) * 2.5).dtype is tc.float32
    assert (tc.tensor([1.0], dtype=tc.float32) * 1e300).dtype is tc.float32
    assert (tc.tensor([1.0], dtype=tc.float16) + tc.tensor(1.0, dtype=tc.float64)).dtype is tc.float16
    assert (tc.tensor([1], dtype=tc.uint8) + tc.tensor([1], dtype=tc.int8)).dtype is tc.int16
    tc.set_default_dtype(tc.float64)
    assert (tc.tensor([1, 2]) * 2.5).dtype is tc.float64
    assert tc.tensor([1.5]).dtype is tc.float64


# ---- conversions ----------------------------------------------------------------------------------

@pytest.mark.parametrize("method,dt", [("float", tc.float32), ("double", tc.float64), ("half", tc.float16),
                                       ("long", tc.int64), ("int", tc.int32), ("bool", tc.bool),
                                       ("bfloat16", tc.bfloat16)])
def test_conversion_methods(method, dt):
    x = tc.tensor([0.0, 1.5, -2.7])
    y = getattr(x, method)()
    assert y.dtype is dt
    assert_same(y, getattr(torch.tensor([0.0, 1.5, -2.7]), method)())


def test_to_dtype_and_same_dtype_returns_self():
    x = tc.tensor([1, 2])
    assert x.to(tc.int64) is x
    assert x.to(tc.float64).dtype is tc.float64
    assert x.to(dtype=tc.float16).dtype is tc.float16
    assert x.to(tc.zeros(1, dtype=tc.float64)).dtype is tc.float64
    assert x.to("cpu") is x


def test_float16_and_bfloat16_arithmetic_match_torch():
    vals = [0.1, 1.7, -3.25, 100.5]
    for dt in (tc.float16, tc.bfloat16):
        x = tc.tensor(vals, dtype=dt)
        t = to_torch(x)
        assert_same(x * 3 + x, t * 3 + t, rtol=1e-2)
        assert_same(x.exp(), t.exp(), rtol=1e-2)
        assert x.item if False else True
    assert tc.tensor(1.5, dtype=tc.bfloat16).item() == 1.5
    assert isinstance(tc.tensor(1.5, dtype=tc.float16).item(), float)
    back = to_tc(torch.tensor([1.5], dtype=torch.bfloat16))
    assert back.dtype is tc.bfloat16


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_half_precision_forward_and_backward_match_torch(dt):
    def run(lib):
        x = lib.tensor([[1.5, 2.25], [3.0, 4.0]], dtype=getattr(lib, dt), requires_grad=True)
        y = (x @ x).sum() + x.mean() + x.exp().sum() + x.var()
        y.backward()
        return y, x.grad

    assert_same(run(tc), run(torch), rtol=2e-2, atol=1e-2)


@pytest.mark.parametrize("data", [(0.5, 0.25), [1, 2], 3.0, np.arange(3.0)], ids=["tuple", "list", "number", "array"])
def test_as_tensor_of_plain_data_matches_torch(data):
    ours, theirs = tc.as_tensor(data), torch.as_tensor(data)
    assert ours.tolist() == theirs.tolist() and str(ours.dtype) == str(theirs.dtype).replace("torch", "tc")
    assert tc.as_tensor(data, dtype=tc.float64).dtype is tc.float64


@pytest.mark.parametrize("values, dtype", [([0.1, 1 / 3], "float64"), ([1e100, -1e-300], "float64"),
                                           ([1.0000000596046448, 65519.0], "float16"), ([1.1, 3.3e38], "bfloat16"),
                                           ([2.7, -1.5], "int64"), ([0.5, 0.0], "bool")])
def test_python_floats_are_rounded_once_to_the_requested_dtype(values, dtype):
    ours = tc.tensor(values, dtype=getattr(tc, dtype))
    theirs = torch.tensor(values, dtype=getattr(torch, dtype))
    assert ours.to(tc.float64).tolist() == theirs.to(torch.float64).tolist()


@pytest.mark.parametrize("value, dtype", [(1.0, "float32"), (3, "int64"), (True, "bool"), (2.5, "float64")])
def test_full_takes_a_0d_tensor_as_its_fill_value_as_pytorch(value, dtype):
    mine = tc.full((2, 3), tc.tensor(value, dtype=getattr(tc, dtype)))
    theirs = torch.full((2, 3), torch.tensor(value, dtype=getattr(torch, dtype)))
    assert mine.tolist() == theirs.tolist() and str(mine.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    with pytest.raises(TypeError, match=r"full\(\): argument 'fill_value' \(position 2\) must be Number, not Tensor"):
        tc.full((2,), tc.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match=r"must be Number, not Tensor"):
        torch.full((2,), torch.tensor([1.0, 2.0]))
