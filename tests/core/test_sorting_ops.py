"""Sorting, selection and scans against PyTorch: sort/argsort/msort, topk, kthvalue, median/nanmedian, mode,
cummax/cummin, cumprod, logcumsumexp, masked_select, take, take_along_dim (values, indices, gradients,
grad_fn names, errors), and a gradcheck table."""
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tinygrad_course as tc
from core_helpers import assert_same, assert_same_error, to_torch
from gradcheck_table import gradcheck_tests

NAN = float("nan")


def _x(*shape, seed=0, positive=False):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 2.0, shape) if positive else rng.uniform(-2.0, 2.0, shape)
    return tc.tensor(a, dtype=tc.float64, requires_grad=True)


def _with_zeros(*shape, zeros=((0, 1),), seed=0):
    a = np.random.default_rng(seed).uniform(-2.0, 2.0, shape)
    for z in zeros:
        a[z] = 0.0
    return tc.tensor(a, dtype=tc.float64, requires_grad=True)


TAKE_INDEX = tc.tensor([[0, -1], [5, 2], [2, 2]])
MASK = tc.tensor([[[True, False, True, True]], [[False, False, True, False]]])
ALONG_INDEX = tc.tensor([[0, 2], [2, 2]])  # broadcast over dim 0 of a (2, 3, 4) input

# name -> (function, inputs factory); float64 inputs without ties (the format of tests/core/test_gradcheck.py)
CASES = {
    "sort": (lambda a: a.sort(1).values, lambda: (_x(3, 4),)),
    "sort_descending_stable": (lambda a: tc.sort(a, 0, True, stable=True)[0], lambda: (_x(3, 4),)),
    "msort": (lambda a: a.msort(), lambda: (_x(3, 2),)),
    "topk": (lambda a: a.topk(2, 0).values, lambda: (_x(4, 3),)),
    "topk_smallest": (lambda a: tc.topk(a, 3, largest=False)[0], lambda: (_x(2, 5),)),
    "kthvalue": (lambda a: a.kthvalue(2, 1, keepdim=True).values, lambda: (_x(3, 4),)),
    "median_all": (lambda a: a.median(), lambda: (_x(3, 3),)),
    "median_dim": (lambda a: a.median(0).values, lambda: (_x(4, 3),)),
    "nanmedian_all": (lambda a: a.nanmedian(), lambda: (_x(6),)),
    "nanmedian_dim": (lambda a: tc.nanmedian(a, -1, True).values, lambda: (_x(2, 5),)),
    "mode": (lambda a: a.mode(1).values, lambda: (_x(3, 4),)),
    "cummax": (lambda a: a.cummax(1).values, lambda: (_x(3, 5),)),
    "cummin": (lambda a: tc.cummin(a, 0).values, lambda: (_x(5, 2),)),
    "cumprod": (lambda a: a.cumprod(1), lambda: (_x(3, 4),)),
    "cumprod_one_zero": (lambda a: a.cumprod(1), lambda: (_with_zeros(3, 4),)),
    "cumprod_zeros": (lambda a: a.cumprod(0), lambda: (_with_zeros(5, 2, zeros=((0, 0), (1, 1), (3, 1))),)),
    "logcumsumexp": (lambda a: a.logcumsumexp(1), lambda: (_x(3, 4),)),
    "masked_select": (lambda a: a.masked_select(a > 0), lambda: (_x(3, 4),)),
    "masked_select_broadcast": (lambda a: a.masked_select(MASK), lambda: (_x(3, 1),)),
    "take": (lambda a: a.take(TAKE_INDEX), lambda: (_x(2, 3),)),
    "take_along_dim": (lambda a: a.take_along_dim(ALONG_INDEX[None, :, :1], 1), lambda: (_x(2, 3, 4),)),
    "take_along_dim_flat": (lambda a: tc.take_along_dim(a, ALONG_INDEX), lambda: (_x(2, 3),)),
}

