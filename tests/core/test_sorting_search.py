"""Searching and counting against PyTorch: unique, unique_consecutive, nonzero/argwhere, count_nonzero,
searchsorted, bucketize, bincount, histc, tril_indices/triu_indices (values, dtypes, shapes, errors)."""
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tinygrad_course as tc
from core_helpers import assert_same, assert_same_error, to_torch

NAN = float("nan")


def both(fn, *arrays):
    """fn(tc, *tc tensors) and fn(torch, *torch tensors) agree in values, dtypes and shapes."""
    ours = [tc.tensor(np.array(a)) for a in arrays]
    theirs = [to_torch(t) for t in ours]
    out_ours, out_theirs = fn(tc, *ours), fn(torch, *theirs)
    assert_same(out_ours, out_theirs)
    return out_ours


def same_error(fn, *arrays, match_message=True):
    ours = [tc.tensor(np.array(a)) for a in arrays]
    assert_same_error(lambda: fn(tc, *ours), lambda: fn(torch, *[to_torch(t) for t in ours]), match_message)


INTS = np.array([[3, 1, 3, 0], [1, 1, 2, 2], [3, 1, 3, 0]])


# ---- unique ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("inverse", [False, True])
@pytest.mark.parametrize("counts", [False, True])
def test_unique_matches_torch(inverse, counts):
    for data in (INTS, INTS.astype(np.float32), INTS > 1, np.array([2.0, NAN, 1.0, NAN, 2.0]), np.array(3),
                 np.zeros(0, np.int64)):
        both(lambda m, x: m.unique(x, return_inverse=inverse, return_counts=counts), data)
        both(lambda m, x: x.unique(sorted=False, return_inverse=inverse, return_counts=counts)
             if m is tc else torch.unique(x, sorted=True, return_inverse=inverse, return_counts=counts), data)
    for dim in (0, 1, -1):
        both(lambda m, x: m.unique(x, dim=dim, return_inverse=inverse, return_counts=counts), INTS)
    both(lambda m, x: m.unique(x, return_inverse=inverse, return_counts=counts, dim=1), np.zeros((2, 3, 2)))


@pytest.mark.parametrize("inverse", [False, True])
@pytest.mark.parametrize("counts", [False, True])
def test_unique_consecutive_matches_torch(inverse, counts):
    for data in (np.array([1, 1, 2, 1, 1, 1, 3]), INTS, np.array([1.0, NAN, NAN, 2.0]), np.array(5),
                 np.zeros(0, np.float32)):
        both(lambda m, x: m.unique_consecutive(x, return_inverse=inverse, return_counts=counts), data)
    for dim in (0, 1):
        both(lambda m, x: x.unique_consecutive(inverse, counts, dim), np.array([[1, 1], [1, 1], [2, 0], [1, 1]]))


@given(x_np=hnp.arrays(np.int64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                       elements=st.integers(-2, 2)), data=st.data())
def test_unique_property(x_np, data):
    dim = data.draw(st.one_of(st.none(), st.integers(-x_np.ndim, x_np.ndim - 1)))
    both(lambda m, x: m.unique(x, return_inverse=True, return_counts=True, dim=dim), x_np)
    both(lambda m, x: m.unique_consecutive(x, return_inverse=True, return_counts=True, dim=dim), x_np)


# ---- nonzero and counting ------------------------------------------------------------------------------

def test_nonzero_argwhere_count_nonzero():
    data = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
    for d in (data, data > 0, data.astype(np.int32), np.array(5), np.array(0), np.zeros((2, 0)),
              np.arange(24).reshape(2, 3, 4) % 3):
        both(lambda m, x: m.nonzero(x), d)
        both(lambda m, x: x.nonzero(as_tuple=True), d)
        both(lambda m, x: m.argwhere(x), d)
        both(lambda m, x: m.count_nonzero(x), d)
    for dim in (0, 1, -1, (0, 1)):
        both(lambda m, x: m.count_nonzero(x, dim), data)
        both(lambda m, x: x.count_nonzero(dim=dim), data > 0)
    same_error(lambda m, x: m.count_nonzero(x, 2), data)


