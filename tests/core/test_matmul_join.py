"""Matrix products (with batch broadcasting) and joining/splitting/gathering ops vs PyTorch."""
import numpy as np
import pytest
import torch
from core_helpers import assert_same, assert_same_error, pair
from hypothesis import given
from hypothesis import strategies as st

import tinygrad_course as tc

MATMUL_SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (5, 3, 4)), ((5, 2, 3), (3, 4)),
    ((2, 3), (5, 3, 4)), ((2, 1, 2, 3), (4, 3, 2)), ((4, 2, 3), (3,)), ((3,), (4, 3, 2)), ((1, 2, 3), (6, 3, 1)),
]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_values_grads_and_node_names(sa, sb):
    rng = np.random.default_rng(0)
    a, ta = pair(rng.standard_normal(sa), requires_grad=True)
    b, tb = pair(rng.standard_normal(sb), requires_grad=True)
    out, tout = a @ b, ta @ tb
    assert_same(out, tout)
    if len(sa) <= 2 and len(sb) <= 2 and not (len(sa) == 1 and len(sb) == 2):
        assert out.grad_fn.name() == tout.grad_fn.name()  # DotBackward0, MvBackward0, MmBackward0
    g = rng.standard_normal(tuple(tout.shape))
    out.backward(tc.tensor(g))
    tout.backward(torch.tensor(g))
    assert_same(a.grad, ta.grad)
    assert_same(b.grad, tb.grad)


@given(batch=st.lists(st.sampled_from([1, 2, 3]), min_size=0, max_size=2), m=st.integers(1, 3),
       k=st.integers(1, 3), n=st.integers(1, 3), drop=st.booleans())
def test_matmul_batch_broadcasting_random_shapes(batch, m, k, n, drop):
    rng = np.random.default_rng(1)
    sb = tuple(1 if (drop and i == 0) else s for i, s in enumerate(batch)) + (k, n)
    a, ta = pair(rng.standard_normal(tuple(batch) + (m, k)), requires_grad=True)
    b, tb = pair(rng.standard_normal(sb), requires_grad=True)
    out, tout = tc.matmul(a, b), torch.matmul(ta, tb)
    assert_same(out, tout)
    out.sum().backward()
    tout.sum().backward()
    assert_same(a.grad, ta.grad)
    assert_same(b.grad, tb.grad)


def test_mm_bmm_mv_dot():
    rng = np.random.default_rng(2)
    a, ta = pair(rng.standard_normal((2, 3)))
    b, tb = pair(rng.standard_normal((3, 4)))
    v, tv = pair(rng.standard_normal(3))
    A, tA = pair(rng.standard_normal((5, 2, 3)))
    B, tB = pair(rng.standard_normal((5, 3, 4)))
    assert_same(a.mm(b), ta.mm(tb))
    assert_same(tc.mm(a, b), torch.mm(ta, tb))
    assert_same(A.bmm(B), tA.bmm(tB))
    assert_same(a.mv(v), ta.mv(tv))
    assert_same(v.dot(v), tv.dot(tv))
    assert_same(tc.dot(v, v), torch.dot(tv, tv))
    i, ti = pair(np.arange(6).reshape(2, 3))
    assert_same(i @ i.t(), ti @ ti.t())


def test_matmul_errors_match_torch():
    a, ta = pair(np.ones((2, 3)))
    b, tb = pair(np.ones((4, 5)))
    assert_same_error(lambda: a @ b, lambda: ta @ tb)
    assert_same_error(lambda: a.mm(a), lambda: ta.mm(ta))
    v, tv = pair(np.ones(4))
    assert_same_error(lambda: a @ v, lambda: ta @ tv)
    assert_same_error(lambda: v.dot(tc.ones(3, dtype=tc.float64)), lambda: tv.dot(torch.ones(3, dtype=torch.float64)))
    assert_same_error(lambda: a @ tc.ones(3, 2), lambda: ta @ torch.ones(3, 2))
    assert_same_error(lambda: tc.ones(2, 2, 3) @ tc.ones(3, 3, 2), lambda: torch.ones(2, 2, 3) @ torch.ones(3, 3, 2),
                      match_message=False)
    assert_same_error(lambda: a.bmm(a), lambda: ta.bmm(ta))


