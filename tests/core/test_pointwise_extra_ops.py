"""More element-wise math (trig/hyperbolic, erf family, atan2, hypot, logaddexp, xlogy, fmod, copysign, fmax,
lerp, addcmul, logit, nan_to_num, ...), var_mean/std_mean/nansum/nanmean/aminmax and finfo/iinfo/can_cast:
values, dtypes, node names, gradients and errors vs PyTorch."""

import numpy as np
import pytest
import torch
from core_helpers import assert_same, assert_same_error, assert_same_values_and_sum_grads, pair
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tinygrad_course as tc
from gradcheck_table import gradcheck_tests

# name -> (input transform keeping values in the domain, gradcheck-safe)
UNARY = {
    "tan": lambda x: x * 0.6, "asin": lambda x: x * 0.4, "acos": lambda x: x * 0.4, "atan": lambda x: x,
    "sinh": lambda x: x, "cosh": lambda x: x, "asinh": lambda x: x, "acosh": lambda x: x.abs() + 1.2,
    "atanh": lambda x: x * 0.4, "erf": lambda x: x, "erfc": lambda x: x, "erfinv": lambda x: x * 0.4,
    "exp2": lambda x: x, "sinc": lambda x: x, "deg2rad": lambda x: x * 50, "rad2deg": lambda x: x,
    "arcsin": lambda x: x * 0.4, "arccos": lambda x: x * 0.4, "arctan": lambda x: x, "arcsinh": lambda x: x,
    "arccosh": lambda x: x.abs() + 1.2, "arctanh": lambda x: x * 0.4, "frac": lambda x: x * 1.7,
    "logit": lambda x: x.abs() * 0.4 + 0.05, "sgn": lambda x: x, "nan_to_num": lambda x: x,
}
NODE = {"arcsin": "AsinBackward0", "arccos": "AcosBackward0", "arctan": "AtanBackward0",
        "arcsinh": "AsinhBackward0", "arccosh": "AcoshBackward0", "arctanh": "AtanhBackward0"}


def _x(*shape, seed=0, low=-2.0, high=2.0):
    rng = np.random.default_rng(seed)
    return tc.tensor(rng.uniform(low, high, shape), dtype=tc.float64, requires_grad=True)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_grads_and_node_names_match_torch(name):
    for shape in [(), (5,), (2, 3), (0, 2)]:
        data = UNARY[name](torch.tensor(np.random.default_rng(1).uniform(-1.5, 1.5, shape))).numpy()
        a, ta = pair(data, requires_grad=True)
        out, tout = getattr(tc, name)(a), getattr(torch, name)(ta)
        assert_same(out, tout, rtol=1e-6, atol=1e-8)
        assert out.grad_fn.name() == tout.grad_fn.name()
        out.sum().backward()
        tout.sum().backward()
        assert_same(a.grad, torch.tensor(ta.grad.numpy(force=True)), rtol=1e-6, atol=1e-8)  # sgn: a ZeroTensor


@pytest.mark.parametrize("name", ["tan", "asin", "atan", "sinh", "erf", "erfc", "erfinv", "exp2", "sinc",
                                  "deg2rad", "rad2deg", "logit", "sgn", "nan_to_num", "signbit", "isposinf",
                                  "isneginf", "isreal", "atanh"])
def test_unary_result_dtypes_match_torch(name):
    for dtype in ["bool", "int32", "int64", "float16", "float32"]:
        data = np.array([0, 1, 0, 1]) if dtype == "bool" else np.array([-3, 0, 1, 2])
        if dtype.startswith("float"):
            data = np.array([-0.7, 0.0, 0.3, 0.9])
        t = torch.tensor(data).to(getattr(torch, dtype))
        ours = getattr(tc, name)(tc.tensor(data).to(getattr(tc, dtype)))
        assert_same(ours, getattr(torch, name)(t), rtol=2e-3, atol=1e-6)


