"""In build mode the loss of a model is the learner's: `F.cross_entropy` and `F.nll_loss` run chapter 05's
`cross_entropy` and `nll_loss` (exercise 05.6, which pick with chapter 01's `pick`), equal to PyTorch's in value
and gradient; without them `F.cross_entropy` is PyTorch's composite, `nll_loss(log_softmax(input, 1), target)`, on
the learner's `log_softmax`."""
from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from build_helpers import solution_cell

import tinygrad_course as tc
import tinygrad_course.nn.functional as F
from tinygrad_course import seams
from tinygrad_course.build.components import BY_NAME


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


# ---- chapter 05's nll_loss and cross_entropy as the learner's (exercise 05.6) -------------------------------

def _learners_losses(pick_calls=None):
    """The released solution's loss cell, adapted as build mode installs it: {seam: implementation}."""
    namespace = {"tc": tc}
    exec(compile(solution_cell("05_training.ipynb", "ex05_6"), "<ch05 loss>", "exec"), namespace)
    installed = {name: BY_NAME[name].adapt(namespace[BY_NAME[name].defines]) for name in ("nll_loss", "cross_entropy")}
    if pick_calls is not None:
        def pick(scores, labels):
            pick_calls.append(1)
            return scores.gather(1, labels.unsqueeze(1)).squeeze(1)
        installed["pick"] = pick
    return installed


