"""Products and matrix functions (einsum, outer, inner, tensordot, kron, trace, diag, diagonal, diag_embed,
cross, cdist, dist, addmm family, matrix_power, vander, block_diag): values, dtypes, node names, gradients and
errors vs PyTorch."""
import numpy as np
import pytest
import torch
from core_helpers import assert_same, assert_same_error
from hypothesis import given
from hypothesis import strategies as st

import tinygrad_course as tc
from tinygrad_course.autograd import gradcheck
from gradcheck_table import gradcheck_tests


def _pairs(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in shapes]
    return ([tc.tensor(a, requires_grad=True) for a in arrays], [torch.tensor(a, requires_grad=True) for a in arrays])


def _check(fn_ours, fn_torch, shapes, node=True, seed=0):
    """Values, node name and gradients (for a random output gradient) of fn on fresh float64 inputs."""
    ours, theirs = _pairs(*shapes, seed=seed)
    out, tout = fn_ours(*ours), fn_torch(*theirs)
    assert_same(out, tout, rtol=1e-7, atol=1e-9)
    if node:
        assert out.grad_fn.name() == tout.grad_fn.name()
    g = np.random.default_rng(seed + 1).standard_normal(tuple(tout.shape))
    out.backward(tc.tensor(g))
    tout.backward(torch.tensor(g))
    for o, t in zip(ours, theirs):
        assert_same(o.grad, t.grad, rtol=1e-7, atol=1e-9)


EINSUM = [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]), ("...ij,jk", [(2, 2, 3, 4), (4, 5)]), ("ii->i", [(4, 4)]),
    ("ii", [(3, 3)]), ("ij->", [(3, 4)]), ("ij->ji", [(3, 4)]), ("i,i->", [(5,), (5,)]), ("i,j->ij", [(3,), (4,)]),
    ("i,ij,j->", [(3,), (3, 4), (4,)]), ("ij,kj->ikj", [(3, 4), (1, 4)]), ("bii->bi", [(2, 3, 3)]),
    ("i...->...", [(3, 2, 2)]), ("iij->j", [(2, 2, 3)]), ("ab,cd->", [(2, 3), (4, 5)]), ("Ab,bC->AC", [(2, 3), (3, 2)]),
    (" ij , jk -> ik ", [(2, 3), (3, 2)]), ("...", [()]), ("i->", [(0,)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM, ids=[e for e, _ in EINSUM])
def test_einsum_values_and_grads_match_torch(eq, shapes):
    _check(lambda *o: tc.einsum(eq, *o), lambda *o: torch.einsum(eq, *o), shapes, node=False)


def test_einsum_accepts_a_list_and_keeps_integer_dtypes():
    a, b = np.arange(6).reshape(2, 3), np.arange(12).reshape(3, 4)
    assert_same(tc.einsum("ij,jk", [tc.tensor(a), tc.tensor(b)]), torch.einsum("ij,jk", [torch.tensor(a),
                                                                                       torch.tensor(b)]))
    f = np.ones((2, 2), dtype=np.float32)
    assert_same(tc.einsum("ij->j", tc.tensor(f)), torch.einsum("ij->j", torch.tensor(f)))


@pytest.mark.parametrize("eq,shapes", [
    ("ij,jk->ik", [(2, 3), (4, 5)]), ("ij->ij", [(2, 3, 4)]), ("ii->i", [(2, 3)]), ("i->", [(2,), (2,)]),
    ("i,i->", [(2,)]), ("i->j", [(2,)]), ("ij->ii", [(2, 2)]), ("i->i", [(2, 3)]),
])
def test_einsum_errors_match_torch(eq, shapes):
    ours = [tc.ones(s) for s in shapes]
    theirs = [torch.ones(s) for s in shapes]
    assert_same_error(lambda: tc.einsum(eq, *ours), lambda: torch.einsum(eq, *theirs))
    assert_same_error(lambda: tc.einsum("i,i", tc.ones(2), tc.ones(2, dtype=tc.int64)),
                      lambda: torch.einsum("i,i", torch.ones(2), torch.ones(2, dtype=torch.int64)))


@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), st.integers(0, 2))
def test_einsum_batched_matmul_shapes(n, m, k, batch_dims):
    batch = (2,) * batch_dims
    _check(lambda a, b: tc.einsum("...ij,...jk->...ik", a, b), lambda a, b: torch.einsum("...ij,...jk->...ik", a, b),
           [batch + (n, m), (m, k)], node=False)


