"""Losses against PyTorch: values, input gradients, options, and numerical stability."""
import numpy as np
import pytest
import torch

import tinygrad_course as tc
import tinygrad_course.nn as nn
import tinygrad_course.nn.functional as F
from nn_helpers import assert_close, pair, to_torch

TF = torch.nn.functional


def _compare(ours_fn, theirs_fn, x, tx, *rest):
    out, tout = ours_fn(x, *rest[0::2]), theirs_fn(tx, *rest[1::2])
    assert_close(out, tout)
    g = tc.ones_like(out)
    out.backward(g)
    tout.backward(torch.ones_like(tout))
    assert_close(x.grad, tx.grad)
    return out


CE_OPTIONS = [
    {},
    {"reduction": "sum"},
    {"reduction": "none"},
    {"label_smoothing": 0.1},
    {"label_smoothing": -0.1},  # PyTorch smooths only above 0
    {"ignore_index": 2},
    {"weight": True},
    {"weight": True, "ignore_index": 1, "label_smoothing": 0.2},
    {"weight": True, "reduction": "none", "label_smoothing": 0.3},
]


@pytest.mark.parametrize("options", CE_OPTIONS)
@pytest.mark.parametrize("shape", [(6, 4), (3, 4, 2, 2)])
def test_cross_entropy_class_indices(options, shape):
    x, tx = pair(*shape)
    target_shape = (shape[0],) + shape[2:]
    y = tc.randint(0, shape[1], target_shape)
    kw, tkw = dict(options), dict(options)
    if kw.get("weight"):
        w = tc.rand(shape[1]) + 0.5
        kw["weight"], tkw["weight"] = w, to_torch(w)
    out = _compare(lambda a, t: F.cross_entropy(a, t, **kw), lambda a, t: TF.cross_entropy(a, t, **tkw),
                   x, tx, y, to_torch(y))
    if out.ndim == 0:
        assert out.grad_fn.name() == "NllLossBackward0"


@pytest.mark.parametrize("options", [{}, {"label_smoothing": 0.2}, {"reduction": "sum"}, {"weight": True}])
def test_cross_entropy_probabilities(options):
    x, tx = pair(5, 3)
    p = tc.rand(5, 3).softmax(1)
    kw, tkw = dict(options), dict(options)
    if kw.get("weight"):
        w = tc.rand(3) + 0.5
        kw["weight"], tkw["weight"] = w, to_torch(w)
    _compare(lambda a, t: F.cross_entropy(a, t, **kw), lambda a, t: TF.cross_entropy(a, t, **tkw),
             x, tx, p, to_torch(p))


def test_cross_entropy_unbatched_and_module():
    x, tx = pair(4)
    y = tc.tensor(2)
    _compare(F.cross_entropy, TF.cross_entropy, x, tx, y, to_torch(y))
    loss = nn.CrossEntropyLoss(label_smoothing=0.1)
    x, tx = pair(3, 5)
    y = tc.tensor([0, 4, 1])
    _compare(loss, torch.nn.CrossEntropyLoss(label_smoothing=0.1), x, tx, y, to_torch(y))


def test_cross_entropy_is_stable_for_huge_logits():
    x = tc.tensor([[1e4, -1e4, 0.0], [0.0, 1e4, 1e4]], requires_grad=True)
    y = tc.tensor([1, 0])
    loss = F.cross_entropy(x, y)
    loss.backward()
    tx = to_torch(x)
    tloss = TF.cross_entropy(tx, to_torch(y))
    tloss.backward()
    assert np.isfinite(loss.item()) and np.isfinite(x.grad.cpu().numpy()).all()
    assert_close(loss, tloss, rtol=1e-6)
    assert_close(x.grad, tx.grad)
    lp = F.log_softmax(x, 1)
    assert np.isfinite(lp.detach().cpu().numpy()).all()


def test_cross_entropy_errors():
    with pytest.raises(IndexError, match="Target 7 is out of bounds."):
        F.cross_entropy(tc.randn(2, 3), tc.tensor([0, 7]))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target batch_size \(2\)."):
        F.cross_entropy(tc.randn(3, 4), tc.tensor([0, 1]))

