"""Stride-1 convolutions with 8+ input channels go through `ops.conv_runs` (patch matrices from contiguous
row runs, the batch in chunks); values and all three gradients must be PyTorch's for every padding, dilation
and kernel shape, across chunk boundaries, and second derivatives go through the recorded path."""
import numpy as np
import pytest
import torch

import tinygrad_course as tc
from tinygrad_course.ops import conv_runs


def _np(t):
    return t.detach().cpu().numpy()


@pytest.mark.parametrize("kernel,padding,dilation", [
    ((3, 3), 0, 1), ((3, 3), 1, 1), ((3, 3), 2, 2), ((1, 1), 0, 1), ((2, 3), (1, 0), (2, 1)), ((5, 5), 2, 1),
])
@pytest.mark.parametrize("bias", [True, False])
def test_matches_torch(kernel, padding, dilation, bias, monkeypatch):
    monkeypatch.setattr(conv_runs, "_CHUNK_BYTES", 40_000)  # several chunks per batch
    rng = np.random.default_rng(0)
    x = rng.standard_normal((7, 8, 9, 11)).astype(np.float32)
    w = rng.standard_normal((5, 8) + kernel).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32) if bias else None
    tx, tw = tc.tensor(x, requires_grad=True), tc.tensor(w, requires_grad=True)
    ox, ow = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    tb = tc.tensor(b, requires_grad=True) if bias else None
    ob = torch.tensor(b, requires_grad=True) if bias else None
    y = tc.nn.functional.conv2d(tx, tw, tb, padding=padding, dilation=dilation)
    oy = torch.nn.functional.conv2d(ox, ow, ob, padding=padding, dilation=dilation)
    assert y.shape == oy.shape and y.is_contiguous()
    np.testing.assert_allclose(_np(y), oy.detach().numpy(), rtol=1e-4, atol=1e-4)
    g = rng.standard_normal(tuple(oy.shape)).astype(np.float32)
    y.backward(tc.tensor(g))
    oy.backward(torch.tensor(g))
    np.testing.assert_allclose(_np(tx.grad), ox.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(_np(tw.grad), ow.grad.numpy(), rtol=1e-4, atol=1e-3)
    if bias:
        np.testing.assert_allclose(_np(tb.grad), ob.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_only_the_weight_needs_a_gradient():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 8, 6, 6)).astype(np.float32)
    w = rng.standard_normal((4, 8, 3, 3)).astype(np.float32)
    tw, ow = tc.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    tc.nn.functional.conv2d(tc.tensor(x), tw).sum().backward()
    torch.nn.functional.conv2d(torch.tensor(x), ow).sum().backward()
    np.testing.assert_allclose(_np(tw.grad), ow.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_second_derivative_matches_torch():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 8, 5, 5))
    w = rng.standard_normal((3, 8, 3, 3))
    tx, tw = tc.tensor(x, requires_grad=True), tc.tensor(w, requires_grad=True)
    ox, ow = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    (gx,) = tc.autograd.grad((tc.nn.functional.conv2d(tx, tw, padding=1) ** 2).sum(), tx, create_graph=True)
    (ogx,) = torch.autograd.grad((torch.nn.functional.conv2d(ox, ow, padding=1) ** 2).sum(), ox, create_graph=True)
    (ggw,) = tc.autograd.grad(gx.sum(), tw)
    (oggw,) = torch.autograd.grad(ogx.sum(), ow)
    np.testing.assert_allclose(_np(ggw), oggw.numpy(), rtol=1e-9)
