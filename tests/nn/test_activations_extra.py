"""The further activations and distances of tc.nn / tc.nn.functional against PyTorch: values, gradients
(including at the kinks), grad_fn names, in-place variants, module reprs, errors, and a gradcheck table."""
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import tinygrad_course as tc
import tinygrad_course.nn as nn
import tinygrad_course.nn.functional as F
from nn_helpers import assert_close, to_torch
from gradcheck_table import gradcheck_tests

TF = torch.nn.functional

# values on and around every kink and saturation point of the activations below
SPECIAL = [0.0, 6.0, 3.0, -3.0, -1.0, 1.0, 7.0, -0.5, 0.5, 0.7, -0.7, 2.5, 20.0, 21.0, -30.0, 100.0, -100.0]


def _np(t):
    return t.detach().cpu().numpy()


def _run(fn, values, dtype="float64"):
    """fn(functional module, x) on both frameworks: (tc out, torch out, tc grad, torch grad)."""
    x = tc.tensor(values, dtype=getattr(tc, dtype), requires_grad=True)
    tx = to_torch(x)
    out, tout = fn(F, x), fn(TF, tx)
    upstream = tc.randn(*out.shape, dtype=out.dtype)
    out.backward(upstream)
    tout.backward(to_torch(upstream))
    return out, tout, x.grad, tx.grad