# ---- cat / stack / split / chunk ------------------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_and_stack(dim):
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal((2, 3)), rng.standard_normal((2, 3)) if dim == 0 else rng.standard_normal((2, 3))]
    ours = [tc.tensor(x, requires_grad=True) for x in xs]
    theirs = [torch.tensor(x, requires_grad=True) for x in xs]
    for f_o, f_t in ((tc.cat, torch.cat), (tc.stack, torch.stack)):
        for t in ours + theirs:
            t.grad = None
        out, tout = f_o(ours, dim), f_t(theirs, dim)
        assert_same(out, tout)
        assert out.grad_fn.name() == tout.grad_fn.name()
        g = rng.standard_normal(tuple(tout.shape))
        out.backward(tc.tensor(g))
        tout.backward(torch.tensor(g))
        for o, t in zip(ours, theirs):
            assert_same(o.grad, t.grad)


def test_cat_mixed_dtypes_and_errors():
    assert_same(tc.cat([tc.tensor([1]), tc.tensor([2.5])]), torch.cat([torch.tensor([1]), torch.tensor([2.5])]))
    assert_same_error(lambda: tc.cat([tc.ones(2, 3), tc.ones(3, 2)], 0),
                      lambda: torch.cat([torch.ones(2, 3), torch.ones(3, 2)], 0))
    assert_same_error(lambda: tc.stack([tc.ones(2), tc.ones(3)]), lambda: torch.stack([torch.ones(2), torch.ones(3)]))
    assert_same_error(lambda: tc.cat([tc.ones(2), tc.ones(2)], 1), lambda: torch.cat([torch.ones(2), torch.ones(2)], 1))


@pytest.mark.parametrize("arg", [2, 3, [1, 4], [5, 0]])
@pytest.mark.parametrize("dim", [0, 1])
def test_split(arg, dim):
    x, tx = pair(np.arange(25.0).reshape(5, 5), requires_grad=True)
    parts, tparts = x.split(arg, dim), tx.split(arg, dim)
    assert_same(list(parts), list(tparts))
    (parts[0].sum() * 2 + parts[-1].sum()).backward()
    (tparts[0].sum() * 2 + tparts[-1].sum()).backward()
    assert_same(x.grad, tx.grad)


def test_split_and_chunk_of_an_empty_dim_and_bad_sizes_as_pytorch():
    for shape in ((0,), (0, 3)):
        x, tx = pair(np.zeros(shape))
        for ours, theirs in ((x.split(2), tx.split(2)), (x.split(0), tx.split(0)), (x.chunk(3), tx.chunk(3))):
            assert len(ours) == len(theirs)
            assert_same(list(ours), list(theirs))
    x, tx = pair(np.arange(5.0))
    assert_same_error(lambda: x.split([6, -1]), lambda: tx.split([6, -1]))
    assert_same_error(lambda: x.split([2, 2]), lambda: tx.split([2, 2]))
    assert_same_error(lambda: x.split(0), lambda: tx.split(0))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 6])
def test_chunk(n):
    x, tx = pair(np.arange(10.0).reshape(5, 2))
    assert_same(list(x.chunk(n)), list(tx.chunk(n)))
    assert_same(list(tc.chunk(x, n, 1)), list(torch.chunk(tx, n, 1)))


