"""`queue_callback`: run a function once the current backward pass has finished (PyTorch's
`Variable._execution_engine.queue_callback`), used by DistributedDataParallel."""
import pytest
import torch

import tinygrad_course as tc
from tinygrad_course.autograd.engine import queue_callback


def _run(lib, queue):
    """Backward through a*b+a with a hook on `a` that queues a callback; returns what the callback saw."""
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    seen = []

    def hook(grad):
        queue(lambda: seen.append((a.grad.tolist() if a.grad is not None else None,
                                   b.grad.tolist() if b.grad is not None else None)))

    a.register_hook(hook)
    loss = (a * b + a).sum()
    loss.backward()
    return seen


def test_callback_runs_once_after_every_leaf_gradient_was_accumulated_like_torch():
    ours = _run(tc, queue_callback)
    theirs = _run(torch, torch.autograd.Variable._execution_engine.queue_callback)
    assert ours == theirs == [([4.0, 5.0], [1.0, 2.0])]


def test_callback_runs_after_autograd_grad_too():
    for lib, queue in ((tc, queue_callback), (torch, torch.autograd.Variable._execution_engine.queue_callback)):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        c = a * 3
        ran = []
        c.register_hook(lambda g: queue(lambda: ran.append(g.tolist())))
        (grad,) = lib.autograd.grad(c.sum(), [a])
        assert ran == [[1.0, 1.0]] and grad.tolist() == [3.0, 3.0]


def test_callbacks_run_in_order_and_may_queue_more():
    x = tc.tensor(2.0, requires_grad=True)
    order = []

    def hook(grad):
        queue_callback(lambda: order.append(1))
        queue_callback(lambda: (order.append(2), queue_callback(lambda: order.append(3))))

    x.register_hook(hook)
    (x * x).backward()
    assert order == [1, 2, 3]
    (x * x).backward()  # each backward pass has its own queue
    assert order == [1, 2, 3, 1, 2, 3]


def test_queue_callback_outside_backward_raises_like_torch():
    with pytest.raises(RuntimeError, match="Final callbacks can only be installed during backward pass"):
        torch.autograd.Variable._execution_engine.queue_callback(lambda: None)
    with pytest.raises(RuntimeError, match="Final callbacks can only be installed during backward pass"):
        queue_callback(lambda: None)


def test_callbacks_are_dropped_when_backward_fails():
    x = tc.tensor(2.0, requires_grad=True)
    ran = []

    def hook(g):
        queue_callback(lambda: ran.append(1))
        raise ValueError("boom")

    x.register_hook(hook)
    with pytest.raises(ValueError):
        (x * x).backward()
    assert ran == []
    with pytest.raises(RuntimeError, match="Final callbacks"):
        queue_callback(lambda: None)  # the failed pass left no queue behind


def test_two_outputs_of_one_node_as_roots_both_reach_the_input():
    """backward/grad from two outputs of one multi-output op (chunk) count the shared node once, as PyTorch."""
    import torch

    x, xt = tc.arange(4.0).requires_grad_(True), torch.arange(4.0).requires_grad_(True)
    a, b = x.chunk(2)
    at, bt = xt.chunk(2)
    tc.autograd.backward([a, b], [tc.ones(2), tc.full((2,), 2.0)])
    torch.autograd.backward([at, bt], [torch.ones(2), torch.full((2,), 2.0)])
    assert x.grad.tolist() == xt.grad.tolist()
    a, b = x.chunk(2)
    (g,) = tc.autograd.grad([a, b], x, [tc.ones(2), tc.full((2,), 2.0)])
    assert g.tolist() == [1.0, 1.0, 2.0, 2.0]