def test_erf_family_extremes_and_special_values():
    data = np.array([-np.inf, -30.0, -1e-8, 0.0, 5.0, 30.0, np.inf, np.nan])
    a, ta = pair(data)
    for name in ("erf", "erfc", "tan", "sinc", "exp2", "atanh"):
        assert_same(getattr(a, name)(), getattr(ta, name)())
    p, tp = pair(np.array([-1.0, -0.999999, -0.5, 0.0, 0.3, 0.999999, 1.0, 1.5, np.nan]))
    assert_same(p.erfinv(), tp.erfinv(), rtol=1e-7)


def test_erfinv_fallback_without_scipy_matches_torch(monkeypatch):
    from tinygrad_course.ops import pointwise_unary as P

    monkeypatch.setattr(P, "special", lambda xp, name, a: None)
    p, tp = pair(np.array([-1.0, -0.9999, -0.7, -0.1, 0.0, 0.2, 0.5, 0.95, 0.999999, 1.0, 1.2]))
    assert_same(p.erfinv(), tp.erfinv(), rtol=1e-9, atol=1e-12)
    assert_same(p.erfc(), tp.erfc(), rtol=1e-6, atol=1e-7)


def test_logit_eps_and_grad_outside_the_clamp():
    data = np.array([-0.5, 0.0, 0.05, 0.5, 0.97, 1.0, 1.4])
    for eps in (None, 0.1, 0.0):
        a, ta = pair(data, requires_grad=True)
        out, tout = a.logit(eps), ta.logit(eps)
        assert_same(out, tout)
        out.backward(tc.ones_like(out))
        tout.backward(torch.ones_like(tout))
        assert_same(a.grad, ta.grad)


def test_nan_to_num_defaults_and_arguments():
    data = np.array([np.nan, np.inf, -np.inf, 1.5])
    for dtype in ("float16", "float32", "float64"):
        a, ta = tc.tensor(data).to(getattr(tc, dtype)), torch.tensor(data).to(getattr(torch, dtype))
        assert_same(a.nan_to_num(), ta.nan_to_num())
        assert_same(tc.nan_to_num(a, nan=2.0, posinf=9.0, neginf=-9.0), torch.nan_to_num(ta, 2.0, 9.0, -9.0))
    x, tx = pair(data, requires_grad=True)
    x.nan_to_num().sum().backward()
    tx.nan_to_num().sum().backward()
    assert_same(x.grad, tx.grad)


def test_frac_positive_and_predicates():
    data = np.array([-2.5, -0.0, 0.0, 1.25, np.inf, -np.inf, np.nan])
    a, ta = pair(data)
    for name in ("frac", "sgn", "signbit", "isposinf", "isneginf", "isreal", "positive"):
        assert_same(getattr(tc, name)(a), getattr(torch, name)(ta))
    assert tc.positive(a) is a
    b, tb = pair(np.array([True, False]))
    assert_same_error(lambda: b.positive(), lambda: tb.positive())
    assert_same_error(lambda: tc.tensor([1, 2]).frac(), lambda: torch.tensor([1, 2]).frac())


# ---- two-argument functions ------------------------------------------------------------------------------

BINARY = {
    "atan2": lambda a, b: (a, b), "hypot": lambda a, b: (a, b),
    "logaddexp": lambda a, b: (a, b), "logaddexp2": lambda a, b: (a, b), "xlogy": lambda a, b: (a, b.abs() + 0.1),
    "fmod": lambda a, b: (a * 3, b.abs() + 0.5), "copysign": lambda a, b: (a, b), "fmax": lambda a, b: (a, b),
    "fmin": lambda a, b: (a, b),
}


def broadcastable_pair():
    return hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4).map(
        lambda r: r.input_shapes)