PRODUCTS = {
    "outer": ((lambda a, b: tc.outer(a, b)), (lambda a, b: torch.outer(a, b)), [(3,), (4,)]),
    "ger": ((lambda a, b: a.ger(b)), (lambda a, b: a.ger(b)), [(3,), (2,)]),
    "inner": ((lambda a, b: tc.inner(a, b)), (lambda a, b: torch.inner(a, b)), [(2, 3), (4, 3)]),
    "inner_1d": ((lambda a, b: a.inner(b)), (lambda a, b: a.inner(b)), [(3,), (3,)]),
    "tensordot_int": ((lambda a, b: tc.tensordot(a, b, 1)), (lambda a, b: torch.tensordot(a, b, 1)), [(2, 3), (3, 4)]),
    "tensordot_default": ((lambda a, b: tc.tensordot(a, b)), (lambda a, b: torch.tensordot(a, b)), [(2, 3, 4), (3, 4)]),
    "tensordot_lists": ((lambda a, b: tc.tensordot(a, b, ([0, 2], [2, 1]))),
                        (lambda a, b: torch.tensordot(a, b, ([0, 2], [2, 1]))), [(2, 3, 4), (5, 4, 2)]),
    "tensordot_0": ((lambda a, b: tc.tensordot(a, b, 0)), (lambda a, b: torch.tensordot(a, b, 0)), [(2,), (3,)]),
    "kron": ((lambda a, b: tc.kron(a, b)), (lambda a, b: torch.kron(a, b)), [(2, 3), (3, 2)]),
    "kron_ndim": ((lambda a, b: a.kron(b)), (lambda a, b: a.kron(b)), [(2,), (2, 3)]),
    "trace": ((lambda a: a.trace()), (lambda a: a.trace()), [(3, 4)]),
    "diag_matrix": ((lambda a: tc.diag(a, 1)), (lambda a: torch.diag(a, 1)), [(3, 4)]),
    "diag_vector": ((lambda a: a.diag(-2)), (lambda a: a.diag(-2)), [(3,)]),
    "diagonal": ((lambda a: a.diagonal()), (lambda a: a.diagonal()), [(3, 4)]),
    "diagonal_dims": ((lambda a: tc.diagonal(a, -1, 2, 0)), (lambda a: torch.diagonal(a, -1, 2, 0)), [(3, 2, 4)]),
    "diagonal_past_end": ((lambda a: a.diagonal(5)), (lambda a: a.diagonal(5)), [(3, 4)]),
    "diag_embed": ((lambda a: a.diag_embed()), (lambda a: a.diag_embed()), [(2, 3)]),
    "diag_embed_dims": ((lambda a: tc.diag_embed(a, -1, 0, 2)), (lambda a: torch.diag_embed(a, -1, 0, 2)), [(2, 3)]),
    "cross": ((lambda a, b: tc.cross(a, b, dim=0)), (lambda a, b: torch.cross(a, b, dim=0)), [(3, 2), (3, 2)]),
    "cross_default_dim": ((lambda a, b: a.cross(b)), (lambda a, b: torch.linalg.cross(a, b, dim=1)),
                          [(2, 3, 3), (2, 3, 3)]),
    "cross_broadcast": ((lambda a, b: a.cross(b, -1)), (lambda a, b: torch.linalg.cross(a, b)), [(2, 3), (1, 3)]),
    "cdist": ((lambda a, b: tc.cdist(a, b)), (lambda a, b: torch.cdist(a, b)), [(3, 4), (5, 4)]),
    "cdist_p1": ((lambda a, b: tc.cdist(a, b, 1)), (lambda a, b: torch.cdist(a, b, 1)), [(3, 4), (5, 4)]),
    "cdist_p0": ((lambda a, b: tc.cdist(a, b, 0)), (lambda a, b: torch.cdist(a, b, 0)), [(3, 4), (5, 4)]),
    "cdist_p3_batch": ((lambda a, b: tc.cdist(a, b, 3.0)), (lambda a, b: torch.cdist(a, b, 3.0)),
                       [(2, 3, 4), (1, 5, 4)]),
    "cdist_inf": ((lambda a, b: tc.cdist(a, b, float("inf"))), (lambda a, b: torch.cdist(a, b, float("inf"))),
                  [(3, 4), (5, 4)]),
    "dist": ((lambda a, b: a.dist(b)), (lambda a, b: a.dist(b)), [(3, 4), (4,)]),
    "dist_p1": ((lambda a, b: tc.dist(a, b, 1)), (lambda a, b: torch.dist(a, b, 1)), [(3, 4), (3, 4)]),
    "addmm": ((lambda x, a, b: x.addmm(a, b, beta=0.5, alpha=2)), (lambda x, a, b: x.addmm(a, b, beta=0.5, alpha=2)),
              [(4,), (3, 2), (2, 4)]),
    "addmm_tc_fn": ((lambda x, a, b: tc.addmm(x, a, b)), (lambda x, a, b: torch.addmm(x, a, b)),
                    [(3, 4), (3, 2), (2, 4)]),
    "addmv": ((lambda x, a, b: tc.addmv(x, a, b, alpha=-1)), (lambda x, a, b: torch.addmv(x, a, b, alpha=-1)),
              [(3,), (3, 2), (2,)]),
    "baddbmm": ((lambda x, a, b: x.baddbmm(a, b, beta=2)), (lambda x, a, b: x.baddbmm(a, b, beta=2)),
                [(1, 3, 4), (2, 3, 2), (2, 2, 4)]),
    "addbmm": ((lambda x, a, b: tc.addbmm(x, a, b, alpha=0.5)), (lambda x, a, b: torch.addbmm(x, a, b, alpha=0.5)),
               [(3, 4), (2, 3, 2), (2, 2, 4)]),
    "matrix_power_2": ((lambda a: a.matrix_power(2)), (lambda a: a.matrix_power(2)), [(3, 3)]),
    "matrix_power_5": ((lambda a: tc.matrix_power(a, 5)), (lambda a: torch.matrix_power(a, 5)), [(2, 3, 3)]),
    "block_diag": ((lambda a, b, c: tc.block_diag(a, b, c)), (lambda a, b, c: torch.block_diag(a, b, c)),
                   [(2, 3), (4,), ()]),
}


