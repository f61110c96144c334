"""Max pooling against PyTorch where the argmax is ambiguous: equal maxima (ReLU zeros), NaNs, -inf padding.

PyTorch keeps the first of equal maxima and lets a NaN replace the maximum (the last NaN of a window wins);
values, `return_indices` and the input gradient (which follows the indices) must agree exactly, with and
without a graph built through backward (create_graph takes the differentiable path).
"""
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import tinygrad_course as tc

def _np(t):
    return t.detach().cpu().numpy() if isinstance(t, tc.Tensor) else t.detach().numpy()


GEOMETRIES = [  # kernel, stride, padding, dilation
    (2, 2, 0, 1), (3, 2, 1, 1), (2, 1, 0, 2), ((2, 3), (2, 1), (1, 1), 1), (3, 3, 0, 1), (1, 1, 0, 1),
]


def _both(a, kernel, stride, padding, dilation, create_graph=False):
    x = tc.tensor(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    out, idx = tc.nn.functional.max_pool2d(x, kernel, stride, padding, dilation, return_indices=True)
    tout, tidx = torch.nn.functional.max_pool2d(tx, kernel, stride, padding, dilation, return_indices=True)
    g = np.arange(out.numel(), dtype=np.float32).reshape(tuple(out.shape)) + 1
    (gx,) = tc.autograd.grad(out, x, tc.tensor(g), create_graph=create_graph)
    (tgx,) = torch.autograd.grad(tout, tx, torch.tensor(g))
    return (out, idx, gx), (tout, tidx, tgx)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("geometry", GEOMETRIES)
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_ties_and_nans_match_torch(geometry, create_graph, data):
    h = data.draw(st.integers(4, 9))
    w = data.draw(st.integers(4, 9))
    # few distinct values: many windows have several equal maxima; some NaNs and infinities
    pool = st.sampled_from([0.0, 0.0, 1.0, -1.0, 2.0, float("nan"), float("inf"), float("-inf")])
    values = data.draw(st.lists(pool, min_size=2 * 3 * h * w, max_size=2 * 3 * h * w))
    a = np.array(values, dtype=np.float32).reshape(2, 3, h, w)
    ours, theirs = _both(a, *geometry, create_graph=create_graph)
    np.testing.assert_array_equal(_np(ours[0]), _np(theirs[0]))
    np.testing.assert_array_equal(_np(ours[1]), _np(theirs[1]))
    np.testing.assert_array_equal(_np(ours[2]), _np(theirs[2]))


def test_relu_zeros_route_to_first_position():
    a = np.zeros((1, 1, 4, 4), dtype=np.float32)
    a[0, 0, 3, 3] = 5.0
    ours, theirs = _both(a, 2, 2, 0, 1)
    np.testing.assert_array_equal(_np(ours[1]), [[[[0, 2], [8, 15]]]])
    np.testing.assert_array_equal(_np(ours[2]), _np(theirs[2]))


def test_integer_input_pools_without_offsets():
    a = np.array([[[[1, 5, 2, 2], [3, 4, 2, 7]]]], dtype=np.int64)
    out, idx = tc.nn.functional.max_pool2d(tc.tensor(a), 2, return_indices=True)
    tout, tidx = torch.nn.functional.max_pool2d(torch.tensor(a).float(), 2, return_indices=True)
    np.testing.assert_array_equal(_np(out), tout.numpy().astype(np.int64))
    np.testing.assert_array_equal(_np(idx), tidx.numpy())


def test_nonfinite_upstream_gradient_reaches_only_the_argmax():
    a = np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4)
    g = np.array([[[[np.inf, 1.0], [np.nan, -2.0]], [[1.0, 2.0], [3.0, 4.0]]]], dtype=np.float32)
    x, tx = tc.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    tc.nn.functional.max_pool2d(x, 2).backward(tc.tensor(g))
    torch.nn.functional.max_pool2d(tx, 2).backward(torch.tensor(g))
    np.testing.assert_array_equal(_np(x.grad), tx.grad.numpy())