@given(name=st.sampled_from(sorted(BINARY)), shapes=broadcastable_pair(), data=st.data())
def test_binary_values_grads_match_torch_with_broadcasting(name, shapes, data):
    floats = st.floats(-3, 3, allow_nan=False, width=32).filter(lambda v: abs(v) > 1e-3)
    a_np = data.draw(hnp.arrays(np.float64, shapes[0], elements=floats))
    b_np = data.draw(hnp.arrays(np.float64, shapes[1], elements=floats))
    a_np, b_np = (v.numpy() for v in BINARY[name](torch.tensor(a_np), torch.tensor(b_np)))
    a, ta = pair(a_np, requires_grad=True)
    b, tb = pair(b_np, requires_grad=True)
    out, tout = getattr(tc, name)(a, b), getattr(torch, name)(ta, tb)
    assert_same(out, tout)
    assert out.grad_fn.name() == tout.grad_fn.name()
    g = np.random.default_rng(0).standard_normal(tout.shape)
    out.backward(tc.tensor(g))
    tout.backward(torch.tensor(g))
    assert_same(a.grad, ta.grad, rtol=1e-6, atol=1e-9)
    assert_same(b.grad, tb.grad, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", ["atan2", "hypot", "logaddexp", "logaddexp2", "xlogy", "fmod", "copysign",
                                  "fmax", "fmin", "heaviside"])
def test_binary_result_dtypes_and_errors_match_torch(name):
    a_np, b_np = np.array([3, 0, -2, 5]), np.array([2, 1, 0, -3])
    for dtypes in [("int64", "int64"), ("int32", "float32"), ("float32", "float64"), ("bool", "bool"),
                   ("float16", "float16"), ("int64", "int32")]:
        ours = (tc.tensor(a_np).to(getattr(tc, dtypes[0])), tc.tensor(b_np).to(getattr(tc, dtypes[1])))
        theirs = (torch.tensor(a_np).to(getattr(torch, dtypes[0])), torch.tensor(b_np).to(getattr(torch, dtypes[1])))
        try:
            expected = getattr(torch, name)(*theirs)
        except (RuntimeError, NotImplementedError):
            assert_same_error(lambda: getattr(tc, name)(*ours), lambda: getattr(torch, name)(*theirs))
            continue
        assert_same(getattr(tc, name)(*ours), expected, rtol=2e-3, atol=1e-6)


def test_nan_handling_of_fmax_fmin_and_their_gradients():
    a_np = np.array([1.0, np.nan, np.nan, 2.0, 3.0])
    b_np = np.array([np.nan, 1.0, np.nan, 2.0, -1.0])
    for name in ("fmax", "fmin"):
        a, ta = pair(a_np, requires_grad=True)
        b, tb = pair(b_np, requires_grad=True)
        assert_same_values_and_sum_grads(getattr(a, name)(b), getattr(ta, name)(tb), (a, ta), (b, tb))


def test_scalar_overloads_have_torch_node_names():
    a, ta = pair(np.array([0.0, 0.5, 2.0, -1.5]), requires_grad=True)
    cases = [
        (lambda m, x: m.xlogy(x, 3.0)), (lambda m, x: m.xlogy(2.0, x.abs())), (lambda m, x: m.fmod(x, 0.7)),
        (lambda m, x: m.copysign(x, -1.0)), (lambda m, x: m.lerp(x, x * 2, 0.3)),
        (lambda m, x: m.lerp(x, x * 2, x)), (lambda m, x: m.float_power(x, 2)),
    ]
    for fn in cases:
        out, tout = fn(tc, a), fn(torch, ta)
        assert_same(out, tout)
        assert out.grad_fn.name() == tout.grad_fn.name()
        out.sum().backward()
        tout.sum().backward()
        assert_same(a.grad, ta.grad)
        a.grad = ta.grad = None


def test_xlogy_zero_and_nan_rules():
    x, tx = pair(np.array([0.0, 0.0, 0.0, 1.0, 2.0]), requires_grad=True)
    y, ty = pair(np.array([0.0, np.nan, -1.0, 0.0, 3.0]), requires_grad=True)
    assert_same_values_and_sum_grads(tc.xlogy(x, y), torch.xlogy(tx, ty), (x, tx), (y, ty))


