"""The further losses of tc.nn / tc.nn.functional against PyTorch: values and gradients for every reduction,
legacy size_average/reduce, module reprs and attributes, warnings, errors, and a gradcheck table."""
import warnings

import numpy as np
import pytest
import torch

import tinygrad_course as tc
import tinygrad_course.nn as nn
import tinygrad_course.nn.functional as F
from nn_helpers import assert_close, to_torch
from gradcheck_table import gradcheck_tests

TF = torch.nn.functional
RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3))
Y = RNG.standard_normal((4, 3))
POS = RNG.uniform(0.1, 2.0, (4, 3))
SIGN_ROWS = np.array([1.0, -1.0, -1.0, 1.0])
SIGNS = np.sign(RNG.standard_normal((4, 3)))
CLASSES = np.array([0, 2, 1, 1])
LABEL_LISTS = np.array([[0, 1, -1], [2, -1, 0], [1, 2, 0], [-1, 0, 0]])


def _pair(a, grad=True):
    """A tc tensor from NumPy array `a` and its torch copy (float arrays require grad unless grad=False)."""
    t = tc.tensor(a)
    if grad and t.dtype.is_floating_point:
        t.requires_grad_()
    return t, to_torch(t)


def _compare(fn, *arrays, no_grad=()):
    """fn(functional module, *inputs) on both frameworks: values, and the gradients of float inputs."""
    pairs = [_pair(a, i not in no_grad) for i, a in enumerate(arrays)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, tout = fn(F, *[p[0] for p in pairs]), fn(TF, *[p[1] for p in pairs])
    assert_close(out, tout, atol=1e-10, rtol=1e-8)
    upstream = tc.randn(tuple(out.shape), dtype=out.dtype)
    out.backward(upstream)
    tout.backward(to_torch(upstream))
    for ours, theirs in pairs:
        if theirs.grad is not None:
            assert_close(ours.grad, theirs.grad, atol=1e-10, rtol=1e-8)
        elif ours.grad is not None:  # a target the loss does not depend on differentiably
            assert not ours.grad.abs().sum().item()
    return out


def _lib(M):
    return tc if M is F else torch


LOSSES = {
    "smooth_l1": (lambda M, a, b, **kw: M.smooth_l1_loss(a, b, beta=0.7, **kw), (X, Y), ()),
    "smooth_l1_beta0": (lambda M, a, b, **kw: M.smooth_l1_loss(a, b, beta=0.0, **kw), (X, Y), ()),
    "huber": (lambda M, a, b, **kw: M.huber_loss(a, b, delta=0.6, **kw), (X, Y), ()),
    "huber_weight": (lambda M, a, b, w, **kw: M.huber_loss(a, b, delta=0.6, weight=w, **kw), (X, Y, POS), ()),
    "kl_div": (lambda M, a, b, **kw: M.kl_div(a, b, **kw), (X, POS), ()),
    "kl_div_log_target": (lambda M, a, b, **kw: M.kl_div(a, b, log_target=True, **kw), (X, Y), ()),
    "poisson_nll": (lambda M, a, b, **kw: M.poisson_nll_loss(a, b, **kw), (X, POS * 2), ()),
    "poisson_nll_full": (lambda M, a, b, **kw: M.poisson_nll_loss(a, b, log_input=False, full=True, **kw),
                         (POS, POS * 2), ()),
    "gaussian_nll": (lambda M, a, b, v, **kw: M.gaussian_nll_loss(a, b, v, full=True, **kw), (X, Y, POS), ()),
    "gaussian_nll_one_var_per_row": (lambda M, a, b, v, **kw: M.gaussian_nll_loss(a, b, v, **kw),
                                     (X, Y, POS[:, 0]), ()),
    "gaussian_nll_broadcast_var": (lambda M, a, b, v, **kw: M.gaussian_nll_loss(a, b, v, **kw),
                                   (X, Y, POS[:, :1]), ()),
    "gaussian_nll_clamped_var": (lambda M, a, b, v, **kw: M.gaussian_nll_loss(a, b, v, eps=0.5, **kw), (X, Y, POS), ()),
    "margin_ranking": (lambda M, a, b, t, **kw: M.margin_ranking_loss(a, b, t, margin=0.2, **kw),
                       (X[:, 0], Y[:, 0], SIGN_ROWS), ()),
    "hinge_embedding": (lambda M, a, t, **kw: M.hinge_embedding_loss(a, t, margin=0.5, **kw), (X, SIGNS), ()),
    "soft_margin": (lambda M, a, t, **kw: M.soft_margin_loss(a, t, **kw), (X, SIGNS), (1,)),
    "multilabel_soft_margin": (lambda M, a, t, w, **kw: M.multilabel_soft_margin_loss(a, t, weight=w, **kw),
                               (X, (SIGNS > 0) * 1.0, POS[0]), ()),
    "multi_margin": (lambda M, a, w, **kw: M.multi_margin_loss(a, _lib(M).tensor(CLASSES), margin=0.8, weight=w, **kw),
                     (X, POS[0]), (1,)),
    "multi_margin_p2": (lambda M, a, **kw: M.multi_margin_loss(a, _lib(M).tensor(CLASSES), p=2, **kw), (X,), ()),
    "multi_margin_1d": (lambda M, a, **kw: M.multi_margin_loss(a, _lib(M).tensor(1), **kw), (X[0],), ()),
    "multilabel_margin": (lambda M, a, **kw: M.multilabel_margin_loss(a, _lib(M).tensor(LABEL_LISTS), **kw), (X,), ()),
    "multilabel_margin_1d": (lambda M, a, **kw: M.multilabel_margin_loss(a, _lib(M).tensor([2, -1, 1]), **kw),
                             (X[0],), ()),
    "cosine_embedding": (lambda M, a, b, t, **kw: M.cosine_embedding_loss(a, b, t, margin=0.1, **kw),
                         (X, Y, SIGN_ROWS), ()),
    "cosine_embedding_1d": (lambda M, a, b, **kw: M.cosine_embedding_loss(a, b, _lib(M).tensor(-1), **kw),
                            (X[0], Y[0]), ()),
    "triplet_margin": (lambda M, a, p, n, **kw: M.triplet_margin_loss(a, p, n, margin=2.0, **kw), (X, Y, POS), ()),
    "triplet_margin_p1_swap": (lambda M, a, p, n, **kw: M.triplet_margin_loss(a, p, n, p=1, swap=True, margin=2.0,
                                                                              **kw), (X, Y, POS), ()),
}


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_matches_torch(name, reduction):
    fn, arrays, no_grad = LOSSES[name]
    _compare(lambda M, *a: fn(M, *a, reduction=reduction), *arrays, no_grad=no_grad)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_triplet_margin_with_distance_loss(reduction):
    def cosine_distance(M):
        return lambda u, v: 1 - M.cosine_similarity(u, v)

    _compare(lambda M, a, p, n: M.triplet_margin_with_distance_loss(a, p, n, reduction=reduction), X, Y, POS)
    _compare(lambda M, a, p, n: M.triplet_margin_with_distance_loss(
        a, p, n, distance_function=cosine_distance(M), margin=0.5, swap=True, reduction=reduction), X, Y, POS)


@pytest.mark.parametrize("legacy", [{"size_average": False}, {"reduce": False}, {"size_average": True, "reduce": True}])
@pytest.mark.parametrize("name", ["smooth_l1", "kl_div", "poisson_nll", "margin_ranking", "hinge_embedding",
                                  "soft_margin", "multilabel_soft_margin", "multi_margin", "multilabel_margin",
                                  "cosine_embedding", "triplet_margin"])
def test_legacy_size_average_and_reduce(name, legacy):
    fn, arrays, no_grad = LOSSES[name]
    _compare(lambda M, *a: fn(M, *a, **legacy), *arrays, no_grad=no_grad)


def test_kl_div_batchmean_and_its_warning_for_mean():
    _compare(lambda M, a, b: M.kl_div(a, b, reduction="batchmean"), X, POS)
    _compare(lambda M, a, b: M.kl_div(a, b, reduction="batchmean"), X[0, 0], POS[0, 0])
    x, t = tc.randn(2, 3).log_softmax(1), tc.rand(2, 3)
    with pytest.warns(UserWarning, match="reduction: 'mean' divides the total loss by both the batch size"):
        F.kl_div(x, t)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.kl_div(x, t, reduction="batchmean")
        F.kl_div(x, t, size_average=True)
    zero_target = POS * (SIGNS > 0)  # xlogy: a zero target contributes 0, not nan
    _compare(lambda M, a, b: M.kl_div(a, b, reduction="sum"), X, zero_target, no_grad=(1,))


def test_size_mismatch_warns_like_torch():
    x, t = tc.randn(4, 3), tc.randn(1, 3)
    for fn in (F.smooth_l1_loss, F.huber_loss):
        with pytest.warns(UserWarning, match=r"Using a target size \(tc.Size\(\[1, 3\]\)\) that is different"):
            fn(x, t)


def test_soft_margin_loss_does_not_overflow():
    x = tc.tensor([1e4, -1e4, 0.0], requires_grad=True)
    y = tc.tensor([-1.0, -1.0, 1.0])
    loss = F.soft_margin_loss(x, y, reduction="none")
    loss.sum().backward()
    assert np.allclose(loss.detach().cpu().numpy(), [1e4, 0.0, np.log(2)])
    assert np.allclose(x.grad.cpu().numpy(), [1.0, 0.0, -0.5])


def test_multi_margin_and_multilabel_margin_shapes():
    for reduction in ("none", "mean"):
        _compare(lambda M, a: M.multi_margin_loss(a, _lib(M).tensor([1]), reduction=reduction), X[0])
        _compare(lambda M, a: M.multi_margin_loss(a, _lib(M).tensor(0), reduction=reduction), X[0, 0])
        _compare(lambda M, a: M.multilabel_margin_loss(a, _lib(M).tensor(0), reduction=reduction), X[0, 0])


# ---- modules --------------------------------------------------------------------------------------------

MODULES = [
    "SmoothL1Loss(beta=0.5)", "HuberLoss(delta=2.0)", "KLDivLoss(reduction='batchmean', log_target=True)",
    "PoissonNLLLoss(log_input=False, full=True)", "GaussianNLLLoss(full=True)", "MarginRankingLoss(0.1)",
    "HingeEmbeddingLoss(2.0)", "SoftMarginLoss()", "MultiLabelSoftMarginLoss()", "MultiMarginLoss(2, 0.5)",
    "MultiLabelMarginLoss()", "CosineEmbeddingLoss(0.2)", "TripletMarginLoss(1.5, 1.0, swap=True)",
    "TripletMarginWithDistanceLoss()", "TripletMarginWithDistanceLoss(distance_function=nn.CosineSimilarity())",
    "SmoothL1Loss(size_average=False)", "MarginRankingLoss(reduce=False)",
]


@pytest.mark.filterwarnings("ignore:size_average and reduce args will be deprecated")
@pytest.mark.parametrize("spec", MODULES)
def test_module_repr_and_attributes_match_torch(spec):
    ours, theirs = eval("nn." + spec), eval("torch.nn." + spec.replace("nn.", "torch.nn."))
    assert repr(ours) == repr(theirs)
    public = lambda m: {k: v for k, v in vars(m).items() if not k.startswith("_") and not callable(v)}  # noqa: E731
    assert public(ours) == public(theirs)


def test_modules_compute_their_functional():
    cases = [
        ("SmoothL1Loss(beta=0.5)", (X, Y)),
        ("HuberLoss(reduction='sum', delta=0.5)", (X, Y)),
        ("KLDivLoss(reduction='batchmean')", (X, POS)),
        ("PoissonNLLLoss(full=True)", (X, POS * 3)),
        ("GaussianNLLLoss(eps=1e-3)", (X, Y, POS)),
        ("MarginRankingLoss(0.3)", (X[:, 0], Y[:, 0], SIGN_ROWS)),
        ("HingeEmbeddingLoss()", (X, SIGNS)),
        ("CosineEmbeddingLoss(0.2, reduction='none')", (X, Y, SIGN_ROWS)),
        ("TripletMarginLoss(swap=True)", (X, Y, POS)),
        ("TripletMarginWithDistanceLoss(margin=2.0)", (X, Y, POS)),
    ]
    for spec, arrays in cases:
        _compare(lambda M, *a: eval(("nn." if M is F else "torch.nn.") + spec)(*a), *arrays)
    w = POS[0]
    _compare(lambda M, a, t: (nn.MultiLabelSoftMarginLoss(weight=tc.tensor(w)) if M is F else
                              torch.nn.MultiLabelSoftMarginLoss(weight=torch.tensor(w)))(a, t), X, (SIGNS > 0) * 1.0,
             no_grad=(1,))
    _compare(lambda M, a: (nn.MultiMarginLoss(weight=tc.tensor(w)) if M is F else
                           torch.nn.MultiMarginLoss(weight=torch.tensor(w)))(a, _lib(M).tensor(CLASSES)), X)
    _compare(lambda M, a: (nn.MultiLabelMarginLoss() if M is F else torch.nn.MultiLabelMarginLoss())(
        a, _lib(M).tensor(LABEL_LISTS)), X)
    _compare(lambda M, a, t: (nn.SoftMarginLoss() if M is F else torch.nn.SoftMarginLoss())(a, t), X, SIGNS,
             no_grad=(1,))


# ---- errors -----------------------------------------------------------------------------------------------

def _t(*shape):
    return tc.randn(tuple(shape))


ERRORS = [
    (lambda: F.smooth_l1_loss(_t(4, 3), _t(4, 3), beta=-1.0), RuntimeError,
     "smooth_l1_loss does not support negative values for beta."),
    (lambda: F.smooth_l1_loss(_t(4, 3), _t(4, 3), reduction="foo"), ValueError,
     "foo is not a valid value for reduction"),
    (lambda: F.huber_loss(_t(4, 3), _t(4, 3), delta=0.0), RuntimeError,
     "huber_loss does not support non-positive values for delta."),
    (lambda: F.huber_loss(_t(4, 3), _t(4, 3), weight=_t(3)), ValueError, "Weights and input must have the same size."),
    (lambda: F.kl_div(_t(4, 3), _t(4, 3), reduction="foo"), ValueError, "foo is not a valid value for reduction"),
    (lambda: F.poisson_nll_loss(_t(4, 3), _t(4, 3), reduction="foo"), ValueError,
     "foo is not a valid value for reduction"),
    (lambda: F.gaussian_nll_loss(_t(4, 3), _t(4, 3), -1.0), ValueError, "var has negative entry/entries"),
    (lambda: F.gaussian_nll_loss(_t(4, 3), _t(4, 3), -tc.ones(4, 3)), ValueError, "var has negative entry/entries"),
    (lambda: F.gaussian_nll_loss(_t(4, 3), _t(4, 3), tc.ones(2)), ValueError, "var is of incorrect size"),
    (lambda: F.gaussian_nll_loss(_t(4, 3), _t(4, 3), tc.ones(4, 3), reduction="foo"), ValueError, "foo is not valid"),
    (lambda: F.margin_ranking_loss(_t(4, 3), _t(4, 3), tc.ones(4)), RuntimeError,
     r"margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: tc.Size\(\[4, 3\]\)"),
    (lambda: F.multilabel_soft_margin_loss(_t(4, 3), tc.ones(4, 3), reduction="x"), ValueError, "x is not valid"),
    (lambda: F.multi_margin_loss(_t(4, 3), tc.tensor(CLASSES), p=3), ValueError, "only p == 1 and p == 2 supported"),
    (lambda: F.multi_margin_loss(_t(4, 3), tc.tensor(CLASSES), weight=tc.ones(1, 3)), ValueError,
     "weight must be one-dimensional"),
    (lambda: F.multi_margin_loss(_t(4, 3), tc.tensor([0, 3, 1, 1])), RuntimeError, "target out of range"),
    (lambda: F.multi_margin_loss(_t(4, 3), tc.tensor([0, -1, 1, 1])), RuntimeError, "target out of range"),
    (lambda: F.multi_margin_loss(_t(4, 3), tc.tensor([0, 1])), RuntimeError,
     r"multi_margin_loss: target tensor should be 1-D with size equal to the number of input samples \(batch size\)\. "
     r"Expected target size \[4\], but got \[2\]\. Input has shape \[4, 3\]\."),
    (lambda: F.multi_margin_loss(_t(2, 3, 4), tc.tensor([0, 1])), RuntimeError,
     r"Expected non-empty vector or matrix with optional 0-dim batch size, but got: \[2, 3, 4\]"),
    (lambda: F.multi_margin_loss(_t(4, 3), tc.tensor(CLASSES), weight=tc.ones(2)), RuntimeError,
     r"inconsistent weight size, expected 3 but got \[2\]"),
    (lambda: F.multi_margin_loss(_t(4, 3), tc.tensor(CLASSES).float()), RuntimeError,
     "expected scalar type Long but found Float"),
    (lambda: F.multilabel_margin_loss(_t(4, 3), tc.tensor(LABEL_LISTS[:2])), RuntimeError,
     r"inconsistent target size: \[2, 3\] for input of size: \[4, 3\]"),
    (lambda: F.multilabel_margin_loss(_t(4, 3), tc.tensor(LABEL_LISTS) + 1), RuntimeError,
     "argument #2 'target' is out of range"),
    (lambda: F.multilabel_margin_loss(_t(4, 3), tc.tensor(LABEL_LISTS).float()), RuntimeError,
     "expected scalar type Long but found Float"),
    (lambda: F.cosine_embedding_loss(_t(3), _t(3), tc.ones(1)), RuntimeError,
     r"1D target tensor expects 2D input tensors, but found inputs with sizes \[3\] and \[3\]\."),
    (lambda: F.cosine_embedding_loss(_t(3), _t(2, 3), tc.tensor(1.0)), RuntimeError,
     r"0D target tensor expects 1D input tensors, but found inputs with sizes \[3\] and \[2, 3\]\."),
    (lambda: F.cosine_embedding_loss(_t(4, 3), _t(4, 3), tc.ones(4, 1)), RuntimeError,
     "0D or 1D target tensor expected, multi-target not supported"),
    (lambda: F.triplet_margin_loss(_t(4, 3), _t(4, 3), _t(3)), RuntimeError,
     "but got: anchor 2D, positive 2D, and negative 1D inputs"),
    (lambda: F.triplet_margin_with_distance_loss(_t(4, 3), _t(4, 3), _t(4, 3), margin=0), ValueError,
     "margin must be greater than 0, got 0"),
    (lambda: F.triplet_margin_with_distance_loss(_t(4, 3), _t(4, 3), _t(3)), RuntimeError,
     "but got: anchor 2D, positive 2D, and negative 1D inputs"),
    (lambda: nn.MultiMarginLoss(weight=tc.ones(1, 3)), ValueError,
     "MultiMarginLoss: expected weight to be None or 1D tensor, got 2D instead"),
    (lambda: nn.TripletMarginLoss(margin=0.0), ValueError,
     "TripletMarginLoss: expected margin to be greater than 0, got 0.0 instead"),
    (lambda: nn.TripletMarginWithDistanceLoss(margin=-1), ValueError,
     "TripletMarginWithDistanceLoss: expected margin to be greater than 0, got -1 instead"),
]


@pytest.mark.parametrize("call, error, message", ERRORS)
def test_errors_match_torch(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ---- gradcheck table ---------------------------------------------------------------------------------------

def _x(*shape, seed=0, lo=-2.0, hi=2.0):
    return tc.tensor(np.random.default_rng(seed).uniform(lo, hi, shape), requires_grad=True)


T_SIGNS = tc.tensor(SIGNS)
T_SIGN_ROWS = tc.tensor(SIGN_ROWS)
T_POS = tc.tensor(POS)
T_CLASSES = tc.tensor(CLASSES)
T_LABEL_LISTS = tc.tensor(LABEL_LISTS)
T_WEIGHT = tc.tensor(POS[0])

CASES = {
    "smooth_l1": (lambda a, b: F.smooth_l1_loss(a, b, beta=0.5), lambda: (_x(4, 3), _x(4, 3, seed=1))),
    "huber": (lambda a, b: F.huber_loss(a, b, delta=0.5, reduction="sum"), lambda: (_x(4, 3), _x(4, 3, seed=1))),
    "kl_div": (lambda a, b: F.kl_div(a, b, reduction="batchmean"), lambda: (_x(4, 3), _x(4, 3, seed=1, lo=0.1))),
    "kl_div_log_target": (lambda a, b: F.kl_div(a, b, reduction="sum", log_target=True),
                          lambda: (_x(4, 3), _x(4, 3, seed=1))),
    "poisson_nll": (lambda a: F.poisson_nll_loss(a, T_POS * 2, full=True), lambda: (_x(4, 3),)),
    "poisson_nll_rate": (lambda a: F.poisson_nll_loss(a, T_POS, log_input=False), lambda: (_x(4, 3, lo=0.2),)),
    "gaussian_nll": (lambda a, b, v: F.gaussian_nll_loss(a, b, v, full=True),
                     lambda: (_x(4, 3), _x(4, 3, seed=1), _x(4, 1, seed=2, lo=0.2))),
    "margin_ranking": (lambda a, b: F.margin_ranking_loss(a, b, T_SIGN_ROWS, margin=0.1),
                       lambda: (_x(4), _x(4, seed=1))),
    "hinge_embedding": (lambda a: F.hinge_embedding_loss(a, T_SIGNS, margin=3.0), lambda: (_x(4, 3),)),
    "soft_margin": (lambda a: F.soft_margin_loss(a, T_SIGNS), lambda: (_x(4, 3),)),
    "multilabel_soft_margin": (lambda a: F.multilabel_soft_margin_loss(a, (T_SIGNS > 0).double(), weight=T_WEIGHT),
                               lambda: (_x(4, 3),)),
    "multi_margin": (lambda a: F.multi_margin_loss(a, T_CLASSES, margin=5.0, weight=T_WEIGHT), lambda: (_x(4, 3),)),
    "multi_margin_p2": (lambda a: F.multi_margin_loss(a, T_CLASSES, p=2, margin=5.0), lambda: (_x(4, 3),)),
    "multilabel_margin": (lambda a: F.multilabel_margin_loss(a * 0.1, T_LABEL_LISTS), lambda: (_x(4, 3),)),
    "cosine_embedding": (lambda a, b: F.cosine_embedding_loss(a, b, T_SIGN_ROWS, margin=-1.5),
                         lambda: (_x(4, 3), _x(4, 3, seed=1))),
    "triplet_margin": (lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=10.0, swap=True),
                       lambda: (_x(4, 3), _x(4, 3, seed=1), _x(4, 3, seed=2))),
    "triplet_margin_with_distance": (lambda a, p, n: F.triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda u, v: (u - v).pow(2).sum(-1), margin=50.0),
        lambda: (_x(4, 3), _x(4, 3, seed=1), _x(4, 3, seed=2))),
}

SECOND_ORDER = ["smooth_l1", "kl_div", "kl_div_log_target", "poisson_nll", "gaussian_nll", "soft_margin",
                "multilabel_soft_margin", "multi_margin_p2", "cosine_embedding", "triplet_margin"]


test_gradcheck, test_gradgradcheck = gradcheck_tests(CASES, SECOND_ORDER, eps=1e-6, atol=1e-5, second_atol=1e-4,
                                                     rtol=1e-3)