@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_products_values_node_names_and_grads_match_torch(name):
    fo, ft, shapes = PRODUCTS[name]
    _check(fo, ft, shapes, node=not name.startswith(("kron", "cross_default")))


def test_addmm_beta_zero_ignores_nan_in_input():
    x = tc.tensor([[float("nan"), 1.0]])
    a, b = tc.ones(1, 2), tc.ones(2, 2)
    tx, ta, tb = torch.tensor([[float("nan"), 1.0]]), torch.ones(1, 2), torch.ones(2, 2)
    assert_same(tc.addmm(x, a, b, beta=0), torch.addmm(tx, ta, tb, beta=0))


def test_matrix_power_zero_and_one():
    a = np.random.default_rng(0).standard_normal((2, 3, 3))
    for n in (0, 1):
        assert_same(tc.tensor(a).matrix_power(n), torch.tensor(a).matrix_power(n))
    out = tc.tensor(a).matrix_power(1)
    assert out._data is not tc.tensor(a)._data


def test_vander_values_dtypes_and_grad():
    for data, kw in ((np.array([1, 2, 3], dtype=np.int32), {}), (np.array([0.5, -1.0, 2.0]), {"N": 4}),
                     (np.array([0.5, 2.0], dtype=np.float32), {"increasing": True}), (np.array([1.0]), {"N": 0})):
        t = torch.tensor(data)
        assert_same(tc.vander(tc.tensor(data), **kw), torch.vander(t, **kw))
    x = tc.tensor([0.0, 2.0, -1.0], requires_grad=True)
    out = tc.vander(x)
    assert out.grad_fn.name() == "FlipBackward0"
    out.sum().backward()
    np.testing.assert_allclose(x.grad.detach().cpu()._data, [1.0, 5.0, -1.0])  # d/dx (x^2 + x + 1) = 2x + 1


def test_diagonal_is_a_view_and_in_place_writes_reach_the_base():
    x = tc.zeros(3, 4)
    x.diagonal(1).fill_(2.0)
    t = torch.zeros(3, 4)
    t.diagonal(1).fill_(2.0)
    assert_same(x, t)
    base = tc.ones(3, 3, requires_grad=True)
    tbase = torch.ones(3, 3, requires_grad=True)
    y, ty = base * 2, tbase * 2
    y.diagonal().mul_(3)
    ty.diagonal().mul_(3)
    assert ty.grad_fn.name().endswith(y.grad_fn.name())  # CopySlices
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    assert_same(base.grad, tbase.grad)


@pytest.mark.parametrize("dtypes", [("int64", "int64"), ("float32", "float32"), ("int32", "float32"),
                                    ("float32", "float64")])
