"""The fused scaled_dot_product_attention op (ops/attention.py) and the fused GELU backward: which calls take
the fused path, parity with PyTorch (outputs, gradients, second derivatives) and a float64 gradcheck table."""
import numpy as np
import pytest
import torch

import tinygrad_course as tc
import tinygrad_course.nn.functional as F
from gradcheck_table import gradcheck_tests
from nn_helpers import assert_close, to_torch

FUSED = "ScaledDotProductFlashAttentionForCpuBackward0"


def _x(*shape, seed=0, dtype=tc.float64):
    return tc.tensor(np.random.default_rng(seed).uniform(-1.0, 1.0, shape), dtype=dtype, requires_grad=True)


def _qkv(b=2, h=3, length=5, source=5, e=4, ev=3, dtype=tc.float32):
    return _x(b, h, length, e, dtype=dtype), _x(b, h, source, e, seed=1, dtype=dtype), \
        _x(b, h, source, ev, seed=2, dtype=dtype)


MASK_4D = tc.tensor(np.random.default_rng(3).uniform(size=(2, 1, 5, 5)) > 0.4)  # broadcast over heads
MASK_4D[0, 0, 2] = False  # a query that sees no key: zeros out, zero gradient


@pytest.mark.parametrize("kwargs", [{}, {"is_causal": True}, {"attn_mask": MASK_4D}, {"attn_mask": "float"},
                                    {"is_causal": True, "scale": 0.25}])
@pytest.mark.parametrize("dtype", [tc.float32, tc.float64])
def test_fused_sdpa_matches_torch_forward_and_backward(kwargs, dtype):
    q, k, v = _qkv(dtype=dtype)
    if kwargs.get("attn_mask") == "float":
        kwargs = dict(kwargs, attn_mask=tc.randn(5, 5, dtype=dtype))
    tq, tk, tv = map(to_torch, (q, k, v))
    tkw = {n: to_torch(a) if isinstance(a, tc.Tensor) else a for n, a in kwargs.items()}
    out = F.scaled_dot_product_attention(q, k, v, **kwargs)
    tout = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, **tkw)
    assert out.grad_fn.name() == FUSED
    assert_close(out, tout)
    g = np.random.default_rng(4).standard_normal(tuple(out.shape))
    out.backward(tc.tensor(g, dtype=dtype))
    tout.backward(torch.tensor(g, dtype=tout.dtype))
    for a, b in ((q, tq), (k, tk), (v, tv)):
        assert_close(a.grad, b.grad)


def test_fully_masked_query_gives_zero_output_and_zero_gradient():
    q, k, v = _qkv(dtype=tc.float64)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=MASK_4D)
    assert tc.equal(out[0, :, 2], tc.zeros(3, 3, dtype=tc.float64))
    out.sum().backward()
    assert tc.equal(q.grad[0, :, 2], tc.zeros(3, 4, dtype=tc.float64))
    assert bool(tc.isfinite(k.grad).all()) and bool(tc.isfinite(v.grad).all())


def test_calls_outside_the_fused_case_use_the_composition_and_still_match_torch():
    q, k, v = _qkv(dtype=tc.float64)
    mask = tc.randn(5, 5, dtype=tc.float64, requires_grad=True)  # a mask that needs its gradient
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert out.grad_fn.name() != FUSED
    tq, tk, tv, tm = map(to_torch, (q, k, v, mask))
    tout = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm)
    assert_close(out, tout)
    out.sum().backward()
    tout.sum().backward()
    assert_close(mask.grad, tm.grad)
    half = F.scaled_dot_product_attention(*(t.detach().half() for t in (q, k, v)))
    assert half.dtype is tc.float16  # float16 keeps the composition (16-bit rounding after every op)


def test_fused_sdpa_second_derivatives_match_torch():
    q, k, v = _qkv(b=1, h=2, length=4, source=4, dtype=tc.float64)
    tq, tk, tv = map(to_torch, (q, k, v))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    tout = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=True)
    (gq,) = tc.autograd.grad((out * out).sum(), q, create_graph=True)
    (tgq,) = torch.autograd.grad((tout * tout).sum(), tq, create_graph=True)
    assert_close(gq, tgq)
    (gq * gq).sum().backward()
    (tgq * tgq).sum().backward()
    for a, b in ((q, tq), (k, tk), (v, tv)):
        assert_close(a.grad, b.grad)


def test_gelu_backward_matches_torch_and_keeps_second_derivatives():
    x = _x(64, dtype=tc.float32) * 3
    x.retain_grad()
    tx = to_torch(x.detach()).requires_grad_()
    y, ty = F.gelu(x), torch.nn.functional.gelu(tx)
    assert_close(y, ty)
    y.sum().backward()
    ty.sum().backward()
    assert_close(x.grad, tx.grad)