@pytest.mark.parametrize("loss", ["nll_loss", "cross_entropy"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int16", "bool", "uint8", "int64"])
def test_class_index_targets_take_torchs_dtypes_and_its_error(loss, dtype):
    """Class indices must be int64 or uint8 (PyTorch 2.13's message names the dtype otherwise)."""
    x, labels = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32), [1, 2, 0]
    ours, theirs = getattr(F, loss), getattr(TF, loss)
    target, ttarget = tc.tensor(labels).to(getattr(tc, dtype)), torch.tensor(labels).to(getattr(torch, dtype))
    try:
        expected = theirs(torch.tensor(x), ttarget)
    except RuntimeError as error:
        with pytest.raises(RuntimeError) as ours_error:
            ours(tc.tensor(x), target)
        assert str(ours_error.value) == str(error)
        return
    assert abs(ours(tc.tensor(x), target).item() - expected.item()) < 1e-6



@pytest.mark.parametrize("options", [{}, {"reduction": "sum"}, {"reduction": "none"}, {"ignore_index": 0},
                                     {"weight": True}])
def test_nll_loss(options):
    x, tx = pair(6, 4)
    y = tc.randint(0, 4, (6,))
    kw, tkw = dict(options), dict(options)
    if kw.get("weight"):
        w = tc.rand(4) + 0.5
        kw["weight"], tkw["weight"] = w, to_torch(w)
    out = _compare(lambda a, t: F.nll_loss(F.log_softmax(a, 1), t, **kw),
                   lambda a, t: TF.nll_loss(TF.log_softmax(a, 1), t, **tkw), x, tx, y, to_torch(y))
    assert out.grad_fn.name() == "NllLossBackward0"


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", ["mse_loss", "l1_loss"])
def test_regression_losses(name, reduction):
    x, tx = pair(4, 3)
    t = tc.randn(4, 3)
    _compare(lambda a, b: getattr(F, name)(a, b, reduction=reduction),
             lambda a, b: getattr(TF, name)(a, b, reduction=reduction), x, tx, t, to_torch(t))


def test_loss_modules_match_functional():
    x, tx = pair(4, 3)
    t = tc.rand(4, 3)
    for ours, theirs in [(nn.MSELoss(), torch.nn.MSELoss()), (nn.L1Loss(reduction="sum"), torch.nn.L1Loss(reduction="sum")),
                         (nn.BCEWithLogitsLoss(), torch.nn.BCEWithLogitsLoss())]:
        assert_close(ours(x, t), theirs(tx, to_torch(t)))
    p = tc.rand(4, 3) * 0.9 + 0.05
    assert_close(nn.BCELoss()(p, t), torch.nn.BCELoss()(to_torch(p), to_torch(t)))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy(reduction):
    p = (tc.rand(5, 2) * 0.98 + 0.01).requires_grad_()
    tp = to_torch(p)
    t = tc.rand(5, 2)
    w = tc.rand(5, 2)
    _compare(lambda a, b, c: F.binary_cross_entropy(a, b, c, reduction=reduction),
             lambda a, b, c: TF.binary_cross_entropy(a, b, c, reduction=reduction), p, tp, t, to_torch(t), w, to_torch(w))


@pytest.mark.parametrize("use_pos_weight", [False, True])
def test_binary_cross_entropy_with_logits(use_pos_weight):
    x, tx = pair(5, 3, scale=3.0)
    t = (tc.rand(5, 3) > 0.5).float()
    pw = tc.rand(3) + 0.5
    kw = {"pos_weight": pw} if use_pos_weight else {}
    tkw = {"pos_weight": to_torch(pw)} if use_pos_weight else {}
    _compare(lambda a, b: F.binary_cross_entropy_with_logits(a, b, **kw),
             lambda a, b: TF.binary_cross_entropy_with_logits(a, b, **tkw), x, tx, t, to_torch(t))


def test_bce_with_logits_is_stable_for_huge_logits():
    x = tc.tensor([1e4, -1e4, 50.0], requires_grad=True)
    t = tc.tensor([0.0, 1.0, 1.0])
    loss = F.binary_cross_entropy_with_logits(x, t)
    loss.backward()
    tx = to_torch(x)
    tloss = TF.binary_cross_entropy_with_logits(tx, to_torch(t))
    tloss.backward()
    assert_close(loss, tloss)
    assert_close(x.grad, tx.grad)


def test_bce_errors_like_torch():
    with pytest.raises(ValueError, match="Please ensure they have the same size"):
        F.binary_cross_entropy(tc.rand(3), tc.rand(3, 1))
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(tc.tensor([1.5]), tc.tensor([1.0]))


def test_softmax_functions_and_bindings():
    x, tx = pair(3, 5)
    assert_close(tc.softmax(x, 1), torch.softmax(tx, 1))
    assert_close(x.log_softmax(-1), tx.log_softmax(-1))
    assert_close(F.softmax(x, 0, dtype=tc.float64), TF.softmax(tx, 0, dtype=torch.float64))
    with pytest.warns(UserWarning, match="Implicit dimension choice"):
        F.softmax(x)


def test_one_hot_and_pad():
    y = tc.tensor([0, 2, 1])
    assert F.one_hot(y).tolist() == TF.one_hot(to_torch(y)).tolist()
    assert F.one_hot(y, 5).dtype == tc.int64
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes."):
        F.one_hot(y, 2)
    x, tx = pair(2, 3, 4)
    _compare(lambda a: F.pad(a, (1, 2, 0, 1), value=0.5), lambda a: TF.pad(a, (1, 2, 0, 1), value=0.5), x, tx)
    x, tx = pair(2, 3, 4)
    _compare(lambda a: F.pad(a, (-1, 1)), lambda a: TF.pad(a, (-1, 1)), x, tx)