def test_product_result_dtypes_and_errors_match_torch(dtypes):
    a_np, b_np = np.arange(9).reshape(3, 3) - 4, np.arange(9).reshape(3, 3)[::-1] + 1
    ours = (tc.tensor(a_np).to(getattr(tc, dtypes[0])), tc.tensor(b_np.copy()).to(getattr(tc, dtypes[1])))
    theirs = (torch.tensor(a_np).to(getattr(torch, dtypes[0])), torch.tensor(b_np.copy()).to(getattr(torch, dtypes[1])))
    fns = {
        "outer": lambda m, a, b: m.outer(a[0], b[0]), "inner": lambda m, a, b: m.inner(a, b),
        "tensordot": lambda m, a, b: m.tensordot(a, b, 1), "kron": lambda m, a, b: m.kron(a, b),
        "trace": lambda m, a, b: m.trace(a), "diag": lambda m, a, b: m.diag(a), "cross": lambda m, a, b: m.cross(a, b, 0),
        "addmm": lambda m, a, b: m.addmm(a, a, b), "block_diag": lambda m, a, b: m.block_diag(a, b),
        "einsum": lambda m, a, b: m.einsum("ij,jk", a, b), "cdist": lambda m, a, b: m.cdist(a, b),
        "dist": lambda m, a, b: m.dist(a, b), "diag_embed": lambda m, a, b: m.diag_embed(a),
    }
    for name, fn in fns.items():
        try:
            expected = fn(torch, *theirs)
        except RuntimeError:
            assert_same_error(lambda: fn(tc, *ours), lambda: fn(torch, *theirs), match_message=name != "einsum")
            continue
        assert_same(fn(tc, *ours), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("call", [
    lambda m: m.trace(m.ones(3)), lambda m: m.diag(m.ones(2, 2, 2)), lambda m: m.diagonal(m.ones(2, 2), 0, 1, 1),
    lambda m: m.cross(m.ones(2, 4), m.ones(2, 4)), lambda m: m.linalg.cross(m.ones(2, 2), m.ones(2, 2)) if hasattr(
        m, "linalg") and hasattr(m.linalg, "cross") else m.cross(m.ones(2, 2), m.ones(2, 2), dim=-1),
    lambda m: m.cdist(m.ones(3), m.ones(3)), lambda m: m.cdist(m.ones(2, 3), m.ones(2, 4)),
    lambda m: m.tensordot(m.ones(2, 3), m.ones(4, 3), 1), lambda m: m.matrix_power(m.ones(2, 3), 2),
    lambda m: m.outer(m.ones(2, 2), m.ones(2)), lambda m: m.block_diag(m.ones(2, 2, 2)),
    lambda m: m.addmm(m.ones(2, 2), m.ones(2, 3), m.ones(2, 2)), lambda m: m.bmm(m.ones(2, 2), m.ones(2, 2)),
    lambda m: m.inner(m.ones(2, 3), m.ones(2)), lambda m: m.vander(m.ones(2, 2)),
    lambda m: m.cdist(m.ones(2, 3, dtype=m.int64), m.ones(2, 3, dtype=m.int64)),
    lambda m: m.dist(m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int64)),
])
@pytest.mark.filterwarnings("ignore:Using torch.cross without specifying the dim")
def test_errors_match_torch(call):
    assert_same_error(lambda: call(tc), lambda: call(torch))


def test_tc_functions_exist():
    for name in ("einsum", "outer", "ger", "inner", "tensordot", "kron", "trace", "diag", "diagonal", "diag_embed",
                 "cross", "cdist", "dist", "addmm", "addmv", "addbmm", "baddbmm", "matrix_power", "vander",
                 "block_diag"):
        assert callable(getattr(tc, name)), name