@pytest.mark.parametrize("weights", [None, np.float32, np.float64, np.int64])
def test_bincount_matches_torch(weights):
    for data in (np.array([1, 1, 3, 0, 7]), np.array([2, 0], np.uint8), np.array([4], np.int32)):
        w = None if weights is None else np.arange(1, data.size + 1).astype(weights) / (2 if weights is not np.int64 else 1)
        for minlength in (0, 3, 10):
            if w is None:
                both(lambda m, x: m.bincount(x, minlength=minlength), data)
            else:
                both(lambda m, x, w_: x.bincount(w_, minlength), data, w)
    both(lambda m, x: m.bincount(x), np.zeros(0, np.int64))
    both(lambda m, x: m.bincount(x, minlength=4), np.zeros(0, np.int64))


def test_bincount_errors():
    for fn, data in [
        (lambda m, x: m.bincount(x), np.array([-1, 1])), (lambda m, x: m.bincount(x), np.array([[1]])),
        (lambda m, x: m.bincount(x), np.array([1.0])), (lambda m, x: m.bincount(x), np.array([True])),
        (lambda m, x: m.bincount(x, minlength=-1), np.array([1])),
        (lambda m, x: m.bincount(x, m.tensor([1.0, 2.0])), np.array([1, 1, 3])),
    ]:
        same_error(fn, data)


def test_histc_matches_torch():
    rng = np.random.default_rng(0)
    for data in (rng.standard_normal(200).astype(np.float32), rng.uniform(0, 1, (5, 7)),
                 np.array([1.0, 2.0, 1.0], np.float32), np.array([1.0, 1.0], np.float32),
                 np.zeros(0, np.float32), np.array([0.0, 0.25, 0.5, 0.75, 1.0])):
        for bins, lo, hi in ((4, 0, 0), (10, -1, 1), (100, 0, 0), (3, 0.25, 0.75)):
            both(lambda m, x: m.histc(x, bins, lo, hi), data)
    both(lambda m, x: x.histc(bins=4, min=0, max=3), np.array([1.0, NAN, 2.5], np.float32))


def test_histc_errors():
    for fn, data in [
        (lambda m, x: m.histc(x, 4), np.array([1, 2])), (lambda m, x: m.histc(x, 4, 3, 1), np.array([1.0, 2.0])),
        (lambda m, x: m.histc(x, 0), np.array([1.0, 2.0])), (lambda m, x: m.histc(x, 4), np.array([1.0, np.inf])),
    ]:
        same_error(fn, data)
    same_error(lambda m, x: m.histc(x, 4), np.array([1.0, NAN]), match_message=False)


# ---- searchsorted and bucketize ------------------------------------------------------------------------

SEQ = np.array([1.0, 3.0, 3.0, 5.0, 7.0])
VALUES = np.array([[3.0, 6.0, 9.0, 0.0], [3.0, 1.0, 7.0, 5.5]])


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_matches_torch(right):
    side = "right" if right else "left"
    both(lambda m, s, v: m.searchsorted(s, v, right=right), SEQ, VALUES)
    both(lambda m, s, v: m.searchsorted(s, v, side=side, out_int32=True), SEQ, VALUES)
    both(lambda m, s, v: m.searchsorted(s, v, right=right), SEQ.astype(np.int64), VALUES)
    both(lambda m, s: m.searchsorted(s, 3, right=right), SEQ)
    both(lambda m, s, v: m.searchsorted(s, v, right=right), SEQ, np.array(3.0))
    rows = np.array([[1, 3, 5, 5, 9], [2, 4, 6, 8, 8]])
    both(lambda m, s, v: m.searchsorted(s, v, right=right), rows, np.array([[3, 6, 0], [8, 1, 9]]))
    both(lambda m, s, v: m.searchsorted(s, v, side=side), np.stack([rows, rows[::-1]]),
         np.arange(12).reshape(2, 2, 3))
    unsorted = np.array([5.0, 1.0, 3.0, 3.0])
    both(lambda m, s, v, o: m.searchsorted(s, v, right=right, sorter=o), unsorted, VALUES, np.argsort(unsorted, kind="stable"))
    both(lambda m, s, v: m.searchsorted(s, v, right=right), np.zeros(0), VALUES)


