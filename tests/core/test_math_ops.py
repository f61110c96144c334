"""Element-wise math, comparisons and reductions: values, dtypes, shapes and gradients vs PyTorch."""
import numpy as np
import pytest
import torch
from core_helpers import assert_same, assert_same_error, error_of, pair
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tinygrad_course as tc

BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
    "pow": lambda a, b: a.abs() ** b, "maximum": lambda a, b: a.maximum(b), "minimum": lambda a, b: a.minimum(b),
    "add_alpha": lambda a, b: a.add(b, alpha=2), "sub_alpha": lambda a, b: a.sub(b, alpha=3),
    "where": lambda a, b: (a > b).to(a.dtype) * 0 + a.where(a > b, b), "rem": lambda a, b: a % (b.abs() + 1),
    "atan2_like": lambda a, b: a * b - b / (a * a + 1),
}
UNARY = {
    "neg": lambda x: -x, "abs": lambda x: x.abs(), "exp": lambda x: x.exp(), "log": lambda x: x.abs().log(),
    "log1p": lambda x: x.abs().log1p(), "sqrt": lambda x: x.abs().sqrt(), "rsqrt": lambda x: (x.abs() + 1).rsqrt(),
    "sin": lambda x: x.sin(), "cos": lambda x: x.cos(), "tanh": lambda x: x.tanh(), "sigmoid": lambda x: x.sigmoid(),
    "relu": lambda x: x.relu(), "clamp": lambda x: x.clamp(-0.5, 0.7), "clamp_min": lambda x: x.clamp(min=0.1),
    "clamp_max": lambda x: x.clamp(max=0.2), "sign": lambda x: x.sign(), "square": lambda x: x.square(),
    "reciprocal": lambda x: (x.abs() + 1).reciprocal(), "pow_scalar": lambda x: x ** 3, "rpow": lambda x: 2 ** x,
    "rsub": lambda x: 1 - x, "rdiv": lambda x: 1 / (x.abs() + 1), "floor": lambda x: x.floor(),
    "ceil": lambda x: x.ceil(), "round": lambda x: x.round(), "trunc": lambda x: x.trunc(),
    "log2": lambda x: (x.abs() + 1).log2(), "expm1": lambda x: x.expm1(), "pow_half": lambda x: x.abs() ** 0.5,
}

FLOATS = st.floats(-3, 3, allow_nan=False, width=32)


def broadcastable_pair():
    return hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4).map(
        lambda r: r.input_shapes)


@pytest.mark.parametrize("name", sorted(BINARY))
@given(shapes=broadcastable_pair(), data=st.data())
def test_binary_ops_values_and_grads_match_torch(name, shapes, data):
    fn = BINARY[name]
    a_np = data.draw(hnp.arrays(np.float64, shapes[0], elements=FLOATS))
    b_np = data.draw(hnp.arrays(np.float64, shapes[1], elements=FLOATS))
    a, ta = pair(a_np, requires_grad=True)
    b, tb = pair(b_np, requires_grad=True)
    out, tout = fn(a, b), fn(ta, tb)
    assert_same(out, tout)
    if tout.requires_grad and tout.grad_fn is not None:
        g = np.random.default_rng(0).standard_normal(tout.shape)
        out.backward(tc.tensor(g))
        tout.backward(torch.tensor(g))
        for ours, theirs in ((a, ta), (b, tb)):
            if theirs.grad is None:
                assert ours.grad is None or not ours.grad.detach()._data.any()
            else:
                assert_same(ours.grad, theirs.grad, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("name", sorted(UNARY))
@given(x_np=hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4), elements=FLOATS))
def test_unary_ops_values_and_grads_match_torch(name, x_np):
    fn = UNARY[name]
    x, tx = pair(x_np, requires_grad=True)
    out, tout = fn(x), fn(tx)
    assert_same(out, tout)
    out.sum().backward()
    tout.sum().backward()
    assert_same(x.grad, tx.grad)


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_unary_ops_dtypes_match_torch(name, dtype):
    base = np.array([[-2, 0, 1], [3, 1, 0]])
    x = tc.tensor(base).to(getattr(tc, dtype))
    tx = torch.tensor(base).to(getattr(torch, dtype))
    fn = UNARY[name]
    from core_helpers import error_of

    te, _ = error_of(lambda: fn(tx))
    if te is not None:
        oe, om = error_of(lambda: fn(x))
        assert oe is not None and issubclass(oe, te), om
        return
    assert_same(fn(x), fn(tx))