SECOND_ORDER = ["sort", "topk", "median_all", "cummax", "cumprod", "cumprod_one_zero", "logcumsumexp",
                "masked_select_broadcast", "take", "take_along_dim"]


test_gradcheck, test_gradgradcheck = gradcheck_tests(CASES, SECOND_ORDER, eps=1e-6, atol=1e-5, second_atol=1e-4,
                                                     rtol=1e-3)


def both(fn, *arrays, grad=False):
    """fn(tc, *tc tensors) and fn(torch, *torch tensors) agree: values, dtypes, shapes (and input gradients of
    a weighted sum of the first float output when `grad`)."""
    ours = [tc.tensor(np.array(a), requires_grad=grad and np.asarray(a).dtype.kind == "f") for a in arrays]
    theirs = [to_torch(t) for t in ours]
    out_ours, out_theirs = fn(tc, *ours), fn(torch, *theirs)
    assert_same(out_ours, out_theirs)
    if grad:
        first_ours = out_ours[0] if isinstance(out_ours, tuple) else out_ours
        first_theirs = out_theirs[0] if isinstance(out_theirs, tuple) else out_theirs
        w = np.random.default_rng(5).uniform(-1, 1, tuple(first_theirs.shape))
        (first_ours * tc.tensor(w, dtype=first_ours.dtype)).sum().backward()
        (first_theirs * torch.tensor(w, dtype=first_theirs.dtype)).sum().backward()
        for o, t in zip(ours, theirs):
            if t.requires_grad:
                assert_same(o.grad, t.grad)
    return out_ours, out_theirs


def _floats(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


TIES = np.array([[3, 1, 2, 1, 3, 0], [2, 2, 2, 1, 1, 5], [0, 0, 0, 0, 0, 0]], dtype=np.float32)


# ---- sort ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("descending", [False, True])
def test_stable_sort_matches_torch_exactly_with_ties_and_nans(dim, descending):
    data = TIES.copy()
    data[0, 2] = data[1, 4] = NAN
    both(lambda m, x: m.sort(x, dim=dim, descending=descending, stable=True), data, grad=True)
    both(lambda m, x: m.argsort(x, dim=dim, descending=descending, stable=True), data)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.bool_, np.float16, np.float64])
def test_sort_dtypes(dtype):
    data = (TIES > 1) if dtype is np.bool_ else TIES.astype(dtype)
    both(lambda m, x: x.sort(stable=True), data)
    both(lambda m, x: x.sort(dim=0, descending=True, stable=True), data)


def test_unstable_sort_values_and_indices_point_to_them():
    x = tc.tensor(TIES)
    values, indices = x.sort(1, descending=True)
    assert_same(values, torch.sort(torch.tensor(TIES), 1, descending=True).values)
    assert_same(x.gather(1, indices), torch.sort(torch.tensor(TIES), 1, descending=True).values)


def test_sort_shapes_0d_empty_and_named_tuple():
    both(lambda m, x: m.sort(x), np.float32(3.0), grad=True)
    both(lambda m, x: m.argsort(x), np.float32(3.0))
    both(lambda m, x: m.sort(x, 0), np.zeros((0, 2), np.float32))
    both(lambda m, x: m.msort(x), _floats(4, 3), grad=True)
    r = tc.sort(tc.tensor([2.0, 1.0]))
    assert type(r).__name__ == "sort" and r.values is r[0] and r.indices is r[1]
    assert repr(r).startswith("tc.return_types.sort(\nvalues=")


@given(x_np=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=5),
                       elements=st.sampled_from([-1.0, 0.0, 0.5, 2.0, NAN])), data=st.data())
def test_stable_sort_property(x_np, data):
    dim = data.draw(st.integers(-x_np.ndim, x_np.ndim - 1))
    descending = data.draw(st.booleans())
    both(lambda m, x: m.sort(x, dim=dim, descending=descending, stable=True), x_np)