def test_fmod_keeps_integer_dtypes_and_refuses_integer_division_by_zero():
    a, ta = pair(np.array([7, -7, 5]))
    assert_same(tc.fmod(a, 3), torch.fmod(ta, 3))
    assert_same(a.fmod(tc.tensor([2, 3, -4])), ta.fmod(torch.tensor([2, 3, -4])))
    assert_same_error(lambda: tc.fmod(a, 0), lambda: torch.fmod(ta, 0))


def test_heaviside_values_and_missing_derivative():
    x, tx = pair(np.array([-1.0, 0.0, 2.0, np.nan]))
    v, tv = pair(np.array([0.5]))
    assert_same(tc.heaviside(x, v), torch.heaviside(tx, tv))
    assert_same_error(lambda: tc.heaviside(x, tc.tensor([1])), lambda: torch.heaviside(tx, torch.tensor([1])))
    xr = tc.tensor([1.0, -1.0], requires_grad=True)
    out = xr.heaviside(tc.tensor([0.5]))
    assert out.requires_grad
    with pytest.raises(RuntimeError, match="derivative for 'heaviside' is not implemented"):
        out.sum().backward()


# ---- three-argument functions ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["lerp_scalar", "lerp_tensor", "addcmul", "addcdiv"])
def test_ternary_values_grads_with_broadcasting(name):
    rng = np.random.default_rng(3)
    shapes = [(2, 1, 3), (4, 1), (3,)]
    arrays = [rng.uniform(0.5, 2.0, s) for s in shapes]
    ours = [tc.tensor(v, requires_grad=True) for v in arrays]
    theirs = [torch.tensor(v, requires_grad=True) for v in arrays]

    def run(m, s, e, w):
        if name == "lerp_scalar":
            return m.lerp(s, e, 0.7)
        if name == "lerp_tensor":
            return m.lerp(s, e, w)
        return getattr(m, name)(s, e, w, value=-1.5)

    out, tout = run(tc, *ours), run(torch, *theirs)
    assert_same(out, tout)
    assert out.grad_fn.name() == tout.grad_fn.name()
    out.sum().backward()
    tout.sum().backward()
    for o, t in zip(ours, theirs):
        if t.grad is None:
            assert o.grad is None
        else:
            assert_same(o.grad, t.grad)


def test_ternary_dtypes_and_errors():
    i, ti = pair(np.array([1, 2, 3]))
    f, tf = pair(np.array([1.0, 2.0, 3.0]).astype(np.float32))
    d, td = pair(np.array([1.0, 2.0, 3.0]))
    assert_same(tc.addcmul(i, i, i, value=2), torch.addcmul(ti, ti, ti, value=2))
    assert_same(tc.addcmul(i, f, i), torch.addcmul(ti, tf, ti))
    assert_same(tc.addcdiv(i, f, f), torch.addcdiv(ti, tf, tf))
    assert_same_error(lambda: tc.addcdiv(f, i, i), lambda: torch.addcdiv(tf, ti, ti))
    assert_same_error(lambda: tc.lerp(i, i, 0.5), lambda: torch.lerp(ti, ti, 0.5))
    assert_same_error(lambda: tc.lerp(f, d, 0.5), lambda: torch.lerp(tf, td, 0.5))
    assert_same_error(lambda: tc.lerp(f, f, d), lambda: torch.lerp(tf, tf, td))


def test_in_place_variants_match_torch():
    base = np.array([0.2, -0.4, 0.7])
    other = np.array([0.5, 1.5, -2.0])
    cases = {
        "tan_": (), "arcsin_": (), "erf_": (), "erfinv_": (), "exp2_": (), "sinc_": (), "deg2rad_": (),
        "frac_": (), "sgn_": (), "logit_": (), "nan_to_num_": (), "atan2_": ("o",), "hypot_": ("o",),
        "xlogy_": ("oabs",), "fmod_": ("o",), "copysign_": ("o",), "lerp_": ("o", 0.25),
        "addcmul_": ("o", "o"), "addcdiv_": ("o", "o"),
    }
    for name, spec in cases.items():
        a, ta = pair(base)
        args = [(tc.tensor(other), torch.tensor(other)) if s == "o" else
                (tc.tensor(np.abs(other)), torch.tensor(np.abs(other))) if s == "oabs" else (s, s) for s in spec]
        ra = getattr(a, name)(*[x[0] for x in args])
        getattr(ta, name)(*[x[1] for x in args])
        assert ra is a
        assert_same(a, ta)
    f, tf = pair(np.array([1.0, 2.0]).astype(np.float32))
    assert_same_error(lambda: f.float_power_(2), lambda: tf.float_power_(2))
    assert_same_error(lambda: tc.tensor([1, 2]).tan_(), lambda: torch.tensor([1, 2]).tan_())
    d, td = pair(np.array([1.0, 2.0]))
    d.float_power_(3)
    td.float_power_(3)
    assert_same(d, td)


