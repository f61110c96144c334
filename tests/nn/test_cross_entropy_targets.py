"""cross_entropy with plain class-index targets takes a path that picks each row's log-probability; its values,
gradients (first and second order) and errors are PyTorch's, and targets it does not cover (ignored entries,
out-of-range indices) still take the general path."""
import numpy as np
import pytest
import torch

import tinygrad_course as tc


def _np(t):
    return t.detach().cpu().numpy()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_values_and_gradients_match_torch(reduction):
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((7, 5)).astype(np.float32)
    logits[2, 4] = -np.inf  # a non-target class PyTorch gives probability 0 (no nan in the loss)
    y = np.array([0, 1, 2, 3, 4, 0, 1])
    x, tx = tc.tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
    out = tc.nn.functional.cross_entropy(x, tc.tensor(y), reduction=reduction)
    tout = torch.nn.functional.cross_entropy(tx, torch.tensor(y), reduction=reduction)
    np.testing.assert_allclose(_np(out), tout.detach().numpy(), rtol=1e-6)
    assert out.grad_fn.name() == tout.grad_fn.name()
    g = np.linspace(0.5, 2, 7).astype(np.float32) if reduction == "none" else np.float32(1.5)
    out.backward(tc.tensor(g))
    tout.backward(torch.tensor(g))
    np.testing.assert_allclose(_np(x.grad), tx.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_second_derivative_matches_torch():
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((4, 3))
    y = np.array([2, 0, 1, 1])
    x, tx = tc.tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
    (gx,) = tc.autograd.grad(tc.nn.functional.cross_entropy(x, tc.tensor(y)), x, create_graph=True)
    (tgx,) = torch.autograd.grad(torch.nn.functional.cross_entropy(tx, torch.tensor(y)), tx, create_graph=True)
    (ggx,) = tc.autograd.grad((gx * gx).sum(), x)
    (tggx,) = torch.autograd.grad((tgx * tgx).sum(), tx)
    np.testing.assert_allclose(_np(ggx), tggx.numpy(), rtol=1e-10)


def test_backward_twice_with_retained_graph_gives_the_same_gradient():
    x = tc.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 1.0]], requires_grad=True)
    loss = tc.nn.functional.cross_entropy(x, tc.tensor([2, 0]))
    loss.backward(retain_graph=True)
    first = _np(x.grad).copy()
    x.grad = None
    loss.backward()
    np.testing.assert_array_equal(_np(x.grad), first)


@pytest.mark.parametrize("ignore_index", [0, 1, -100])
def test_ignored_targets_match_torch(ignore_index):
    logits = np.arange(12, dtype=np.float32).reshape(4, 3) / 7
    y = np.array([0, 1, -100 if ignore_index == -100 else 2, 1])
    out = tc.nn.functional.cross_entropy(tc.tensor(logits), tc.tensor(y), ignore_index=ignore_index)
    tout = torch.nn.functional.cross_entropy(torch.tensor(logits), torch.tensor(y), ignore_index=ignore_index)
    np.testing.assert_allclose(out.item(), tout.item(), rtol=1e-6)


@pytest.mark.parametrize("bad", [3, -1])
def test_out_of_range_target_raises_like_torch(bad):
    with pytest.raises(IndexError, match=f"Target {bad} is out of bounds."):
        tc.nn.functional.cross_entropy(tc.zeros(2, 3), tc.tensor([0, bad]))


CASES = {  # a -inf logit in a class the target does not pick: finite for index targets, nan for 0 * -inf
    "weighted": lambda F, lib, x: F.cross_entropy(x, lib.tensor([0, 1]), weight=lib.tensor([1.0, 2.0, 3.0])),
    "ignore_index": lambda F, lib, x: F.cross_entropy(x, lib.tensor([0, 1]), ignore_index=1),
    "smoothing": lambda F, lib, x: F.cross_entropy(x, lib.tensor([0, 1]), label_smoothing=0.1),
    "probabilities": lambda F, lib, x: F.cross_entropy(x, lib.tensor([[0.5, 0.5, 0.0], [0.0, 1.0, 0.0]])),
    "nll_loss": lambda F, lib, x: F.nll_loss(x, lib.tensor([0, 1])),
    "none": lambda F, lib, x: F.cross_entropy(x, lib.tensor([0, 1]), weight=lib.tensor([1.0, 2.0, 3.0]),
                                              reduction="none"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_infinite_logit_of_an_unpicked_class_matches_torch(case):
    logits = np.array([[1.0, 2.0, -np.inf], [0.5, -1.0, -np.inf]], dtype=np.float32)
    x, tx = tc.tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
    out, tout = CASES[case](tc.nn.functional, tc, x), CASES[case](torch.nn.functional, torch, tx)
    np.testing.assert_allclose(_np(out), tout.detach().numpy(), rtol=1e-6)
    if np.isfinite(tout.detach().numpy()).all():
        out.sum().backward()
        tout.sum().backward()
        np.testing.assert_allclose(_np(x.grad), tx.grad.numpy(), rtol=1e-6, atol=1e-7)