# ---- topk, kthvalue, median, mode ---------------------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_matches_torch(dim, largest):
    both(lambda m, x: m.topk(x, 2, dim, largest), _floats(4, 5), grad=True)
    both(lambda m, x: x.topk(3, dim=dim, largest=largest), np.arange(20).reshape(4, 5)[::-1].copy())


@pytest.mark.parametrize("largest", [True, False])
def test_topk_of_a_few_among_many(largest):
    data = _floats(3, 40)
    data[0, 7] = data[1, 30] = NAN
    both(lambda m, x: m.topk(x, 3, largest=largest), data, grad=True)
    both(lambda m, x: m.topk(x, 5, 0, largest), np.random.default_rng(1).permutation(120).reshape(40, 3))
    both(lambda m, x: m.topk(x, 19, largest=largest), data, grad=True)


def test_topk_ties_values_exact_and_indices_point_to_them():
    x = tc.tensor(TIES)
    values, indices = x.topk(3)
    expected = torch.topk(torch.tensor(TIES), 3).values
    assert_same(values, expected)
    assert_same(x.gather(-1, indices), expected)
    unsorted = x.topk(3, sorted=False).values.sort(descending=True).values
    assert_same(unsorted, expected)
    both(lambda m, x: m.topk(x, 0), TIES)
    both(lambda m, x: m.topk(x, 1), np.float32(2.0))


@pytest.mark.parametrize("k", [1, 3, 5])
def test_kthvalue_matches_torch(k):
    both(lambda m, x: m.kthvalue(x, k), _floats(3, 5), grad=True)
    both(lambda m, x: m.kthvalue(x, min(k, 3), 0, keepdim=True), _floats(3, 5), grad=True)
    both(lambda m, x: x.kthvalue(k), np.arange(15).reshape(3, 5)[:, ::-1].copy())
    x = tc.tensor(TIES)
    values, indices = x.kthvalue(k, 1, True)
    assert_same(values, torch.kthvalue(torch.tensor(TIES), k, 1, True).values)
    assert_same(x.gather(1, indices), torch.kthvalue(torch.tensor(TIES), k, 1, True).values)


@pytest.mark.parametrize("fn", ["median", "nanmedian"])
def test_median_matches_torch(fn):
    both(lambda m, x: getattr(m, fn)(x), _floats(3, 4), grad=True)
    both(lambda m, x: getattr(m, fn)(x, 1), _floats(3, 4), grad=True)  # even count: the lower middle value
    both(lambda m, x: getattr(x, fn)(dim=0, keepdim=True), _floats(5, 2), grad=True)
    both(lambda m, x: getattr(m, fn)(x, -1), np.arange(12).reshape(3, 4))
    both(lambda m, x: getattr(m, fn)(x), np.arange(7))
    both(lambda m, x: getattr(m, fn)(x, 0), np.float32(2.0))
    nans = np.array([[1.0, NAN, 0.0, NAN], [NAN, NAN, NAN, NAN], [4.0, 3.0, 2.0, 1.0]], np.float32)
    both(lambda m, x: getattr(m, fn)(x, 1)[0], nans)
    both(lambda m, x: getattr(m, fn)(x, 1), nans[[0, 2]])  # an all-NaN row's index is arbitrary in nanmedian
    both(lambda m, x: getattr(m, fn)(x), nans)
    both(lambda m, x: getattr(m, fn)(x), nans[2:])
    both(lambda m, x: getattr(m, fn)(x), np.zeros(0, np.float32))


def test_median_all_shares_the_gradient_among_ties():
    both(lambda m, x: m.median(x), np.array([1.0, 2.0, 2.0, 5.0, 2.0]), grad=True)
    both(lambda m, x: m.median(x), np.array([1.0, NAN, 2.0, NAN]), grad=True)