@given(seq=hnp.arrays(np.int64, st.integers(1, 9), elements=st.integers(-3, 3)),
       values=hnp.arrays(np.int64, hnp.array_shapes(max_dims=2, max_side=4), elements=st.integers(-4, 4)),
       right=st.booleans())
def test_searchsorted_property(seq, values, right):
    seq = np.sort(seq)
    both(lambda m, s, v: m.searchsorted(s, v, right=right), seq, values)
    rows = np.sort(np.stack([seq, seq[::-1] * 2]), axis=1)
    both(lambda m, s, v: m.searchsorted(s, v, right=right), rows, np.stack([values.reshape(-1)] * 2))


def test_searchsorted_errors():
    rows = np.array([[1, 3, 5], [2, 4, 6]])
    for fn, args in [
        (lambda m, s, v: m.searchsorted(s, v, right=True, side="left"), (SEQ, VALUES)),
        (lambda m, s, v: m.searchsorted(s, v, side="middle"), (SEQ, VALUES)),
        (lambda m, s, v: m.searchsorted(s, v), (rows, np.array([[3, 6]]))),
        (lambda m, s, v: m.searchsorted(s, v), (rows, np.array(3))),
        (lambda m, s, v: m.searchsorted(s, v), (np.array(3.0), VALUES)),
        (lambda m, s, v: m.searchsorted(s, v, sorter=m.tensor([1, 0])), (SEQ, VALUES)),
        (lambda m, v, b: m.bucketize(v, b), (VALUES, rows)),
    ]:
        same_error(fn, *args)


def test_bucketize_matches_torch():
    for right in (False, True):
        both(lambda m, v, b: m.bucketize(v, b, right=right), VALUES, SEQ)
        both(lambda m, v, b: m.bucketize(v, b, out_int32=True, right=right), VALUES.astype(np.int64), SEQ)
        both(lambda m, b: m.bucketize(4, b, right=right), SEQ)


# ---- tril_indices / triu_indices ----------------------------------------------------------------------

@pytest.mark.parametrize("fn", ["tril_indices", "triu_indices"])
def test_triangle_indices_match_torch(fn):
    for row, col, offset in ((3, 3, 0), (3, 4, 1), (4, 3, -1), (2, 2, 10), (2, 2, -10), (0, 3, 0), (1, 5, 2)):
        assert_same(getattr(tc, fn)(row, col, offset), getattr(torch, fn)(row, col, offset))
    assert_same(getattr(tc, fn)(3, 4, dtype=tc.int32), getattr(torch, fn)(3, 4, dtype=torch.int32))
    x = getattr(tc, fn)(3, 3, device="cpu")
    assert x.device.type == "cpu"
    assert_same_error(lambda: getattr(tc, fn)(-1, 3), lambda: getattr(torch, fn)(-1, 3))
    assert_same_error(lambda: getattr(tc, fn)(3, -2), lambda: getattr(torch, fn)(3, -2))
    assert_same_error(lambda: getattr(tc, fn)(3, 3, dtype=tc.float32), lambda: getattr(torch, fn)(3, 3, dtype=torch.float32))


def test_triangle_indices_select_the_triangle():
    a = tc.tensor(np.arange(12.0).reshape(3, 4))
    rows, cols = tc.tril_indices(3, 4)
    assert_same(a[rows, cols], torch.tensor(np.arange(12.0).reshape(3, 4)).tril()[torch.tril_indices(3, 4).unbind()])