@pytest.mark.parametrize("spread", [1.0, 40.0])  # scores within +-80 skip the softmax's maximum; larger keep it
@pytest.mark.parametrize("kwargs", [{"is_causal": True}, {"attn_mask": "dead"}, {}])
@pytest.mark.parametrize("dtype", [tc.float32, tc.float64])
def test_fused_sdpa_at_a_language_models_size_matches_torch(spread, kwargs, dtype):
    # 64 keys (the keys' maximum as a tree of halves), heads-last storage, both softmax paths
    rng = np.random.default_rng(5)
    q, k, v = (tc.tensor(rng.standard_normal((3, 4, 64, 16)) * s, dtype=dtype, requires_grad=True)
               for s in (spread, 1.0, 1.0))
    if kwargs.get("attn_mask") == "dead":
        keep = rng.uniform(size=(64, 64)) > 0.5
        keep[7] = False  # a query that sees no key
        kwargs = {"attn_mask": tc.tensor(keep)}
    tq, tk, tv = map(to_torch, (q, k, v))
    tkw = {n: to_torch(a) if isinstance(a, tc.Tensor) else a for n, a in kwargs.items()}
    out = F.scaled_dot_product_attention(q, k, v, **kwargs)
    tout = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, **tkw)
    assert out.grad_fn.name() == FUSED
    if out.device.type == "cpu":  # stored (B, L, H, E) like PyTorch's: merging heads is a view
        assert out.transpose(1, 2).is_contiguous()
    atol = 1e-5 if dtype is tc.float32 else 1e-10
    assert_close(out, tout, atol=atol, rtol=1e-4 if dtype is tc.float32 else 1e-9)
    g = rng.standard_normal(tuple(out.shape))
    out.backward(tc.tensor(g, dtype=dtype))
    tout.backward(torch.tensor(g, dtype=tout.dtype))
    for a, b in ((q, tq), (k, tk), (v, tv)):
        scale = float(b.grad.abs().max())
        assert_close(a.grad, b.grad, atol=atol * max(1.0, scale), rtol=1e-4 if dtype is tc.float32 else 1e-9)
    assert np.isfinite(q.grad.cpu().numpy()).all()


def test_fused_sdpa_gives_the_same_weights_with_and_without_the_maximum():
    from tinygrad_course.ops.attention import _LOG2E, _exponentials_t, _inverse_sums, _scaled_q
    rng = np.random.default_rng(6)
    q, k = rng.standard_normal((2, 3, 17, 8)) * 3, rng.standard_normal((2, 3, 17, 8)) * 3
    keep = np.tril(np.ones((17, 17), dtype=bool))
    keep[4] = False  # a query that sees no key
    mask = tc.tensor(keep, device="cpu")  # the kernels on NumPy arrays
    qs, bounded = _scaled_q(np, q, k, mask, 8 ** -0.5)
    assert bounded  # scores within +-80: 2^(s log2 e), no maximum
    assert not _scaled_q(np, q[..., :8, :], k[..., :8, :], mask, 8 ** -0.5)[1]  # 64 scores a head: plain path
    np.testing.assert_allclose(qs, q * 8 ** -0.5 * _LOG2E, rtol=1e-15)
    weights = []
    for scaled, m in ((qs, None), (q * 8 ** -0.5, True)):
        e, m_out = _exponentials_t(np, scaled, k, mask, m)
        assert (m_out is None) == (m is None)
        weights.append(e * _inverse_sums(np, e, True))
    ref = torch.softmax(torch.tensor(q @ np.swapaxes(k, -1, -2) * 8 ** -0.5).masked_fill(
        ~torch.tensor(keep), float("-inf")), -1).nan_to_num(0.0).numpy()
    for w in weights:
        np.testing.assert_allclose(np.swapaxes(w, -1, -2), ref, rtol=1e-12, atol=1e-15)
    assert not _scaled_q(np, q * 30, k, mask, 8 ** -0.5)[1]  # scores up to about 400: keep the maximum


GELU_EDGES = [0.0, -0.0, 1e-45, -1e-45, 1e-39, -1e-30, 1e-20, 3e-8, -3e-8, 0.5, -0.5, -4.0, -5.5, -5.7, -6.0, -10.0,
              -30.0, -1e4, 4.0, 5.7, 30.0, 1e4, float("inf"), float("-inf"), float("nan")]