def test_median_ties_indices_point_to_the_value():
    x = tc.tensor(TIES)
    values, indices = x.median(1)
    assert_same(values, torch.median(torch.tensor(TIES), 1).values)
    assert_same(x.gather(1, indices[:, None])[:, 0], torch.median(torch.tensor(TIES), 1).values)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_mode_matches_torch(dim):
    ints = np.array([[1, 2, 2, 3, 3, 1, 1], [2, 2, 1, 1, 5, 5, 0], [4, 4, 4, 4, 4, 4, 4]])
    both(lambda m, x: m.mode(x, dim), ints)
    both(lambda m, x: x.mode(dim, keepdim=True), ints.astype(np.float32))
    both(lambda m, x: m.mode(x, dim), ints > 1)
    both(lambda m, x: m.mode(x), _floats(3, 4), grad=True)
    both(lambda m, x: m.mode(x), np.array([1.0, NAN, NAN], np.float32))
    both(lambda m, x: m.mode(x), np.float32(3.0))


def test_selection_on_empty_slices():
    both(lambda m, x: m.median(x, 1), np.zeros((0, 3), np.float32))
    both(lambda m, x: m.mode(x, 1), np.zeros((0, 3), np.float32))
    both(lambda m, x: m.topk(x, 0, 0), np.zeros((0, 3), np.float32))


# ---- scans -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", ["cummax", "cummin"])
def test_cummax_cummin_match_torch(fn):
    seq = np.array([1.0, 3.0, 3.0, 2.0, NAN, 5.0, NAN, 0.0], np.float32)
    both(lambda m, x: getattr(m, fn)(x, 0), seq)
    both(lambda m, x: getattr(m, fn)(x, 0), -seq)
    for dim in (0, 1, -1):
        both(lambda m, x: getattr(m, fn)(x, dim), TIES, grad=True)
        both(lambda m, x: getattr(x, fn)(dim), TIES.astype(np.int32))
    both(lambda m, x: getattr(m, fn)(x, 0), np.array([True, False, True, True]))
    both(lambda m, x: getattr(m, fn)(x, 0), np.float32(2.0), grad=True)
    both(lambda m, x: getattr(m, fn)(x, 1), _floats(3, 37), grad=True)
    both(lambda m, x: getattr(m, fn)(x, 0), np.zeros((0, 2), np.float32))


def test_cumprod_matches_torch():
    for dim in (0, 1, -1):
        both(lambda m, x: m.cumprod(x, dim), _floats(3, 5), grad=True)
    zeros = _floats(4, 6)
    zeros[0, 1] = zeros[2, 0] = zeros[2, 3] = zeros[3, 5] = 0.0
    both(lambda m, x: m.cumprod(x, 1), zeros, grad=True)
    both(lambda m, x: m.cumprod(x, 0), zeros, grad=True)
    both(lambda m, x: x.cumprod(0), np.array([3, 1, 1, 2], np.int32))
    both(lambda m, x: m.cumprod(x, 0), np.array([True, False, True]))
    both(lambda m, x: m.cumprod(x, 0, dtype=m.float64), np.array([3, 1, 1, 2]))
    both(lambda m, x: m.cumprod(x, 0, dtype=m.float64), _floats(3), grad=True)
    both(lambda m, x: m.cumprod(x, 0), np.float32(2.0), grad=True)


def test_logcumsumexp_matches_torch():
    both(lambda m, x: m.logcumsumexp(x, 1), _floats(3, 9), grad=True)
    both(lambda m, x: x.logcumsumexp(0), _floats(4, 2).astype(np.float64), grad=True)
    both(lambda m, x: m.logcumsumexp(x, 0), np.array([-1000.0, 0.0, -np.inf, 800.0, 1.0], np.float32), grad=True)
    both(lambda m, x: m.logcumsumexp(x, 0), np.float32(2.0), grad=True)


# ---- masked_select, take, take_along_dim -------------------------------------------------------------

