"""Sparse COO tensors against PyTorch: construction, coalescing, conversion, printing and the
sparse-dense product with gradients for the dense operand and the values."""
import re
import warnings

import numpy as np
import pytest
import torch

import tinygrad_course as tc

warnings.filterwarnings("ignore", message="Sparse invariant checks")

I = [[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]]
V = [3.0, 4.0, 5.0, 1.0, -2.0]


def _pair(size=(3, 3)):
    return tc.sparse_coo_tensor(I, V, size), torch.sparse_coo_tensor(torch.tensor(I), torch.tensor(V), size)


def _same(a, b):
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-6)


def test_construction_attributes_and_errors():
    s, ts = _pair()
    assert s.is_sparse and ts.is_sparse and not tc.zeros(2).is_sparse
    assert tuple(s.shape) == tuple(ts.shape) and s._nnz() == ts._nnz() and s.is_coalesced() == ts.is_coalesced()
    assert repr(s.layout).split(".")[1] == repr(ts.layout).split(".")[1] == "sparse_coo"
    for fn in ("indices", "values"):
        with pytest.raises(RuntimeError) as theirs:
            getattr(ts, fn)()
        with pytest.raises(RuntimeError, match=re.escape(str(theirs.value))):
            getattr(s, fn)()
    assert tuple(tc.sparse_coo_tensor(I, V).shape) == tuple(torch.sparse_coo_tensor(torch.tensor(I), torch.tensor(V)).shape)


def test_coalesce_to_dense_and_repr_match_pytorch():
    s, ts = _pair()
    c, tcoal = s.coalesce(), ts.coalesce()
    _same(c.indices(), tcoal.indices())
    _same(c.values(), tcoal.values())
    _same(s.to_dense(), ts.to_dense())
    assert c.is_coalesced() and tcoal.is_coalesced()
    try:
        tc.set_printoptions(namespace="torch")
        assert repr(s) == repr(ts) and repr(c) == repr(tcoal)
        assert repr(tc.zeros(2, 2).to_sparse()) == repr(torch.zeros(2, 2).to_sparse())
    finally:
        tc.set_printoptions(namespace=None)
    _same(s.t().to_dense(), ts.t().to_dense())


def test_dense_to_sparse_round_trip():
    d = np.array([[0.0, 2.0, 0.0], [1.5, 0.0, -3.0]], dtype=np.float32)
    s, ts = tc.tensor(d).to_sparse(), torch.tensor(d).to_sparse()
    _same(s.indices(), ts.indices())
    _same(s.values(), ts.values())
    _same(s.to_dense(), ts.to_dense())


@pytest.mark.parametrize("how", ["sparse.mm", "spmm", "matmul", "mm"])
def test_sparse_dense_product_and_gradients(how):
    s, ts = _pair((3, 3))
    rng = np.random.default_rng(0)
    x0 = rng.normal(size=(3, 4)).astype(np.float32)
    x, tx = tc.tensor(x0, requires_grad=True), torch.tensor(x0, requires_grad=True)
    call = {"sparse.mm": lambda ns, a, b: ns.sparse.mm(a, b), "spmm": lambda ns, a, b: ns.spmm(a, b),
            "matmul": lambda ns, a, b: a @ b, "mm": lambda ns, a, b: ns.mm(a, b)}[how]
    y, ty = call(tc, s, x), call(torch, ts, tx)
    _same(y, ty)
    (y.tanh() * tc.arange(12.0).reshape(3, 4)).sum().backward()
    (ty.tanh() * torch.arange(12.0).reshape(3, 4)).sum().backward()
    _same(x.grad, tx.grad)


def test_gradient_reaches_learned_values_like_pytorch():
    idx = tc.tensor(I)
    v = tc.tensor(V, requires_grad=True)
    tv = torch.tensor(V, requires_grad=True)
    s = tc.sparse_coo_tensor(idx, v, (3, 3))
    ts = torch.sparse_coo_tensor(torch.tensor(I), tv, (3, 3))
    d = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    tc.sparse.mm(s, tc.tensor(d)).pow(2).sum().backward()
    torch.sparse.mm(ts, torch.tensor(d)).pow(2).sum().backward()
    _same(v.grad, tv.grad)
    s.to_dense().sum().backward()


def test_shape_mismatch_error_like_pytorch():
    s, ts = _pair()
    with pytest.raises(RuntimeError) as theirs:
        torch.sparse.mm(ts, torch.ones(4, 2))
    with pytest.raises(RuntimeError, match=re.escape(str(theirs.value))):
        tc.sparse.mm(s, tc.ones(4, 2))


def test_graph_network_idioms_match_pytorch():
    idx, vals = [[0, 1, 1, 2], [1, 0, 2, 1]], [1.0, 2.0, 3.0, 4.0]
    A = tc.sparse_coo_tensor(idx, vals, (3, 3))
    tA = torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(vals), (3, 3))
    X, tX = tc.arange(6.0).reshape(3, 2), torch.arange(6.0).reshape(3, 2)
    pairs = [(tc.matmul(A, X), torch.matmul(tA, tX)), (A.matmul(X), tA.matmul(tX)),
             (A.mv(tc.ones(3)), tA.mv(torch.ones(3))), ((A + A).to_dense(), (tA + tA).to_dense()),
             (tc.eye(3) + A, torch.eye(3) + tA), (A.transpose(0, 1).to_dense(), tA.transpose(0, 1).to_dense()),
             (A.clone().to_dense(), tA.clone().to_dense()),
             ((A + tc.eye(3).to_sparse()).coalesce().values(), (tA + torch.eye(3).to_sparse()).coalesce().values())]
    for a, b in pairs:
        np.testing.assert_allclose(a.numpy(), b.numpy())
    assert (A.sparse_dim(), A.dense_dim()) == (tA.sparse_dim(), tA.dense_dim())
    for ns, S in ((tc, A), (torch, tA)):
        with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported\. Use add\(dense, sparse\)"):
            S + ns.eye(3)
    with pytest.raises(NotImplementedError, match=r"sparse tensors do not implement \.index_select\(\).*to_dense"):
        A.index_select(0, tc.tensor([0]))