@pytest.mark.parametrize("op", ["__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__",
                                "__pow__", "__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__rfloordiv__",
                                "__rmod__", "__rpow__"])
@pytest.mark.parametrize("dtype", ["int64", "float32", "int32", "uint8"])
@pytest.mark.parametrize("other", [2, 2.5, "int_tensor", "float_tensor"])
def test_arithmetic_operators_match_torch(op, dtype, other):
    base = np.array([[1, 5, 7], [3, 2, 9]])
    x = tc.tensor(base).to(getattr(tc, dtype))
    tx = torch.tensor(base).to(getattr(torch, dtype))
    if other == "int_tensor":
        o, to = tc.tensor([2, 3, 4]), torch.tensor([2, 3, 4])
    elif other == "float_tensor":
        o, to = tc.tensor([2.0, 0.5, 4.0]), torch.tensor([2.0, 0.5, 4.0])
    else:
        o, to = other, other
    from core_helpers import error_of

    te, tm = error_of(lambda: getattr(tx, op)(to))
    if te is not None:
        oe, om = error_of(lambda: getattr(x, op)(o))
        assert oe is not None, tm
        return
    r = getattr(tx, op)(to)
    if r is NotImplemented:
        return
    assert_same(getattr(x, op)(o), r, rtol=1e-6)