def test_masked_select_broadcasts_and_backpropagates():
    x = _floats(3, 4)
    both(lambda m, a, b: m.masked_select(a, b), x, x > 0, grad=True)
    both(lambda m, a, b: a.masked_select(b), _floats(3, 1), _floats(2, 1, 4) > 0, grad=True)
    both(lambda m, a, b: m.masked_select(a, b), _floats(4), np.array(True), grad=True)
    both(lambda m, a, b: m.masked_select(a, b), np.float32(2.0), np.array(True), grad=True)
    both(lambda m, a, b: m.masked_select(a, b), np.arange(6).reshape(2, 3), np.array([True, False, True]))


def test_take_and_take_along_dim_match_torch():
    index = np.array([[0, -1], [5, 2], [2, 2]])
    both(lambda m, a, i: m.take(a, i), _floats(2, 3), index, grad=True)
    both(lambda m, a, i: a.take(i), np.arange(6), np.array(4))
    both(lambda m, a, i: m.take(a, i), np.float32(3.0), np.array(0), grad=True)
    both(lambda m, a, i: m.take_along_dim(a, i, 1), _floats(2, 3), np.array([[0], [2]]), grad=True)
    both(lambda m, a, i: m.take_along_dim(a, i, -1), _floats(2, 3, 4), np.array([[[0, 3]], [[1, 1]]]), grad=True)
    both(lambda m, a, i: a.take_along_dim(i, dim=0), _floats(3, 4), np.array([[2], [0]]), grad=True)
    both(lambda m, a, i: m.take_along_dim(a, i), _floats(2, 3), np.array([0, 5, 5]), grad=True)
    both(lambda m, a, i: m.take_along_dim(a, i, 1), _floats(2, 3), np.array([[-1], [0]]), grad=True)


def test_take_along_dim_with_sort_indices_recovers_the_values():
    x = tc.tensor(_floats(4, 5))
    assert_same(x.take_along_dim(x.argsort(1), 1), torch.sort(to_torch(x), 1).values)
    assert_same(x.take_along_dim(x.argmax(1, keepdim=True), 1), torch.amax(to_torch(x), 1, keepdim=True))


# ---- grad_fn names and errors --------------------------------------------------------------------------

def test_grad_fn_names_match_torch():
    cases = [
        lambda m, x: m.sort(x).values, lambda m, x: m.sort(x, stable=True).values, lambda m, x: m.msort(x),
        lambda m, x: m.topk(x, 2).values, lambda m, x: m.kthvalue(x, 2).values, lambda m, x: m.median(x),
        lambda m, x: m.median(x, 0).values, lambda m, x: m.nanmedian(x), lambda m, x: m.nanmedian(x, 0).values,
        lambda m, x: m.mode(x).values, lambda m, x: m.cummax(x, 0).values, lambda m, x: m.cummin(x, 0).values,
        lambda m, x: m.cumprod(x, 0), lambda m, x: m.logcumsumexp(x, 0), lambda m, x: m.masked_select(x, x > 0),
        lambda m, x: m.take(x, m.tensor([1, 2])), lambda m, x: m.take_along_dim(x, m.tensor([[1], [2], [0]]), 1),
    ]
    x = tc.tensor(_floats(3, 4), requires_grad=True)
    for fn in cases:
        ours, theirs = fn(tc, x), fn(torch, to_torch(x))
        assert ours.grad_fn.name() == theirs.grad_fn.name()
    for fn in (lambda m, t: m.sort(t).indices, lambda m, t: m.argsort(t), lambda m, t: m.topk(t, 1).indices):
        assert not fn(tc, x).requires_grad and not fn(torch, to_torch(x)).requires_grad


def _errors(ours, theirs, x_np, match_message=True):
    x = tc.tensor(x_np)
    assert_same_error(lambda: ours(tc, x), lambda: theirs(torch, to_torch(x)), match_message)