@pytest.mark.parametrize("dtype", [tc.float32, tc.float64])
def test_gelu_at_edge_values_matches_torch_forward_and_backward(dtype):
    tdt = torch.float32 if dtype is tc.float32 else torch.float64
    x = tc.tensor(GELU_EDGES, dtype=dtype, requires_grad=True)
    tx = torch.tensor(GELU_EDGES, dtype=tdt, requires_grad=True)
    y, ty = F.gelu(x), torch.nn.functional.gelu(tx)
    finite = np.isfinite(GELU_EDGES)  # gelu(+-inf): PyTorch's float32 kernel gives nan, its float64 one inf
    tol = dict(atol=2e-6, rtol=1e-5) if dtype is tc.float32 else dict(atol=1e-15, rtol=1e-13)
    ours = y.detach().cpu().numpy()
    np.testing.assert_allclose(ours[finite], ty.detach().numpy()[finite], **tol)
    assert np.signbit(ours[GELU_EDGES.index(-30.0)])  # -0.0 (never a positive value) far left
    y.backward(tc.ones_like(y))
    ty.backward(torch.ones_like(ty))
    # the backward takes Phi(x) = gelu(x) / x from the kept output: 0.5 where x is 0 or subnormal, NaN at +-inf
    np.testing.assert_allclose(x.grad.cpu().numpy(), tx.grad.numpy(), equal_nan=True,
                               **(dict(atol=1e-7, rtol=1e-6) if dtype is tc.float32 else tol))


def test_gelu_backward_recomputes_phi_when_the_output_was_modified_in_place():
    rng = np.random.default_rng(7)
    a = rng.standard_normal(50) * 3
    x, tx = tc.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    y, ty = F.gelu(x * 1.0), torch.nn.functional.gelu(tx * 1.0)
    y.add_(1.0)  # PyTorch keeps only x for this backward, so a changed output does not matter
    ty.add_(1.0)
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    assert_close(x.grad, tx.grad, atol=1e-10, rtol=1e-9)


def test_normal_cdf_float32_is_within_3e_7_of_phi_and_stays_in_0_1():
    from scipy.special import ndtr
    from tinygrad_course.ops.erf import normal_cdf_float32
    x = np.concatenate([np.linspace(-12, 12, 400001), [0.0, -0.0, 1e-40, -1e-40]]).astype(np.float32)
    phi = normal_cdf_float32(np, x)
    assert phi.dtype == np.float32
    assert np.abs(phi - ndtr(x.astype(np.float64))).max() < 3e-7
    assert phi.min() == 0.0 and phi.max() == 1.0
    assert np.all(np.diff(phi[:400001]) >= -2.4e-7)  # monotone up to two roundings


# ---- gradcheck (float64, finite differences) ----------------------------------------------------------------

SMALL_MASK = tc.tensor([[[True, False, True], [False, False, False]]])  # (1, 2, 3): a fully masked query
FLOAT_MASK = tc.tensor([[0.0, -1.0, 0.5], [-0.5, 0.0, float("-inf")]], dtype=tc.float64)

CASES = {
    "sdpa_4d": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
                lambda: (_x(1, 2, 2, 3), _x(1, 2, 3, 3, seed=1), _x(1, 2, 3, 2, seed=2))),
    "sdpa_4d_causal_scale": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.5),
                             lambda: (_x(1, 2, 3, 2), _x(1, 2, 3, 2, seed=1), _x(1, 2, 3, 2, seed=2))),
    "sdpa_dead_row_mask": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=SMALL_MASK),
                           lambda: (_x(2, 2, 3), _x(2, 3, 3, seed=1), _x(2, 3, 2, seed=2))),
    "sdpa_float_mask": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=FLOAT_MASK),
                        lambda: (_x(1, 2, 3), _x(1, 3, 3, seed=1), _x(1, 3, 2, seed=2))),
    "sdpa_large_scores": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                          lambda: (_x(1, 2, 5, 3) * 60, _x(1, 2, 5, 3, seed=1) * 4, _x(1, 2, 5, 2, seed=2))),
    "sdpa_bounded_causal": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                            lambda: (_x(1, 1, 16, 2), _x(1, 1, 16, 2, seed=1), _x(1, 1, 16, 2, seed=2))),
    "gelu": (lambda x: F.gelu(x), lambda: (_x(7) * 3,)),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), lambda: (_x(7) * 3,)),
}

test_gradcheck, test_gradgradcheck = gradcheck_tests(
    CASES, ["sdpa_4d_causal_scale", "sdpa_dead_row_mask", "sdpa_float_mask", "sdpa_large_scores", "gelu"])