def test_in_place_math_records_the_graph():
    x, tx = pair(np.array([0.3, -0.2]), requires_grad=True)
    y, ty = x * 1, tx * 1
    y.atan_()
    ty.atan_()
    assert y.grad_fn.name() == ty.grad_fn.name() == "AtanBackward0"
    y.sum().backward()
    ty.sum().backward()
    assert_same(x.grad, tx.grad)


# ---- reductions --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn_name", ["var_mean", "std_mean"])
@pytest.mark.parametrize("kwargs", [{}, {"dim": 1}, {"dim": (0, -1), "keepdim": True}, {"dim": -1, "correction": 0},
                                    {"unbiased": False}, {"dim": 0, "unbiased": False}])
def test_var_mean_std_mean_match_torch(fn_name, kwargs):
    data = np.random.default_rng(2).standard_normal((3, 4, 2))
    a, ta = pair(data, requires_grad=True)
    out, tout = getattr(tc, fn_name)(a, **kwargs), getattr(torch, fn_name)(ta, **kwargs)
    assert isinstance(out, tuple) and len(out) == 2
    assert_same(out, tout)
    assert out[0].grad_fn.name() == tout[0].grad_fn.name()
    g1, g2 = np.random.default_rng(5).standard_normal((2,) + tuple(tout[0].shape))
    (out[0] * tc.tensor(g1) + out[1] * tc.tensor(g2)).sum().backward()
    (tout[0] * torch.tensor(g1) + tout[1] * torch.tensor(g2)).sum().backward()
    assert_same(a.grad, ta.grad)


def test_var_mean_positional_forms_and_errors():
    data = np.random.default_rng(2).standard_normal((3, 4))
    a, ta = pair(data)
    assert_same(tc.var_mean(a, 1), torch.var_mean(ta, 1))
    assert_same(tc.std_mean(a, False), torch.std_mean(ta, False))
    assert_same(tc.var_mean(a, 0, True, True), torch.var_mean(ta, 0, True, True))
    i, ti = pair(np.array([1, 2]))
    assert_same_error(lambda: tc.var_mean(i), lambda: torch.var_mean(ti))
    assert_same_error(lambda: tc.std_mean(i), lambda: torch.std_mean(ti))


@pytest.mark.parametrize("kwargs", [{}, {"dim": 0}, {"dim": -1, "keepdim": True}, {"dim": (0, 1)}])
def test_nansum_nanmean_match_torch(kwargs):
    data = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, 2.0]])
    a, ta = pair(data, requires_grad=True)
    for name in ("nansum", "nanmean"):
        out, tout = getattr(tc, name)(a, **kwargs), getattr(torch, name)(ta, **kwargs)
        assert_same(out, tout)
        out.sum().backward()
        tout.sum().backward()
        assert_same(a.grad, ta.grad)
        a.grad = ta.grad = None
    assert tc.nansum(a).grad_fn.name() == "NansumBackward0"