# ---- gather / scatter / repeat / flip -----------------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1])
def test_gather(dim):
    x, tx = pair(np.arange(12.0).reshape(3, 4), requires_grad=True)
    idx = np.array([[0, 2, 1], [2, 2, 0]])
    out, tout = x.gather(dim, tc.tensor(idx)), tx.gather(dim, torch.tensor(idx))
    assert_same(out, tout)
    out.pow(2).sum().backward()
    tout.pow(2).sum().backward()
    assert_same(x.grad, tx.grad)


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("kind", ["scatter", "scatter_add", "scatter_value"])
def test_scatter(dim, kind):
    rng = np.random.default_rng(4)
    x, tx = pair(rng.standard_normal((3, 4)), requires_grad=True)
    src, tsrc = pair(rng.standard_normal((2, 3)), requires_grad=True)
    idx = np.array([[0, 2, 1], [1, 0, 2]])
    if kind == "scatter":
        out, tout = x.scatter(dim, tc.tensor(idx), src), tx.scatter(dim, torch.tensor(idx), tsrc)
    elif kind == "scatter_add":
        dup = np.array([[0, 0, 1], [1, 0, 0]])
        out, tout = x.scatter_add(dim, tc.tensor(dup), src), tx.scatter_add(dim, torch.tensor(dup), tsrc)
    else:
        out, tout = x.scatter(dim, tc.tensor(idx), 5.0), tx.scatter(dim, torch.tensor(idx), 5.0)
    assert_same(out, tout)
    g = rng.standard_normal((3, 4))
    out.backward(tc.tensor(g))
    tout.backward(torch.tensor(g))
    assert_same(x.grad, tx.grad)
    if kind != "scatter_value":
        assert_same(src.grad, tsrc.grad)


def test_scatter_in_place_forms():
    x, tx = pair(np.zeros((2, 3)))
    x.scatter_(1, tc.tensor([[2], [0]]), 1.0)
    tx.scatter_(1, torch.tensor([[2], [0]]), 1.0)
    x.scatter_add_(0, tc.tensor([[1, 1, 1]]), tc.ones(1, 3, dtype=tc.float64))
    tx.scatter_add_(0, torch.tensor([[1, 1, 1]]), torch.ones(1, 3, dtype=torch.float64))
    assert_same(x, tx)


@pytest.mark.parametrize("sizes", [(2,), (2, 1), (1, 3), (2, 2, 1), (3, 1, 2)])
def test_repeat(sizes):
    x, tx = pair(np.arange(6.0).reshape(2, 3), requires_grad=True) if len(sizes) > 1 else pair(
        np.arange(3.0), requires_grad=True)
    out, tout = x.repeat(*sizes), tx.repeat(*sizes)
    assert_same(out, tout)
    g = np.arange(float(tout.numel())).reshape(tuple(tout.shape))
    out.backward(tc.tensor(g))
    tout.backward(torch.tensor(g))
    assert_same(x.grad, tx.grad)


@pytest.mark.parametrize("dims", [(0,), (1,), (0, 1), (-1,)])
def test_flip(dims):
    x, tx = pair(np.arange(6.0).reshape(2, 3), requires_grad=True)
    out, tout = x.flip(dims), tx.flip(dims)
    assert_same(out, tout)
    assert not np.shares_memory(out._data, x._data)
    g = np.arange(6.0).reshape(2, 3)
    out.backward(tc.tensor(g))
    tout.backward(torch.tensor(g))
    assert_same(x.grad, tx.grad)


def test_other_shape_ops():
    x, tx = pair(np.arange(6.0).reshape(2, 3))
    assert_same(x.tril(), tx.tril())
    assert_same(x.triu(1), tx.triu(1))
    assert_same(x.index_select(1, tc.tensor([2, 0])), tx.index_select(1, torch.tensor([2, 0])))
    assert_same(x.masked_fill(x > 2, -1.0), tx.masked_fill(tx > 2, -1.0))
    assert_same(x.unflatten(1, (3, 1)), tx.unflatten(1, (3, 1)))
    assert_same(list(x.unbind(1)), list(tx.unbind(1)))
    assert_same(x.narrow(1, 1, 2), tx.narrow(1, 1, 2))
    assert_same(tc.broadcast_tensors(x, tc.ones(3, dtype=tc.float64))[1],
                torch.broadcast_tensors(tx, torch.ones(3, dtype=torch.float64))[1])
    assert tc.broadcast_shapes((2, 1), (3,)) == torch.broadcast_shapes((2, 1), (3,))
