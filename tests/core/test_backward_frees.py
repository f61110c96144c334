"""Backward frees what each node kept for it as soon as the node has run (PyTorch frees saved variables),
so a finished step does not carry its graph's arrays into the next one."""
import numpy as np
import pytest
import torch

import tinygrad_course as tc
import tinygrad_course.nn.functional as F


def _arrays_on(node):
    return [k for k, v in vars(node).items() if isinstance(v, np.ndarray)]


def test_arrays_kept_by_forward_are_dropped_after_the_node_runs():
    x = tc.randn(2, 1, 6, 6, device="cpu", requires_grad=True)
    w = tc.randn(3, 1, 3, 3, device="cpu", requires_grad=True)
    pool = F.max_pool2d(F.conv2d(x, w), 2)
    soft = F.softmax(pool.flatten(1), dim=1)
    assert _arrays_on(pool.grad_fn) and _arrays_on(soft.grad_fn)  # the argmax indices, the softmax output
    soft.sum().backward()
    assert _arrays_on(pool.grad_fn) == [] and _arrays_on(soft.grad_fn) == []


def test_retain_graph_keeps_them_and_a_second_backward_gives_the_same_gradient():
    x = tc.randn(2, 1, 6, 6, device="cpu", requires_grad=True)
    y = F.max_pool2d(x, 2).sum()
    y.backward(retain_graph=True)
    first = x.grad.clone()
    y.backward()
    assert tc.allclose(x.grad, 2 * first)


def test_second_backward_through_a_freed_node_raises_like_pytorch():
    x = tc.randn(1, 1, 4, 4, device="cpu", requires_grad=True)
    y = F.max_pool2d(x, 2).sum()
    y.backward()
    tx = torch.randn(1, 1, 4, 4, requires_grad=True)
    ty = torch.nn.functional.max_pool2d(tx, 2).sum()
    ty.backward()
    with pytest.raises(RuntimeError) as theirs:
        ty.backward()
    with pytest.raises(RuntimeError) as ours:
        y.backward()
    assert str(ours.value) == str(theirs.value)


def test_nodes_without_kept_arrays_still_run_twice():
    x = tc.randn(3, device="cpu", requires_grad=True)
    y = (x + 1).sum()
    y.backward()
    y.backward()  # AddBackward0 and SumBackward0 keep only shapes, as in PyTorch
    assert tc.equal(x.grad, tc.full((3,), 2.0, device="cpu"))


def test_a_custom_functions_own_ctx_attributes_stay():
    class Scale(tc.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.factor = np.full(3, 2.0)
            return x * 2.0

        @staticmethod
        def backward(ctx, g):
            return g * tc.tensor(ctx.factor, dtype=g.dtype, device=g.device)

    x = tc.ones(3, device="cpu", requires_grad=True)
    y = Scale.apply(x).sum()
    y.backward()
    y.backward()  # PyTorch keeps attributes set on ctx; only saved tensors are freed
    assert tc.equal(x.grad, tc.full((3,), 4.0, device="cpu"))