def test_nansum_nanmean_dtypes_and_errors():
    i, ti = pair(np.array([[1, 2], [3, 4]]).astype(np.int32))
    assert_same(tc.nansum(i), torch.nansum(ti))
    assert_same(i.nansum(1, dtype=tc.float64), ti.nansum(1, dtype=torch.float64))
    assert_same_error(lambda: tc.nanmean(i), lambda: torch.nanmean(ti))
    h, th = pair(np.array([1.0, np.nan]).astype(np.float16))
    assert_same(h.nanmean(), th.nanmean(), rtol=1e-3)
    e, te = pair(np.zeros((0, 3)))
    assert_same(e.nansum(0), te.nansum(0))


@pytest.mark.parametrize("kwargs", [{}, {"dim": 0}, {"dim": -1, "keepdim": True}])
def test_aminmax_named_pair_values_and_tied_gradients(kwargs):
    data = np.array([[1.0, 5.0, 5.0], [-2.0, -2.0, 0.5]])
    a, ta = pair(data, requires_grad=True)
    out, tout = tc.aminmax(a, **kwargs), torch.aminmax(ta, **kwargs)
    assert_same(out.min, tout.min)
    assert_same(out.max, tout.max)
    assert out.min.grad_fn.name() == tout.min.grad_fn.name()
    (out.min * 2 + out.max * 3).sum().backward()
    (tout.min * 2 + tout.max * 3).sum().backward()
    assert_same(a.grad, ta.grad)
    assert "aminmax(" in repr(out) and "min=" in repr(out)
    i, ti = pair(np.array([3, 1, 2]))
    assert_same(tuple(i.aminmax()), tuple(ti.aminmax()))
    assert_same_error(lambda: tc.aminmax(tc.zeros(0)), lambda: torch.aminmax(torch.zeros(0)))