def test_in_place_addmm_family():
    rng = np.random.default_rng(0)
    x, a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 2)), rng.standard_normal((2, 4))
    ours, theirs = tc.tensor(x), torch.tensor(x)
    assert ours.addmm_(tc.tensor(a), tc.tensor(b), alpha=2) is ours
    theirs.addmm_(torch.tensor(a), torch.tensor(b), alpha=2)
    assert_same(ours, theirs)
    v, tv = tc.tensor(x[:, 0].copy()), torch.tensor(x[:, 0].copy())
    v.addmv_(tc.tensor(a), tc.tensor(b[:, 0].copy()))
    tv.addmv_(torch.tensor(a), torch.tensor(b[:, 0].copy()))
    assert_same(v, tv)
    bb1, bb2 = rng.standard_normal((2, 3, 2)), rng.standard_normal((2, 2, 4))
    ours.addbmm_(tc.tensor(bb1), tc.tensor(bb2))
    theirs.addbmm_(torch.tensor(bb1), torch.tensor(bb2))
    assert_same(ours, theirs)
    c, tcc = tc.tensor(np.stack([x, x])), torch.tensor(np.stack([x, x]))
    c.baddbmm_(tc.tensor(bb1), tc.tensor(bb2), beta=0.5)
    tcc.baddbmm_(torch.tensor(bb1), torch.tensor(bb2), beta=0.5)
    assert_same(c, tcc)


# ---- tc.linalg -------------------------------------------------------------------------------------------

_SPD = np.random.default_rng(7).standard_normal((2, 3, 3)) + 3 * np.eye(3)
LINALG = {
    "inv": (lambda m, a: m.linalg.inv(a), [_SPD[0]]),
    "inv_batch": (lambda m, a: m.linalg.inv(a), [_SPD]),
    "det": (lambda m, a: m.linalg.det(a), [_SPD[0]]),
    "det_batch": (lambda m, a: m.linalg.det(a), [_SPD]),
    "solve_vector": (lambda m, a, b: m.linalg.solve(a, b), [_SPD[0], _SPD[1, 0]]),
    "solve_matrix_batch": (lambda m, a, b: m.linalg.solve(a, b), [_SPD, _SPD[0, :, :2]]),
    "norm": (lambda m, a: m.linalg.norm(a), [_SPD]),
    "norm_fro": (lambda m, a: m.linalg.norm(a, "fro"), [_SPD[0]]),
    "norm_dim": (lambda m, a: m.linalg.norm(a, 1, dim=-1, keepdim=True), [_SPD]),
    "vector_norm": (lambda m, a: m.linalg.vector_norm(a, 3, dim=(0, 2)), [_SPD]),
    "matrix_norm": (lambda m, a: m.linalg.matrix_norm(a), [_SPD]),
    "cross": (lambda m, a, b: m.linalg.cross(a, b), [_SPD[0], _SPD[1]]),
    "matrix_power_negative": (lambda m, a: m.matrix_power(a, -2), [_SPD]),
}


@pytest.mark.parametrize("name", sorted(LINALG))
def test_linalg_submodule_matches_torch(name):
    fn, arrays = LINALG[name]
    ours = [tc.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, tout = fn(tc, *ours), fn(torch, *theirs)
    assert_same(out, tout, rtol=1e-7, atol=1e-9)
    assert out.grad_fn.name() == tout.grad_fn.name()
    out.sum().backward()
    tout.sum().backward()
    for o, t in zip(ours, theirs):
        assert_same(o.grad, t.grad, rtol=1e-7, atol=1e-9)
    assert gradcheck(lambda *xs: fn(tc, *xs), tuple(tc.tensor(a, requires_grad=True) for a in arrays))


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.inv(m.ones(2, 3)), lambda m: m.linalg.inv(m.ones(2, 2, dtype=m.int64)),
    lambda m: m.linalg.det(m.ones(3)), lambda m: m.linalg.solve(m.ones(2, 2), m.ones(3)),
    lambda m: m.linalg.solve(m.ones(2, 2), m.ones(2, dtype=m.float64)), lambda m: m.linalg.norm(m.ones(2, 2, 2), 2),
    lambda m: m.linalg.cross(m.ones(2, 2), m.ones(2, 2)),
])
def test_linalg_errors_match_torch(call):
    assert_same_error(lambda: call(tc), lambda: call(torch))


def test_singular_matrix_raises_linalg_error():
    with pytest.raises(tc.linalg.LinAlgError, match="singular"):
        tc.linalg.inv(tc.zeros(2, 2))
    with pytest.raises(RuntimeError):
        tc.linalg.solve(tc.zeros(2, 2), tc.ones(2))


# ---- gradcheck ---------------------------------------------------------------------------------------------

def _x(*shape, seed=0):
    return tc.tensor(np.random.default_rng(seed).uniform(-2, 2, shape), dtype=tc.float64, requires_grad=True)


def _shifted(*shape):
    """A well-conditioned float64 leaf: random values plus 4 on the diagonal."""
    return (_x(*shape).detach() + tc.eye(shape[-1], dtype=tc.float64) * 4).requires_grad_()