@pytest.mark.parametrize("fn", [
    lambda m, x: m.topk(x, 4), lambda m, x: m.topk(x, -1), lambda m, x: m.topk(x, 1, dim=2),
    lambda m, x: m.kthvalue(x, 4), lambda m, x: m.kthvalue(x, 0), lambda m, x: m.kthvalue(x, 1, -3),
    lambda m, x: m.sort(x, 2), lambda m, x: m.argsort(x, -3), lambda m, x: m.median(x, 2),
    lambda m, x: m.mode(x, 5), lambda m, x: m.cummax(x, 2), lambda m, x: m.cumprod(x, -3),
    lambda m, x: m.logcumsumexp(x, 2), lambda m, x: m.take_along_dim(x, m.tensor([0, 1]), 1),
    lambda m, x: m.take_along_dim(x, m.tensor([[0, 1]]).int(), 1),
    lambda m, x: m.take_along_dim(x, m.tensor([[0, 1], [1, 0], [0, 0]]), 1),
    lambda m, x: m.take(x, m.tensor([6])), lambda m, x: m.take(x, m.tensor([-7])),
    lambda m, x: m.take(x, m.tensor([1], dtype=m.int32)),
    lambda m, x: m.masked_select(x, m.tensor([1, 0, 1])), lambda m, x: m.masked_select(x, m.ones(2, 2).bool()),
])
def test_errors_match_torch(fn):
    _errors(fn, fn, np.array([[3.0, 1, 2], [1, 1, 0]], np.float32))


@pytest.mark.parametrize("fn", [
    lambda m, x: m.topk(x, 1), lambda m, x: m.kthvalue(x, 1), lambda m, x: m.median(x),
    lambda m, x: m.median(x, 0), lambda m, x: m.nanmedian(x), lambda m, x: m.nanmedian(x, 0),
])
def test_bool_inputs_refused_like_torch(fn):
    _errors(fn, fn, np.array([True, False, True]))


def test_empty_reduction_dim_errors():
    for fn in (lambda m, x: m.median(x, 0), lambda m, x: m.mode(x, -2), lambda m, x: m.nanmedian(x, 0),
               lambda m, x: m.kthvalue(x, 1, 0), lambda m, x: m.topk(x, 1, 0)):
        _errors(fn, fn, np.zeros((0, 3), np.float32))
    fn = lambda m, x: m.logcumsumexp(x, 0)  # noqa: E731
    _errors(fn, fn, np.arange(3))


def test_tc_functions_accept_keywords_like_torch():
    x = tc.tensor(_floats(3, 4))
    assert_same(tc.sort(x, dim=0, descending=True, stable=True), torch.sort(to_torch(x), dim=0, descending=True,
                                                                           stable=True))
    assert_same(tc.topk(x, k=2, dim=0, largest=False).values, torch.topk(to_torch(x), k=2, dim=0, largest=False).values)
    assert_same(x.kthvalue(k=2, dim=0, keepdim=True), to_torch(x).kthvalue(k=2, dim=0, keepdim=True))
    assert_same(tc.median(x, dim=1, keepdim=True), torch.median(to_torch(x), dim=1, keepdim=True))
    assert_same(tc.cumprod(x, dim=1, dtype=tc.float64), torch.cumprod(to_torch(x), dim=1, dtype=torch.float64))


def test_bfloat16_orders_nans_like_torch():
    data = [1.0, NAN, 0.0, 2.0, 2.0, -1.0]
    x, y = tc.tensor(data).to(tc.bfloat16), torch.tensor(data).to(torch.bfloat16)
    for fn in (lambda t: t.sort(descending=True, stable=True), lambda t: t.sort(stable=True), lambda t: t.median(),
               lambda t: t.nanmedian(0), lambda t: t.cummax(0), lambda t: t.cummin(0), lambda t: t.mode(),
               lambda t: t.unique(), lambda t: t.topk(3)):
        assert_same(fn(x), fn(y))