def test_floor_divide_and_remainder_negative_operands():
    a, ta = pair(np.array([-7, 7, -7, 7]))
    b, tb = pair(np.array([2, -2, -2, 2]))
    assert_same(a // b, ta // tb)
    assert_same(a % b, ta % tb)
    assert_same(a.div(b, rounding_mode="trunc"), ta.div(tb, rounding_mode="trunc"))
    assert_same(a.div(b, rounding_mode="floor"), ta.div(tb, rounding_mode="floor"))
    af, taf = pair(np.array([-7.5, 7.5]))
    assert_same(af % 2, taf % 2)
    assert_same(af // 2, taf // 2)


@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"])
def test_comparisons_and_logical_ops_give_bool(op):
    a, ta = pair(np.array([[1.0, 2.0, 3.0]]))
    b, tb = pair(np.array([[2.0], [1.0]]))
    assert_same(getattr(a, op)(b), getattr(ta, op)(tb))
    if not op.startswith("logical"):
        assert_same(getattr(a, op)(2), getattr(ta, op)(2))
    assert_same(getattr(tc, op)(a, b), getattr(torch, op)(ta, tb))


def test_operator_forms_of_comparisons_and_bitwise():
    a, ta = pair(np.array([1, 2, 3]))
    assert_same(a == 2, ta == 2)
    assert_same(2 < a, 2 < ta)
    m, tm = a > 1, ta > 1
    assert_same(~m, ~tm)
    assert_same(m & (a < 3), tm & (ta < 3))
    assert_same(m | (a < 2), tm | (ta < 2))
    assert_same(m ^ (a < 3), tm ^ (ta < 3))
    assert_same(a & 6, ta & 6)
    assert_same(~a, ~ta)
    assert_same(a.logical_not(), ta.logical_not())
    assert_same(tc.where(m, a, -a), torch.where(tm, ta, -ta))
    assert_same(tc.where(m, a, 0.5), torch.where(tm, ta, 0.5))
    assert_same(tc.where(m, 1.0, 0.0), torch.where(tm, 1.0, 0.0))
    assert_same(tc.where(m, 1, 0), torch.where(tm, 1, 0))
    assert_same(a.isnan(), ta.isnan())


def test_module_level_functions_mirror_methods():
    x, tx = pair(np.array([[0.5, -1.0], [2.0, 3.0]]))
    for name in ("exp", "abs", "sigmoid", "tanh", "relu", "sum", "mean", "neg", "sqrt", "square"):
        fn = getattr(tc, name)
        if name == "sqrt":
            assert_same(fn(x.abs()), getattr(torch, name)(tx.abs()))
        else:
            assert_same(fn(x), getattr(torch, name)(tx))
    assert_same(tc.clamp(x, 0, 1), torch.clamp(tx, 0, 1))
    assert_same(tc.maximum(x, x.t()), torch.maximum(tx, tx.t()))
    assert_same(tc.pow(x, 2), torch.pow(tx, 2))
    assert_same(tc.add(x, 1, alpha=2) if False else tc.add(x, x, alpha=2), torch.add(tx, tx, alpha=2))


def test_maximum_tie_gradient_is_split():
    a, ta = pair(np.array([1.0, 2.0]), requires_grad=True)
    b, tb = pair(np.array([1.0, 3.0]), requires_grad=True)
    a.maximum(b).sum().backward()
    ta.maximum(tb).sum().backward()
    assert_same(a.grad, ta.grad)
    assert_same(b.grad, tb.grad)


def test_clamp_with_tensor_bounds_and_grads():
    x, tx = pair(np.array([-2.0, 0.0, 2.0]), requires_grad=True)
    lo, tlo = pair(np.array([-1.0, 0.5, 0.0]))
    hi, thi = pair(np.array([1.0, 1.0, 1.5]))
    out, tout = x.clamp(min=lo, max=hi), tx.clamp(min=tlo, max=thi)
    assert_same(out, tout)
    out.sum().backward()
    tout.sum().backward()
    assert_same(x.grad, tx.grad)


# ---- reductions -------------------------------------------------------------------------------------

REDUCTIONS = {
    "sum": lambda x, d, k: x.sum(d, keepdim=k) if d is not None else x.sum(),
    "mean": lambda x, d, k: x.mean(d, keepdim=k) if d is not None else x.mean(),
    "var": lambda x, d, k: x.var(d, keepdim=k) if d is not None else x.var(),
    "std": lambda x, d, k: x.std(d, keepdim=k) if d is not None else x.std(),
    "var_biased": lambda x, d, k: x.var(d, unbiased=False, keepdim=k),
    "std_correction0": lambda x, d, k: x.std(d, correction=0, keepdim=k),
    "max": lambda x, d, k: x.max(d, keepdim=k) if isinstance(d, int) else x.max(),
    "min": lambda x, d, k: x.min(d, keepdim=k) if isinstance(d, int) else x.min(),
    "amax": lambda x, d, k: x.amax(d, keepdim=k) if d is not None else x.amax(),
    "argmax": lambda x, d, k: x.argmax(d, keepdim=k) if isinstance(d, int) else x.argmax(),
    "argmin": lambda x, d, k: x.argmin(d, keepdim=k) if isinstance(d, int) else x.argmin(),
    "prod": lambda x, d, k: x.prod(d, keepdim=k) if isinstance(d, int) else x.prod(),
    "cumsum": lambda x, d, k: x.cumsum(d if isinstance(d, int) else 0),
    "logsumexp": lambda x, d, k: x.logsumexp(d if d is not None else 0, keepdim=k),
    "norm": lambda x, d, k: x.norm(dim=d, keepdim=k),
    "norm1": lambda x, d, k: x.norm(1, dim=d, keepdim=k),
    "norm3": lambda x, d, k: x.norm(3, dim=d, keepdim=k),
    "norminf": lambda x, d, k: x.norm(float("inf"), dim=d, keepdim=k),
    "all": lambda x, d, k: (x > 0).all(d, keepdim=k) if isinstance(d, int) else (x > 0).all(),
    "any": lambda x, d, k: (x > 0).any(d, keepdim=k) if isinstance(d, int) else (x > 0).any(),
}


ONE_DIM_ONLY = ("max", "min", "argmax", "argmin", "prod", "cumsum", "all", "any")  # torch takes a single dim


@pytest.mark.parametrize("name,dim", [(n, d) for n in sorted(REDUCTIONS) for d in (None, 0, 1, -1, (0, 2))
                                      if not (isinstance(d, tuple) and n in ONE_DIM_ONLY)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions_match_torch(name, dim, keepdim):
    rng = np.random.default_rng(3)
    x, tx = pair(rng.standard_normal((3, 4, 2)), requires_grad=True)
    out, tout = REDUCTIONS[name](x, dim, keepdim), REDUCTIONS[name](tx, dim, keepdim)
    assert_same(out, tout)
    first, tfirst = (out[0], tout[0]) if isinstance(tout, tuple) else (out, tout)
    if tfirst.requires_grad:
        g = rng.standard_normal(tuple(tfirst.shape))
        first.backward(tc.tensor(g))
        tfirst.backward(torch.tensor(g))
        assert_same(x.grad, tx.grad)


@given(x_np=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4), elements=FLOATS),
       data=st.data())
def test_reductions_over_random_shapes(x_np, data):
    dim = data.draw(st.integers(-x_np.ndim, x_np.ndim - 1))
    keep = data.draw(st.booleans())
    x, tx = pair(x_np, requires_grad=True)
    for fn in (lambda t: t.sum(dim, keepdim=keep), lambda t: t.mean(dim, keepdim=keep),
               lambda t: t.max(dim, keepdim=keep).values, lambda t: t.logsumexp(dim, keepdim=keep),
               lambda t: t.cumsum(dim), lambda t: t.prod(dim, keepdim=keep)):
        out, tout = fn(x), fn(tx)
        assert_same(out, tout)
        x.grad = None
        tx.grad = None
        out.sum().backward()
        tout.sum().backward()
        assert_same(x.grad, tx.grad, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "float16", "float64"])
def test_reduction_dtypes_match_torch(dtype):
    base = np.array([[1, 0, 3], [4, 5, 0]])
    x, tx = tc.tensor(base).to(getattr(tc, dtype)), torch.tensor(base).to(getattr(torch, dtype))
    for fn in (lambda t: t.sum(), lambda t: t.sum(0), lambda t: t.prod(), lambda t: t.cumsum(1),
               lambda t: t.max(), lambda t: t.argmax(), lambda t: t.all(), lambda t: t.any(1),
               lambda t: t.sum(dtype=t.dtype)):
        te, tm = error_of(lambda: fn(tx))
        if te is not None:
            oe, om = error_of(lambda: fn(x))
            assert oe is not None and issubclass(oe, te), (om, tm)
            continue
        assert_same(fn(x), fn(tx), rtol=1e-3)


def test_mean_of_integers_fails_like_torch():
    x, tx = pair(np.array([1, 2]))
    assert_same_error(lambda: x.mean(), lambda: tx.mean())


def test_prod_gradient_with_zeros():
    x, tx = pair(np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 1.0], [1.0, 2.0, 3.0]]), requires_grad=True)
    for fn in (lambda t: t.prod(), lambda t: t.prod(1), lambda t: t.prod(0)):
        x.grad = tx.grad = None
        fn(x).sum().backward()
        fn(tx).sum().backward()
        assert_same(x.grad, tx.grad)


