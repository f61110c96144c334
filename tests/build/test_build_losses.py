"""In build mode `F.cross_entropy` is PyTorch's composite, `nll_loss(log_softmax(input, 1), target)`, so the
loss of a model runs on the learner's `log_softmax` (chapter 05) and `pick` (chapter 01)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import tinygrad_course as tc
import tinygrad_course.nn.functional as F
from tinygrad_course import seams


def _learners_log_softmax(calls):
    def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
        calls.append(dim)
        shifted = input - input.max(dim, keepdim=True).values.detach()
        return shifted - shifted.exp().sum(dim, keepdim=True).log()
    return log_softmax


def _loss_and_grad(logits, target, **kw):
    x = tc.tensor(logits, requires_grad=True)
    loss = F.cross_entropy(x, tc.tensor(target), **kw)
    loss.sum().backward()
    return loss.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("kw", [{}, {"reduction": "sum"}, {"reduction": "none"}, {"ignore_index": 1}])
def test_cross_entropy_runs_the_learners_log_softmax_and_equals_pytorch(kw):
    rng = np.random.default_rng(0)
    logits, target = rng.normal(size=(5, 4)).astype(np.float32), [0, 3, 1, 2, 1]
    calls = []
    with seams.replaced({"log_softmax": _learners_log_softmax(calls)}):
        loss, grad = _loss_and_grad(logits, target, **kw)
    assert calls == [1]
    x = torch.tensor(logits, requires_grad=True)
    expected = torch.nn.functional.cross_entropy(x, torch.tensor(target), **kw)
    expected.sum().backward()
    np.testing.assert_allclose(loss, expected.detach().numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(grad, x.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_cross_entropy_over_a_sequence_keeps_pytorchs_shapes():
    rng = np.random.default_rng(1)
    logits, target = rng.normal(size=(2, 3, 4)).astype(np.float32), [[0, 1, 2, 0], [2, 2, 1, 0]]
    calls = []
    with seams.replaced({"log_softmax": _learners_log_softmax(calls)}):
        loss, _ = _loss_and_grad(logits, target, reduction="none")
    expected = torch.nn.functional.cross_entropy(torch.tensor(logits), torch.tensor(target), reduction="none")
    assert calls and loss.shape == tuple(expected.shape)
    np.testing.assert_allclose(loss, expected.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kw", [{"weight": [1.0, 2.0, 1.0, 0.5]}, {"label_smoothing": 0.1}])
def test_class_weights_and_label_smoothing_stay_with_the_reference(kw):
    kw = {k: tc.tensor(v) if isinstance(v, list) else v for k, v in kw.items()}
    logits, target = np.eye(4, dtype=np.float32)[:3] * 2, [0, 1, 3]
    calls = []
    with seams.replaced({"log_softmax": _learners_log_softmax(calls)}):
        loss, _ = _loss_and_grad(logits, target, **kw)
    assert calls == []
    reference, _ = _loss_and_grad(logits, target, **kw)
    np.testing.assert_array_equal(loss, reference)