CASES = {
    "einsum_mm": (lambda a, b: tc.einsum("ij,jk->ik", a, b), lambda: (_x(2, 3), _x(3, 2, seed=1))),
    "einsum_diag": (lambda a: tc.einsum("ii->i", a), lambda: (_x(3, 3),)),
    "einsum_ellipsis_bcast": (lambda a, b: tc.einsum("...ij,jk", a, b), lambda: (_x(2, 2, 3), _x(3, 2, seed=1))),
    "einsum_three": (lambda a, b, c: tc.einsum("i,ij,j", a, b, c), lambda: (_x(2), _x(2, 3, seed=1), _x(3, seed=2))),
    "einsum_sum_only": (lambda a, b: tc.einsum("ij,k->k", a, b), lambda: (_x(2, 3), _x(2, seed=1))),
    "outer": (lambda a, b: tc.outer(a, b), lambda: (_x(3), _x(2, seed=1))),
    "inner": (lambda a, b: tc.inner(a, b), lambda: (_x(2, 3), _x(3, seed=1))),
    "tensordot": (lambda a, b: tc.tensordot(a, b, ([1], [0])), lambda: (_x(2, 3), _x(3, 2, seed=1))),
    "kron": (lambda a, b: tc.kron(a, b), lambda: (_x(2, 2), _x(2, 3, seed=1))),
    "trace": (lambda a: a.trace(), lambda: (_x(3, 4),)),
    "diag_vec": (lambda a: a.diag(1), lambda: (_x(3),)),
    "diag_mat": (lambda a: a.diag(-1), lambda: (_x(3, 3),)),
    "diagonal": (lambda a: a.diagonal(1, 0, 2), lambda: (_x(3, 2, 4),)),
    "diag_embed": (lambda a: a.diag_embed(1), lambda: (_x(2, 3),)),
    "cross": (lambda a, b: tc.cross(a, b, dim=-1), lambda: (_x(2, 3), _x(1, 3, seed=1))),
    "cdist": (lambda a, b: tc.cdist(a, b), lambda: (_x(3, 2), _x(4, 2, seed=1))),
    "cdist_p1": (lambda a, b: tc.cdist(a, b, 1), lambda: (_x(3, 2), _x(4, 2, seed=1))),
    "cdist_p3": (lambda a, b: tc.cdist(a, b, 3), lambda: (_x(2, 3, 2), _x(2, 4, 2, seed=1))),
    "cdist_inf": (lambda a, b: tc.cdist(a, b, float("inf")), lambda: (_x(3, 2), _x(4, 2, seed=1))),
    "dist": (lambda a, b: a.dist(b), lambda: (_x(2, 3), _x(3, seed=1))),
    "addmm": (lambda x, a, b: tc.addmm(x, a, b, beta=0.5, alpha=2), lambda: (_x(3), _x(2, 2, seed=1), _x(2, 3, seed=2))),
    "addmv": (lambda x, a, b: tc.addmv(x, a, b), lambda: (_x(2), _x(2, 3, seed=1), _x(3, seed=2))),
    "baddbmm": (lambda x, a, b: tc.baddbmm(x, a, b, alpha=1.5), lambda: (_x(2, 1, 3), _x(2, 2, 2, seed=1),
                                                                           _x(2, 2, 3, seed=2))),
    "addbmm": (lambda x, a, b: tc.addbmm(x, a, b), lambda: (_x(2, 3), _x(2, 2, 2, seed=1), _x(2, 2, 3, seed=2))),
    "matrix_power": (lambda a: a.matrix_power(3), lambda: (_x(2, 2),)),
    "vander": (lambda a: tc.vander(a, 4), lambda: (_x(3),)),
    "block_diag": (lambda a, b: tc.block_diag(a, b), lambda: (_x(2, 2), _x(3, seed=1))),
    "linalg_inv": (lambda a: tc.linalg.inv(a), lambda: (_shifted(2, 3, 3),)),
    "linalg_det": (lambda a: tc.linalg.det(a), lambda: (_x(3, 3),)),
    "linalg_solve": (lambda a, b: tc.linalg.solve(a, b), lambda: (_shifted(3, 3), _x(3, 2, seed=1))),
}
SECOND_ORDER = sorted(set(CASES) - {"cdist_p1", "cdist_inf"})


test_gradcheck, test_gradgradcheck = gradcheck_tests(CASES, SECOND_ORDER, eps=1e-6, atol=1e-5, second_atol=1e-4,
                                                     rtol=1e-3)