def test_max_min_all_tie_gradients_match_torch():
    x, tx = pair(np.array([1.0, 3.0, 3.0, 0.0]), requires_grad=True)
    x.max().backward()
    tx.max().backward()
    assert_same(x.grad, tx.grad)
    x.grad = tx.grad = None
    x.max(0).values.backward()
    tx.max(0).values.backward()
    assert_same(x.grad, tx.grad)


def test_max_with_dim_returns_named_tuple():
    x, tx = pair(np.array([[1.0, 5.0], [7.0, 2.0]]))
    r, tr = x.max(1), tx.max(1)
    assert_same(r.values, tr.values)
    assert_same(r.indices, tr.indices)
    v, i = x.min(0)
    assert_same(v, tr.values * 0 + torch.tensor([1.0, 2.0]))
    assert_same(x.max(x.flip(0)), tx.max(tx.flip(0)))


def test_python_ints_outside_an_integer_dtype_wrap_like_torch():
    for dtype, value in (("int8", 200), ("uint8", -2), ("int32", 2 ** 40), ("int16", -40000)):
        x, tx = tc.tensor([1, 100], dtype=getattr(tc, dtype)), torch.tensor([1, 100], dtype=getattr(torch, dtype))
        assert_same(x + value, tx + value)
        assert_same(x * value, tx * value)


def test_sign_of_nan_is_zero_like_torch():
    values = [float("nan"), -0.0, -2.5, 3.0, float("inf")]
    assert tc.tensor(values).sign().tolist() == torch.tensor(values).sign().tolist()
    assert tc.tensor(values, dtype=tc.float64).sign_().tolist() == [0.0, 0.0, -1.0, 1.0, 1.0]
