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
    "gelu": (lambda x: F.gelu(x), lambda: (_x(7) * 3,)),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), lambda: (_x(7) * 3,)),
}

test_gradcheck, test_gradgradcheck = gradcheck_tests(
    CASES, ["sdpa_4d_causal_scale", "sdpa_dead_row_mask", "sdpa_float_mask", "gelu"])