ELEMENTWISE = {
    "softplus": lambda M, x: M.softplus(x),
    "softplus_beta": lambda M, x: M.softplus(x, beta=2, threshold=5),
    "elu": lambda M, x: M.elu(x),
    "elu_alpha": lambda M, x: M.elu(x, alpha=0.5),
    "selu": lambda M, x: M.selu(x),
    "celu": lambda M, x: M.celu(x, alpha=2.0),
    "relu6": lambda M, x: M.relu6(x),
    "hardtanh": lambda M, x: M.hardtanh(x),
    "hardtanh_bounds": lambda M, x: M.hardtanh(x, -0.5, 3.0),
    "hardsigmoid": lambda M, x: M.hardsigmoid(x),
    "hardswish": lambda M, x: M.hardswish(x),
    "mish": lambda M, x: M.mish(x),
    "logsigmoid": lambda M, x: M.logsigmoid(x),
    "softsign": lambda M, x: M.softsign(x),
    "tanhshrink": lambda M, x: M.tanhshrink(x),
    "softshrink": lambda M, x: M.softshrink(x),
    "softshrink_lambd": lambda M, x: M.softshrink(x, 1.0),
    "hardshrink": lambda M, x: M.hardshrink(x),
    "hardshrink_lambd": lambda M, x: M.hardshrink(x, 0.7),
    "threshold": lambda M, x: M.threshold(x, 0.5, -2.0),
    "rrelu_eval": lambda M, x: M.rrelu(x),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_values_grads_and_kinks_match_torch(name):
    out, tout, g, tg = _run(ELEMENTWISE[name], SPECIAL)
    assert_close(out, tout, atol=1e-12, rtol=1e-7)
    assert_close(g, tg, atol=1e-7, rtol=1e-6)  # torch's hardsigmoid slope is 1/6 rounded to float32
    assert out.grad_fn.name() == tout.grad_fn.name()


@pytest.mark.parametrize("name", ["softplus", "elu", "relu6", "hardswish", "mish", "logsigmoid", "softshrink"])
def test_float32_values_match_torch(name):
    x = tc.randn(3, 5) * 4
    out, tout = ELEMENTWISE[name](F, x), ELEMENTWISE[name](TF, to_torch(x))
    assert_close(out, tout, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("name", ["softplus", "logsigmoid", "mish"])
def test_no_overflow_for_huge_inputs(name):
    x = tc.tensor([-1e4, -500.0, 500.0, 1e4], requires_grad=True)
    out = ELEMENTWISE[name](F, x)
    out.sum().backward()
    assert np.isfinite(_np(out)).all() and np.isfinite(_np(x.grad)).all()
    tx = to_torch(x)
    tout = ELEMENTWISE[name](TF, tx)
    tout.sum().backward()
    assert_close(out, tout)
    assert_close(x.grad, tx.grad)


INPLACE = {
    "elu_": lambda M, x: M.elu_(x, 0.5),
    "elu_inplace": lambda M, x: M.elu(x, inplace=True),
    "selu_": lambda M, x: M.selu_(x),
    "celu_": lambda M, x: M.celu_(x, 0.3),
    "hardtanh_": lambda M, x: M.hardtanh_(x, -2.0, 2.0),
    "relu6_inplace": lambda M, x: M.relu6(x, inplace=True),
    "hardsigmoid_inplace": lambda M, x: M.hardsigmoid(x, inplace=True),
    "hardswish_inplace": lambda M, x: M.hardswish(x, inplace=True),
    "mish_inplace": lambda M, x: M.mish(x, inplace=True),
    "threshold_": lambda M, x: M.threshold_(x, 0.5, 3.0),
    "rrelu_": lambda M, x: M.rrelu_(x),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_variants_write_the_input_and_match_torch(name):
    fn = INPLACE[name]

    def through_copy(M, x):
        y = x * 1.0  # a non-leaf, so the in-place op is allowed on a tensor that requires grad
        out = fn(M, y)
        assert out is y
        return out

    out, tout, g, tg = _run(through_copy, SPECIAL)
    assert_close(out, tout, atol=1e-12, rtol=1e-7)
    assert_close(g, tg, atol=1e-7, rtol=1e-6)
    assert out.grad_fn.name() == tout.grad_fn.name()


def test_inplace_on_a_leaf_that_requires_grad_fails_like_torch():
    x = tc.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        F.elu_(x)
    y = tc.randn(4)
    expected = F.hardtanh(y, -0.5, 0.5)
    F.hardtanh_(y, -0.5, 0.5)
    assert tc.equal(y, expected)


def test_integer_inputs():
    ints = tc.tensor([-2, 1, 7])
    t = to_torch(ints)
    for name in ("relu6", "hardtanh", "threshold", "softsign", "tanhshrink"):
        fn = ELEMENTWISE[name]
        assert_close(fn(F, ints), fn(TF, t))
    with pytest.raises(NotImplementedError, match="\"softplus_cpu\" not implemented for 'Long'"):
        F.softplus(tc.tensor([1, 2]).cpu())


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmin_and_glu(dim):
    x = tc.randn(4, 6, dtype=tc.float64, requires_grad=True)
    as_float32 = lambda M, a: M.softmin(a, dim, dtype=torch.float32 if M is TF else tc.float32)  # noqa: E731
    for fn in (lambda M, a: M.softmin(a, dim), lambda M, a: M.glu(a, dim), as_float32):
        x.grad = None
        tx = to_torch(x)
        out, tout = fn(F, x), fn(TF, tx)
        upstream = tc.randn(*out.shape, dtype=out.dtype)
        out.backward(upstream)
        tout.backward(to_torch(upstream))
        assert_close(out, tout)
        assert_close(x.grad, tx.grad)
        assert out.grad_fn.name() == tout.grad_fn.name()


def test_softmin_implicit_dim_warns():
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
        F.softmin(tc.randn(2, 3))


@pytest.mark.parametrize("shape, n", [((2, 3, 4), 3), ((2, 3, 4), 1), ((5, 2), 2), ((5,), 1), ((), 1)])
def test_prelu_matches_torch(shape, n):
    x = tc.randn(shape, dtype=tc.float64, requires_grad=True)
    w = (tc.rand(n, dtype=tc.float64) * 0.5).requires_grad_()
    tx, tw = to_torch(x), to_torch(w)
    out, tout = F.prelu(x, w), TF.prelu(tx, tw)
    upstream = tc.randn(tuple(out.shape), dtype=out.dtype)
    out.backward(upstream)
    tout.backward(to_torch(upstream))
    assert_close(out, tout)
    assert_close(x.grad, tx.grad)
    assert_close(w.grad, tw.grad)
    assert out.grad_fn.name() == tout.grad_fn.name() == "PreluKernelBackward0"


def test_prelu_module_learns_one_slope_per_channel():
    m = nn.PReLU(3, init=0.1)
    assert tuple(m.weight.shape) == (3,) and np.allclose(_np(m.weight), 0.1)
    x = tc.randn(2, 3, 4)
    m(x).sum().backward()
    tm = torch.nn.PReLU(3, init=0.1)
    tm(to_torch(x)).sum().backward()
    assert_close(m.weight.grad, tm.weight.grad)
    assert nn.PReLU(dtype=tc.float64).weight.dtype is tc.float64


def test_rrelu_training_draws_slopes_in_bounds_on_the_input_device():
    x = -tc.rand(1000) - 0.1
    x.requires_grad_()
    out = F.rrelu(x, 0.2, 0.4, training=True)
    slopes = (out / x).detach()
    assert out.device == x.device
    assert float(slopes.min()) >= 0.2 - 1e-6 and float(slopes.max()) <= 0.4 + 1e-6
    assert float(slopes.std()) > 0.01  # random, not the mean slope
    out.sum().backward()
    assert tc.allclose(x.grad, slopes)
    assert out.grad_fn.name() == "RreluWithNoiseBackward0"
    pos = tc.rand(5) + 0.1
    assert tc.equal(F.rrelu(pos, training=True), pos)
    m = nn.RReLU(0.2, 0.4)
    m.eval()
    assert tc.allclose(m(x), x * 0.3)


def test_gumbel_softmax_soft_and_hard():
    logits = tc.randn(6, 5, requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    assert tc.allclose(soft.sum(-1), tc.ones(6))
    hard = F.gumbel_softmax(logits, hard=True, dim=0)
    assert set(np.unique(_np(hard)).tolist()) <= {0.0, 1.0}
    assert tc.allclose(hard.sum(0), tc.ones(5))
    hard.sum().backward()
    assert logits.grad is not None and tuple(logits.grad.shape) == (6, 5)
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        F.gumbel_softmax(logits, eps=1e-3)


def test_gumbel_softmax_samples_follow_the_softmax():
    tc.manual_seed(3)
    logits = tc.tensor([[0.0, 1.0, 2.0]]).expand(4000, 3)
    counts = _np(F.gumbel_softmax(logits, hard=True).sum(0)) / 4000
    assert np.allclose(counts, torch.softmax(torch.tensor([0.0, 1.0, 2.0]), 0).numpy(), atol=0.03)


def test_softmax2d():
    x = tc.randn(2, 3, 4, 5)
    assert_close(nn.Softmax2d()(x), torch.nn.Softmax2d()(to_torch(x)))
    assert_close(nn.Softmax2d()(x[0]), torch.nn.Softmax2d()(to_torch(x[0])))
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D instead"):
        nn.Softmax2d()(tc.randn(2, 3))


# ---- distances ---------------------------------------------------------------------------------------------

DISTANCES = {
    "normalize": (lambda M, a, b: M.normalize(a), [(4, 5), (4, 5)]),
    "normalize_p1_dim0": (lambda M, a, b: M.normalize(a, p=1, dim=0), [(4, 5), (4, 5)]),
    "normalize_inf_neg_dim": (lambda M, a, b: M.normalize(a, p=float("inf"), dim=-1), [(2, 3, 4), (1,)]),
    "cosine_similarity": (lambda M, a, b: M.cosine_similarity(a, b), [(4, 5), (4, 5)]),
    "cosine_similarity_broadcast": (lambda M, a, b: M.cosine_similarity(a, b, dim=-1), [(3, 1, 5), (4, 5)]),
    "cosine_similarity_1d": (lambda M, a, b: M.cosine_similarity(a, b, dim=0), [(5,), (5,)]),
    "pairwise_distance": (lambda M, a, b: M.pairwise_distance(a, b), [(4, 5), (4, 5)]),
    "pairwise_distance_p1_keepdim": (lambda M, a, b: M.pairwise_distance(a, b, p=1, keepdim=True), [(4, 5), (5,)]),
    "pairwise_distance_p3_3d": (lambda M, a, b: M.pairwise_distance(a, b, p=3), [(2, 3, 4), (2, 3, 4)]),
    "pairwise_distance_1d": (lambda M, a, b: M.pairwise_distance(a, b), [(5,), (5,)]),
    "pdist": (lambda M, a, b: M.pdist(a), [(5, 3), (1,)]),
    "pdist_p1": (lambda M, a, b: M.pdist(a, p=1), [(4, 3), (1,)]),
    "pdist_one_row": (lambda M, a, b: M.pdist(a), [(1, 3), (1,)]),
}


@pytest.mark.parametrize("name", sorted(DISTANCES))
def test_distances_match_torch(name):
    fn, shapes = DISTANCES[name]
    a, b = (tc.randn(*s, dtype=tc.float64, requires_grad=True) for s in shapes)
    ta, tb = to_torch(a), to_torch(b)
    out, tout = fn(F, a, b), fn(TF, ta, tb)
    assert_close(out, tout, atol=1e-10, rtol=1e-8)
    if out.numel():
        upstream = tc.randn(tuple(out.shape), dtype=out.dtype)
        out.backward(upstream)
        tout.backward(to_torch(upstream))
        for ours, theirs in ((a, ta), (b, tb)):
            if theirs.grad is not None:
                assert_close(ours.grad, theirs.grad, atol=1e-10, rtol=1e-8)


def test_cosine_similarity_zero_vector_and_large_values():
    a = tc.tensor(np.array([[0.0, 0.0, 0.0], [1e100, 2e100, 0.0]]), requires_grad=True)
    b = tc.tensor(np.array([[1.0, 2.0, 3.0], [1e100, 1e100, 1e100]]))
    ta = to_torch(a)
    out, tout = F.cosine_similarity(a, b), TF.cosine_similarity(ta, to_torch(b))
    out.sum().backward()
    tout.sum().backward()
    assert_close(out, tout)
    assert_close(a.grad, ta.grad)


def test_distance_modules():
    a, b = tc.randn(3, 4), tc.randn(3, 4)
    assert_close(nn.CosineSimilarity(dim=0, eps=1e-6)(a, b),
                 torch.nn.CosineSimilarity(0, 1e-6)(to_torch(a), to_torch(b)))
    assert_close(nn.PairwiseDistance(1.5, keepdim=True)(a, b),
                 torch.nn.PairwiseDistance(1.5, keepdim=True)(to_torch(a), to_torch(b)))


def test_normalize_out_and_integer_cosine_similarity():
    x = tc.randn(3, 4)
    out = tc.empty(3, 4)
    assert F.normalize(x, out=out) is out
    assert_close(out, TF.normalize(to_torch(x)))
    i1, f2 = tc.tensor([[1, 2, 3]]), tc.tensor([[3.0, 0.0, 1.0]])
    assert_close(F.cosine_similarity(i1, f2), TF.cosine_similarity(to_torch(i1), to_torch(f2)))
    with pytest.raises(RuntimeError, match="expected common dtype to be floating point, yet common dtype is Long"):
        F.cosine_similarity(i1, i1)


@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.integers(0, 2), st.sampled_from([1.0, 2.0, 3.0]))
def test_normalize_and_pairwise_distance_shapes(shape, dim, p):
    dim = dim % len(shape) - len(shape)
    x, y = tc.randn(*shape), tc.randn(*shape)
    assert_close(F.normalize(x, p=p, dim=dim), TF.normalize(to_torch(x), p=p, dim=dim))
    assert_close(F.pairwise_distance(x, y, p=p), TF.pairwise_distance(to_torch(x), to_torch(y), p=p))
    assert_close(F.cosine_similarity(x, y, dim=dim), TF.cosine_similarity(to_torch(x), to_torch(y), dim=dim))


# ---- module reprs, defaults and errors --------------------------------------------------------------------

MODULES = [
    "ELU()", "ELU(0.5, True)", "SELU()", "SELU(True)", "CELU()", "CELU(2.0, True)", "ReLU6()", "ReLU6(True)",
    "Hardtanh()", "Hardtanh(-2, 2, True)", "Hardsigmoid()", "Hardsigmoid(True)", "Hardswish(True)", "Mish()",
    "Mish(True)", "LogSigmoid()", "Softsign()", "Softmin()", "Softmin(1)", "GLU()", "Tanhshrink()", "Softshrink()",
    "Hardshrink(0.3)", "Threshold(0.1, 20)", "Threshold(0.1, 20.0, True)", "PReLU()", "PReLU(3, 0.1)", "RReLU()",
    "RReLU(0.1, 0.3, True)", "Softplus()", "Softplus(2, 10)", "Softmax2d()", "CosineSimilarity()",
    "PairwiseDistance(3)",
]


@pytest.mark.parametrize("spec", MODULES)
def test_module_repr_and_output_match_torch(spec):
    ours, theirs = eval("nn." + spec), eval("torch.nn." + spec)
    assert repr(ours) == repr(theirs)
    if isinstance(ours, (nn.CosineSimilarity, nn.PairwiseDistance)):
        return
    x = tc.randn(2, 3, 4, 2) * 3
    if isinstance(ours, nn.RReLU):
        ours.eval(), theirs.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Softmin() without dim
        assert_close(ours(x * 1.0), theirs(to_torch(x) * 1.0), atol=1e-6, rtol=1e-5)


def test_hardtanh_module_options():
    with pytest.warns(FutureWarning, match="`min_value` is deprecated"):
        m = nn.Hardtanh(min_value=-3.0)
    assert m.min_val == -3.0
    with pytest.raises(AssertionError, match=r"max_val \(1\) must be greater than min_val \(1\)"):
        nn.Hardtanh(1, 1)


@pytest.mark.parametrize("call, error, message", [
    (lambda: F.glu(tc.randn(2, 3), 1), RuntimeError, "Halving dimension must be even, but dimension 1 is size 3"),
    (lambda: F.glu(tc.tensor(1.0)), RuntimeError, "glu does not support scalars"),
    (lambda: F.softshrink(tc.randn(3), -1.0), RuntimeError,
     r"lambda must be in range \[0, 3.40282e\+38\] for input dtype Float, but found -1"),
    (lambda: F.celu(tc.randn(3), 0.0), RuntimeError, "ZeroDivisionError: alpha cannot be 0 for CELU"),
    (lambda: F.hardtanh(tc.randn(3), 2.0, 1.0), ValueError, "min_val cannot be greater than max_val"),
    (lambda: F.prelu(tc.randn(2, 3), tc.ones(2)), RuntimeError,
     "Found parameter numbers = 2 and channel size = 3."),
    (lambda: F.prelu(tc.randn(4), tc.ones(4)), RuntimeError, "Found parameter numbers = 4 and channel size = 1."),
    (lambda: F.prelu(tc.randn(2, 3), tc.ones(1, 3)), RuntimeError,
     "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = 2"),
    (lambda: F.rrelu(tc.randn(3), 0.5, 0.1), RuntimeError,
     "Lower bound should be less than or equal to the upper bound"),
    (lambda: F.pdist(tc.randn(2, 3, 4)), RuntimeError, "pdist only supports 2D tensors, got: 3D"),
    (lambda: F.pdist(tc.randn(3, 2), p=-1), RuntimeError, "pdist only supports non-negative p values"),
    (lambda: F.cosine_similarity(tc.randn(4, 3), tc.randn(4, 2)), RuntimeError,
     "The size of tensor a .3. must match the size of tensor b .2. at non-singleton dimension 1"),
])
def test_errors_match_torch(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ---- gradcheck table ---------------------------------------------------------------------------------------

def _x(*shape, seed=0, lo=-2.0, hi=2.0, avoid=()):
    """float64 input that requires grad, values uniform in (lo, hi) kept 0.05 away from the kinks `avoid`."""
    a = np.random.default_rng(seed).uniform(lo, hi, shape)
    for k in avoid:
        a = np.where(np.abs(a - k) < 0.05, k + 0.1, a)
    return tc.tensor(a, dtype=tc.float64, requires_grad=True)


CASES = {
    "softplus": (lambda x: F.softplus(x, beta=2.0, threshold=3.0), lambda: (_x(3, 4, avoid=(1.5,)),)),
    "elu": (lambda x: F.elu(x, 0.7), lambda: (_x(3, 4, avoid=(0,)),)),
    "selu": (lambda x: F.selu(x), lambda: (_x(3, 4, avoid=(0,)),)),
    "celu": (lambda x: F.celu(x, 1.5), lambda: (_x(3, 4, avoid=(0,)),)),
    "relu6": (lambda x: F.relu6(x * 4), lambda: (_x(3, 4, avoid=(0, 1.5)),)),
    "hardtanh": (lambda x: F.hardtanh(x, -1.0, 0.5), lambda: (_x(3, 4, avoid=(-1, 0.5)),)),
    "hardsigmoid": (lambda x: F.hardsigmoid(x * 3), lambda: (_x(3, 4, avoid=(-1, 1)),)),
    "hardswish": (lambda x: F.hardswish(x * 3), lambda: (_x(3, 4, avoid=(-1, 1)),)),
    "mish": (lambda x: F.mish(x), lambda: (_x(3, 4),)),
    "logsigmoid": (lambda x: F.logsigmoid(x), lambda: (_x(3, 4),)),
    "softsign": (lambda x: F.softsign(x), lambda: (_x(3, 4, avoid=(0,)),)),
    "tanhshrink": (lambda x: F.tanhshrink(x), lambda: (_x(3, 4),)),
    "softshrink": (lambda x: F.softshrink(x, 0.5), lambda: (_x(3, 4, avoid=(-0.5, 0.5)),)),
    "hardshrink": (lambda x: F.hardshrink(x, 0.5), lambda: (_x(3, 4, avoid=(-0.5, 0.5)),)),
    "threshold": (lambda x: F.threshold(x, 0.3, -1.0), lambda: (_x(3, 4, avoid=(0.3,)),)),
    "softmin": (lambda x: F.softmin(x, 1), lambda: (_x(3, 4),)),
    "glu": (lambda x: F.glu(x, 0), lambda: (_x(4, 3),)),
    "prelu": (lambda x, w: F.prelu(x, w), lambda: (_x(2, 3, 2, avoid=(0,)), _x(3, seed=1, lo=0.1, hi=0.5))),
    "rrelu_eval": (lambda x: F.rrelu(x), lambda: (_x(3, 4, avoid=(0,)),)),
    "normalize": (lambda x: F.normalize(x, p=3.0, dim=0), lambda: (_x(3, 4),)),
    "cosine_similarity": (lambda a, b: F.cosine_similarity(a, b, dim=-1), lambda: (_x(3, 4), _x(1, 4, seed=1))),
    "pairwise_distance": (lambda a, b: F.pairwise_distance(a, b, p=1.5), lambda: (_x(3, 4), _x(3, 4, seed=1))),
    "pdist": (lambda x: F.pdist(x), lambda: (_x(4, 3),)),
}

# second order where the backward is itself differentiable (not only a constant mask)
SECOND_ORDER = ["softplus", "elu", "selu", "celu", "hardswish", "mish", "logsigmoid", "softsign", "tanhshrink",
                "softmin", "glu", "prelu", "normalize", "cosine_similarity", "pairwise_distance"]


test_gradcheck, test_gradgradcheck = gradcheck_tests(CASES, SECOND_ORDER, eps=1e-6, atol=1e-5, second_atol=1e-4,
                                                     rtol=1e-3)