def _both(fn_name, shape, target, **kw):
    """(the learner's loss and input gradient through F.<fn_name>, PyTorch's)."""
    rng = np.random.default_rng(len(shape) + len(kw))
    x = rng.normal(size=shape)
    kw_tc = {k: tc.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    kw_torch = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    mine = tc.tensor(x, requires_grad=True)
    with seams.replaced(_learners_losses()):
        if fn_name == "nll_loss":
            loss = F.nll_loss(F.log_softmax(mine, 1), tc.tensor(target), **kw_tc)
        else:
            loss = F.cross_entropy(mine, tc.tensor(target), **kw_tc)
        (loss * tc.tensor(np.linspace(0.5, 1.5, loss.numel()).reshape(tuple(loss.shape)))).sum().backward()
    theirs = torch.tensor(x, requires_grad=True)
    tf = torch.nn.functional
    expected = (tf.nll_loss(tf.log_softmax(theirs, 1), torch.tensor(target), **kw_torch) if fn_name == "nll_loss"
                else tf.cross_entropy(theirs, torch.tensor(target), **kw_torch))
    (expected * torch.tensor(np.linspace(0.5, 1.5, expected.numel()).reshape(tuple(expected.shape)))).sum().backward()
    return (loss.detach().numpy(), mine.grad.numpy()), (expected.detach().numpy(), theirs.grad.numpy())


CASES = [((6, 5), [0, 4, -100, 2, 1, 3], {}), ((6, 5), [0, 4, -100, 2, 1, 3], {"reduction": "sum"}),
         ((6, 5), [0, 4, -100, 2, 1, 3], {"reduction": "none"}), ((6, 5), [0, 4, 3, 2, 1, 3], {"ignore_index": 3}),
         ((6, 5), [0, 4, -100, 2, 1, 3], {"weight": np.linspace(0.5, 2.0, 5)}),
         ((2, 3, 4), [[0, 2, 1, 1], [-100, 2, 0, 2]], {}), ((2, 3, 4, 2), np.zeros((2, 4, 2), dtype=np.int64).tolist(),
                                                            {"reduction": "none"})]


@pytest.mark.parametrize("fn_name", ["nll_loss", "cross_entropy"])
@pytest.mark.parametrize("shape, target, kw", CASES, ids=[str(i) for i in range(len(CASES))])
def test_the_learners_losses_equal_pytorchs_values_and_gradients(fn_name, shape, target, kw):
    (loss, grad), (expected, expected_grad) = _both(fn_name, shape, target, **kw)
    assert loss.shape == expected.shape
    np.testing.assert_allclose(loss, expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("kw", [{"label_smoothing": 0.1}, {"label_smoothing": 0.3, "reduction": "none"},
                                {"label_smoothing": 0.2, "reduction": "sum"}])
def test_the_learners_label_smoothing_equals_pytorchs(kw):
    for shape, target in (((6, 5), [0, 4, -100, 2, 1, 3]), ((2, 3, 4), [[0, 2, 1, 1], [-100, 2, 0, 2]])):
        (loss, grad), (expected, expected_grad) = _both("cross_entropy", shape, target, **kw)
        np.testing.assert_allclose(loss, expected, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(grad, expected_grad, rtol=1e-9, atol=1e-12)


def test_nn_cross_entropy_loss_runs_the_learners_with_chapter_01s_pick():
    picks = []
    x, target = tc.randn(4, 3, requires_grad=True), tc.tensor([0, 2, -100, 1])
    with seams.replaced(_learners_losses(picks)):
        seams.reset_calls()
        loss = tc.nn.CrossEntropyLoss(label_smoothing=0.1)(x, target)
        counted = seams.calls()
    assert counted.get("cross_entropy") == 1 and picks  # the learner's cross_entropy, picking with pick
    expected = torch.nn.CrossEntropyLoss(label_smoothing=0.1)(torch.tensor(x.detach().numpy()),
                                                               torch.tensor([0, 2, -100, 1]))
    np.testing.assert_allclose(loss.item(), expected.item(), rtol=1e-6)


@pytest.mark.parametrize("call", [
    lambda x, t: F.cross_entropy(x, t, weight=tc.tensor([1.0, 2.0, 0.5]), label_smoothing=0.1),
    lambda x, t: F.cross_entropy(x, tc.tensor(np.full((4, 3), 1 / 3, dtype=np.float32))),  # class probabilities
    lambda x, t: F.cross_entropy(x, t, size_average=False),
    lambda x, t: F.nll_loss(x, t, reduce=False),
    lambda x, t: F.cross_entropy(x[0], t[0]),  # one unbatched row
])
def test_what_the_exercise_does_not_cover_stays_with_the_reference(call):
    x, target = tc.randn(4, 3), tc.tensor([0, 2, 1, 1])
    reference = call(x, target)
    with seams.replaced(_learners_losses()):
        seams.reset_calls()
        routed = call(x, target)
        assert "cross_entropy" in seams.calls() or "nll_loss" in seams.calls()
    np.testing.assert_array_equal(routed.numpy(), reference.numpy())


def test_a_learners_loss_of_the_wrong_shape_is_refused_not_repaired():
    def summed(input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        return (input * 0).sum(1)  # one value per row where a 0-d mean was asked
    with seams.replaced({"cross_entropy": BY_NAME["cross_entropy"].adapt(summed)}):
        with pytest.raises(RuntimeError, match=r"returned shape \(4,\) for target of shape \(4,\), expected \(\)"):
            F.cross_entropy(tc.randn(4, 3), tc.tensor([0, 2, 1, 1]))


@pytest.mark.parametrize("fn_name, shape, target", [
    ("nll_loss", (3, 4), [[0], [1], [2]]), ("nll_loss", (2, 3, 4), [[0, 1, 2, 0, 1]] * 2),
    ("cross_entropy", (2, 3, 4), [0, 1]), ("cross_entropy", (3, 4), [0, 1]), ("nll_loss", (3, 4), [0, 1, 4])])
def test_a_wrong_target_raises_pytorchs_error_with_and_without_the_learners_losses(fn_name, shape, target):
    with pytest.raises(Exception) as theirs:
        getattr(torch.nn.functional, fn_name)(torch.zeros(shape), torch.tensor(target))
    for installed in ({}, _learners_losses()):
        with seams.replaced(installed):
            with pytest.raises(type(theirs.value), match=re.escape(str(theirs.value))):
                getattr(F, fn_name)(tc.zeros(shape), tc.tensor(target))
