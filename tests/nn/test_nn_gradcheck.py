"""gradcheck (float64, finite differences) for every op added by tc.nn, and gradgradcheck where the
backward is itself differentiable."""
import pytest

import tinygrad_course as tc
import tinygrad_course.nn.functional as F
from tinygrad_course.autograd import gradcheck, gradgradcheck


def rnd(*shape, scale=1.0):
    return (tc.randn(*shape, dtype=tc.float64) * scale).requires_grad_()


TARGET = tc.tensor([0, 2, 1])
PROBS = tc.tensor([[0.2, 0.5, 0.3], [0.1, 0.1, 0.8], [1.0, 0.0, 0.0]], dtype=tc.float64)
W3 = tc.tensor([0.5, 2.0, 1.0], dtype=tc.float64)

CASES = {
    "log_softmax": (lambda x: F.log_softmax(x, 1), [(3, 4)]),
    "softmax": (lambda x: F.softmax(x, 0), [(3, 4)]),
    "cross_entropy": (lambda x: F.cross_entropy(x, TARGET), [(3, 3)]),
    "cross_entropy_options": (lambda x: F.cross_entropy(x, TARGET, weight=W3, label_smoothing=0.2,
                                                        ignore_index=1), [(3, 3)]),
    "cross_entropy_none": (lambda x: F.cross_entropy(x, TARGET, reduction="none"), [(3, 3)]),
    "cross_entropy_probs": (lambda x: F.cross_entropy(x, PROBS), [(3, 3)]),
    "nll_loss": (lambda x: F.nll_loss(x, TARGET, weight=W3), [(3, 3)]),
    "gelu": (lambda x: F.gelu(x), [(3, 4)]),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), [(3, 4)]),
    "silu": (lambda x: F.silu(x), [(3, 4)]),
    "leaky_relu": (lambda x: F.leaky_relu(x + 0.05 * tc.sign(x).detach(), 0.1), [(3, 4)]),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (4,), w, b), [(3, 4), (4,), (4,)]),
    "batch_norm_train": (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), [(4, 3, 2, 2), (3,), (3,)]),
    "batch_norm_eval": (lambda x, w, b: F.batch_norm(x, tc.zeros(3, dtype=tc.float64) + 0.1,
                                                     tc.ones(3, dtype=tc.float64) * 2, w, b), [(2, 3), (3,), (3,)]),
    "conv2d": (lambda x, w, b: F.conv2d(x, w, b), [(2, 2, 5, 5), (3, 2, 3, 3), (3,)]),
    "conv2d_stride_pad_dil": (lambda x, w: F.conv2d(x, w, None, stride=2, padding=1, dilation=2),
                              [(1, 2, 6, 6), (2, 2, 2, 3)]),
    "conv2d_groups": (lambda x, w, b: F.conv2d(x, w, b, padding=1, groups=2), [(1, 4, 4, 4), (4, 2, 3, 3), (4,)]),
    "max_pool2d": (lambda x: F.max_pool2d(x, 2), [(1, 2, 4, 4)]),
    "max_pool2d_overlap": (lambda x: F.max_pool2d(x, 3, stride=1, padding=1), [(1, 2, 4, 4)]),
    "avg_pool2d": (lambda x: F.avg_pool2d(x, 3, stride=2, padding=1), [(1, 2, 5, 5)]),
    "avg_pool2d_no_pad_count": (lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False),
                                [(1, 2, 5, 5)]),
    "adaptive_avg_pool2d": (lambda x: F.adaptive_avg_pool2d(x, (2, 3)), [(1, 2, 5, 7)]),
    # the padding row gets no gradient by definition, so the check uses indices without it
    "embedding": (lambda w: F.embedding(tc.tensor([[0, 2], [2, 3]]), w, padding_idx=1), [(4, 3)]),
    "pad": (lambda x: F.pad(x, (1, 0, -1, 2)), [(2, 3, 4)]),
    "unfold": (lambda x: F.unfold(x, 2, stride=1, padding=1), [(1, 2, 3, 3)]),
    "bce_with_logits": (lambda x: F.binary_cross_entropy_with_logits(x, PROBS, pos_weight=W3), [(3, 3)]),
    "bce": (lambda x: F.binary_cross_entropy(x.sigmoid(), PROBS), [(3, 3)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck(name):
    fn, shapes = CASES[name]
    tc.manual_seed(1)
    inputs = tuple(rnd(*s) for s in shapes)
    assert gradcheck(fn, inputs)


@pytest.mark.parametrize("name", ["log_softmax", "softmax", "cross_entropy", "cross_entropy_options", "gelu",
                                  "gelu_tanh", "silu", "layer_norm", "batch_norm_train", "conv2d",
                                  "conv2d_groups", "max_pool2d", "avg_pool2d", "embedding", "pad"])
def test_gradgradcheck(name):
    fn, shapes = CASES[name]
    tc.manual_seed(2)
    inputs = tuple(rnd(*s) for s in shapes)
    assert gradgradcheck(fn, inputs)


def test_dropout_gradient_is_the_mask():
    tc.manual_seed(3)
    x = rnd(50)
    y = F.dropout(x, 0.3)
    y.sum().backward()
    assert tc.equal(x.grad, (y.detach() != 0).double() / 0.7)
    mask = tc.tensor([0.0, 2.0, 2.0], dtype=tc.float64)
    from tinygrad_course.ops.fused import Dropout

    assert gradcheck(lambda a: Dropout.apply(a, mask._data), (rnd(3),))