# ---- dtype information -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64"])
def test_finfo_matches_torch(name):
    ours, theirs = tc.finfo(getattr(tc, name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert repr(ours) == repr(theirs)


def test_finfo_default_iinfo_and_can_cast():
    assert tc.finfo().dtype == "float32"
    for name in ("uint8", "int8", "int16", "int32", "int64"):
        ours, theirs = tc.iinfo(getattr(tc, name)), torch.iinfo(getattr(torch, name))
        assert (ours.bits, ours.min, ours.max, ours.dtype) == (theirs.bits, theirs.min, theirs.max, theirs.dtype)
        assert repr(ours) == repr(theirs)
    with pytest.raises(TypeError):
        tc.finfo(tc.int32)
    with pytest.raises(TypeError):
        tc.iinfo(tc.float32)
    with pytest.raises(TypeError):
        tc.iinfo(tc.bool)
    names = ["bool", "uint8", "int32", "int64", "float16", "float32", "float64"]
    for a in names:
        for b in names:
            assert tc.can_cast(getattr(tc, a), getattr(tc, b)) == torch.can_cast(getattr(torch, a), getattr(torch, b))


def test_tc_functions_exist_for_every_method():
    for name in ("tan", "arctan2", "logaddexp2", "nan_to_num", "lerp", "addcdiv", "float_power", "nanmean",
                 "aminmax", "isreal", "xlogy", "var_mean", "std_mean", "finfo", "iinfo", "can_cast"):
        assert callable(getattr(tc, name)), name


# ---- gradcheck ---------------------------------------------------------------------------------------------

CASES = {
    "tan": (lambda a: a.tan(), lambda: (_x(2, 3, low=-1, high=1),)),
    "asin": (lambda a: a.asin(), lambda: (_x(4, low=-0.8, high=0.8),)),
    "acos": (lambda a: a.acos(), lambda: (_x(4, low=-0.8, high=0.8),)),
    "atan": (lambda a: a.atan(), lambda: (_x(4),)),
    "sinh": (lambda a: a.sinh(), lambda: (_x(4),)),
    "cosh": (lambda a: a.cosh(), lambda: (_x(4),)),
    "asinh": (lambda a: a.asinh(), lambda: (_x(4),)),
    "acosh": (lambda a: a.acosh(), lambda: (_x(4, low=1.2, high=3),)),
    "atanh": (lambda a: a.atanh(), lambda: (_x(4, low=-0.8, high=0.8),)),
    "erf": (lambda a: a.erf(), lambda: (_x(2, 3),)),
    "erfc": (lambda a: a.erfc(), lambda: (_x(4),)),
    "erfinv": (lambda a: a.erfinv(), lambda: (_x(4, low=-0.8, high=0.8),)),
    "exp2": (lambda a: a.exp2(), lambda: (_x(4),)),
    "sinc": (lambda a: a.sinc(), lambda: (_x(5),)),
    "deg2rad": (lambda a: a.deg2rad(), lambda: (_x(3),)),
    "rad2deg": (lambda a: a.rad2deg(), lambda: (_x(3),)),
    "frac": (lambda a: a.frac(), lambda: (_x(4, low=0.1, high=0.9) + 1,)),
    "logit": (lambda a: a.logit(), lambda: (_x(4, low=0.1, high=0.9),)),
    "logit_eps": (lambda a: a.logit(0.05), lambda: (_x(4, low=0.1, high=0.9),)),
    "nan_to_num": (lambda a: a.nan_to_num(), lambda: (_x(4),)),
    "atan2": (lambda a, b: a.atan2(b), lambda: (_x(2, 3), _x(3, seed=1, low=0.5))),
    "hypot": (lambda a, b: a.hypot(b), lambda: (_x(2, 3), _x(2, 1, seed=1, low=0.5))),
    "logaddexp": (lambda a, b: a.logaddexp(b), lambda: (_x(2, 3), _x(3, seed=1))),
    "logaddexp2": (lambda a, b: a.logaddexp2(b), lambda: (_x(2, 3), _x(3, seed=1))),
    "xlogy": (lambda a, b: a.xlogy(b), lambda: (_x(2, 3), _x(3, seed=1, low=0.5))),
    "fmod": (lambda a, b: a.fmod(b), lambda: (_x(4, low=0.1, high=0.9), _x(4, seed=1, low=1.1, high=2))),
    "copysign": (lambda a, b: a.copysign(b), lambda: (_x(4, low=0.2), _x(4, seed=1))),
    "fmax": (lambda a, b: a.fmax(b), lambda: (_x(5), _x(5, seed=1))),
    "fmin": (lambda a, b: a.fmin(b), lambda: (_x(5), _x(1, seed=1))),
    "lerp": (lambda a, b: a.lerp(b, 0.3), lambda: (_x(2, 3), _x(3, seed=1))),
    "lerp_tensor": (lambda a, b, w: a.lerp(b, w), lambda: (_x(2, 3), _x(3, seed=1), _x(2, 1, seed=2))),
    "addcmul": (lambda a, b, c: a.addcmul(b, c, value=0.5), lambda: (_x(3), _x(2, 3, seed=1), _x(2, 1, seed=2))),
    "addcdiv": (lambda a, b, c: a.addcdiv(b, c, value=2), lambda: (_x(3), _x(2, 3, seed=1), _x(3, seed=2, low=0.5))),
    "float_power": (lambda a, b: a.float_power(b), lambda: (_x(4, low=0.5), _x(4, seed=1))),
    "var_mean": (lambda a: tc.var_mean(a, 1)[0] + tc.var_mean(a, 1)[1] * 2, lambda: (_x(2, 3),)),
    "std_mean": (lambda a: sum(tc.std_mean(a, 0, keepdim=True)), lambda: (_x(3, 2),)),
    "nansum": (lambda a: a.nansum(1), lambda: (_x(2, 3),)),
    "nanmean": (lambda a: a.nanmean(0), lambda: (_x(2, 3),)),
    "aminmax": (lambda a: a.aminmax(dim=1).min * 2 + a.aminmax(dim=1).max, lambda: (_x(2, 3),)),
}
SECOND_ORDER = sorted(set(CASES) - {"frac", "fmax", "fmin", "fmod", "copysign", "nansum", "aminmax"})


test_gradcheck, test_gradgradcheck = gradcheck_tests(CASES, SECOND_ORDER, eps=1e-6, atol=1e-5, second_atol=1e-4,
                                                     rtol=1e-3)
