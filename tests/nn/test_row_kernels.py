"""Array kernels of layer norm (row statistics as products with vectors of ones from 4096 numbers on,
ops/normalize_grads.py) and of Embedding's weight gradient (a stable sort and add.reduceat,
ops/embedding.py): parity with PyTorch."""
import numpy as np
import pytest
import torch

import tinygrad_course as tc
from nn_helpers import assert_close, to_torch

TOL = {tc.float32: dict(atol=2e-5, rtol=1e-4), tc.float64: dict(atol=1e-12, rtol=1e-10)}


@pytest.mark.parametrize("shape, normalized", [((4, 16, 64), (64,)), ((40, 5, 4, 6), (4, 6)), ((1400, 3), (3,)), ((3, 5), (5,))])
@pytest.mark.parametrize("options", [{}, {"elementwise_affine": False}, {"bias": False}])
@pytest.mark.parametrize("dtype", [tc.float32, tc.float64])
def test_layer_norm_rows_match_torch_forward_and_backward(shape, normalized, options, dtype):
    rng = np.random.default_rng(0)
    tdt = torch.float32 if dtype is tc.float32 else torch.float64
    ours = tc.nn.LayerNorm(normalized, dtype=dtype, **options)
    theirs = torch.nn.LayerNorm(normalized, dtype=tdt, **options)
    with tc.no_grad(), torch.no_grad():
        for p, tp in zip(ours.parameters(), theirs.parameters()):
            value = rng.standard_normal(tuple(p.shape))
            p.copy_(tc.tensor(value, dtype=dtype))
            tp.copy_(torch.tensor(value, dtype=tdt))
    x = tc.tensor(rng.standard_normal(shape) * 3 + 1, dtype=dtype, requires_grad=True)
    tx = to_torch(x)
    y, ty = ours(x), theirs(tx)
    assert_close(y, ty, **TOL[dtype])
    g = rng.standard_normal(shape)
    y.backward(tc.tensor(g, dtype=dtype))
    ty.backward(torch.tensor(g, dtype=tdt))
    assert_close(x.grad, tx.grad, **TOL[dtype])
    for p, tp in zip(ours.parameters(), theirs.parameters()):
        assert_close(p.grad, tp.grad, **TOL[dtype])


@pytest.mark.parametrize("padding_idx", [None, 3, -1])
@pytest.mark.parametrize("dtype", [tc.float32, tc.float64])
def test_embedding_weight_gradient_matches_torch(padding_idx, dtype):
    rng = np.random.default_rng(1)
    tdt = torch.float32 if dtype is tc.float32 else torch.float64
    ours = tc.nn.Embedding(10, 6, padding_idx=padding_idx, dtype=dtype)
    theirs = torch.nn.Embedding(10, 6, padding_idx=padding_idx, dtype=tdt)
    with tc.no_grad(), torch.no_grad():
        value = rng.standard_normal((10, 6))
        ours.weight.copy_(tc.tensor(value, dtype=dtype))
        theirs.weight.copy_(torch.tensor(value, dtype=tdt))
    idx = rng.integers(0, 10, (4, 25))  # every row many times, in no order
    out, tout = ours(tc.tensor(idx)), theirs(torch.tensor(idx))
    g = rng.standard_normal((4, 25, 6))
    out.backward(tc.tensor(g, dtype=dtype))
    tout.backward(torch.tensor(g, dtype=tdt))
    assert_close(ours.weight.grad, theirs.weight.grad, **TOL[dtype])
    if padding_idx is not None:
        assert not ours.weight.grad[padding_idx].any()


def test_embedding_gradient_of_no_indices_is_zero():
    emb = tc.nn.Embedding(5, 3)
    emb(tc.zeros(2, 0, dtype=tc.int64)).sum().backward()
    assert tc.equal(emb.weight.grad, tc.zeros(5, 3))


@pytest.mark.parametrize("fn", ["layer_norm", "rms_norm"])
def test_an_empty_normalized_shape_is_refused_with_pytorchs_error(fn):
    x = np.ones((2, 3), np.float32)
    with pytest.raises(RuntimeError) as expected:
        getattr(torch.nn.functional, fn)(torch.from_numpy(x), ())
    with pytest.raises(RuntimeError) as got:
        getattr(tc.nn.functional, fn)(tc.from_numpy(x), ())
    assert str(got.value) == str(expected.value)
