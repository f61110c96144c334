"""Each layer against its PyTorch twin: built after the same seed (so with the same weights, nothing copied)
and given the same inputs, they give equal outputs, input gradients, parameter gradients and dtypes."""
import pytest
import torch

import tinygrad_course as tc
import tinygrad_course.nn as nn
from nn_helpers import assert_close, assert_layer_matches_torch, pair, seeded, to_torch

LAYERS = [
    ("Linear(5, 3)", (4, 5)),
    ("Linear(5, 3, bias=False)", (4, 5)),
    ("Linear(5, 3)", (2, 4, 5)),
    ("Identity()", (3, 4)),
    ("Flatten()", (2, 3, 4, 5)),
    ("Flatten(0, 2)", (2, 3, 4, 5)),
    ("Unflatten(1, (2, 3))", (4, 6)),
    ("ReLU()", (4, 5)),
    ("LeakyReLU(0.2)", (4, 5)),
    ("Sigmoid()", (4, 5)),
    ("Tanh()", (4, 5)),
    ("GELU()", (4, 5)),
    ("GELU(approximate='tanh')", (4, 5)),
    ("SiLU()", (4, 5)),
    ("Softmax(dim=1)", (4, 5)),
    ("LogSoftmax(dim=-1)", (2, 4, 5)),
    ("LayerNorm(5)", (4, 5)),
    ("LayerNorm((4, 5))", (3, 4, 5)),
    ("LayerNorm(5, elementwise_affine=False)", (4, 5)),
    ("BatchNorm1d(5)", (8, 5)),
    ("BatchNorm1d(3)", (4, 3, 6)),
    ("BatchNorm2d(3)", (4, 3, 5, 5)),
    ("BatchNorm2d(3, affine=False)", (4, 3, 5, 5)),
    ("Conv2d(3, 4, 3)", (2, 3, 8, 8)),
    ("Conv2d(3, 4, (3, 2), stride=2, padding=1)", (2, 3, 9, 8)),
    ("Conv2d(4, 6, 3, padding=2, dilation=2, groups=2)", (2, 4, 7, 7)),
    ("Conv2d(3, 4, 3, padding='same', bias=False)", (2, 3, 6, 6)),
    ("Conv2d(3, 2, 4, padding='same')", (2, 3, 6, 6)),
    ("Conv2d(3, 4, 3)", (3, 8, 8)),
    ("MaxPool2d(2)", (2, 3, 8, 8)),
    ("MaxPool2d(3, stride=2, padding=1)", (2, 3, 9, 9)),
    ("MaxPool2d(2, stride=1, dilation=2)", (2, 2, 6, 6)),
    ("AvgPool2d(2)", (2, 3, 8, 8)),
    ("AvgPool2d(3, stride=2, padding=1)", (2, 3, 9, 9)),
    ("AvgPool2d(3, stride=2, padding=1, count_include_pad=False)", (2, 3, 9, 9)),
    ("AdaptiveAvgPool2d(1)", (2, 3, 6, 6)),
    ("AdaptiveAvgPool2d((3, 2))", (2, 3, 6, 6)),
    ("AdaptiveAvgPool2d((4, 3))", (2, 3, 7, 5)),
]


@pytest.mark.parametrize("spec,shape", LAYERS)
def test_layer_matches_torch(spec, shape):
    ours, theirs = seeded(spec)
    assert_layer_matches_torch(ours, theirs, shape)


def test_batchnorm_running_stats_and_eval_mode():
    ours, theirs = nn.BatchNorm2d(3, momentum=0.3), torch.nn.BatchNorm2d(3, momentum=0.3)
    for _ in range(3):
        x, tx = pair(4, 3, 5, 5, scale=2.0)
        ours(x + 1)
        theirs(tx + 1)
    assert ours.num_batches_tracked.item() == 3
    assert_close(ours.running_mean, theirs.running_mean)
    assert_close(ours.running_var, theirs.running_var)
    ours.eval()
    theirs.eval()
    x, tx = pair(2, 3, 4, 4)
    y, ty = ours(x), theirs(tx)
    assert_close(y, ty)
    y.sum().backward()
    ty.sum().backward()
    assert_close(x.grad, tx.grad)
    assert_close(ours.weight.grad, theirs.weight.grad)


def test_batchnorm_cumulative_average_without_momentum():
    ours, theirs = nn.BatchNorm1d(2, momentum=None), torch.nn.BatchNorm1d(2, momentum=None)
    for _ in range(3):
        x, tx = pair(6, 2)
        ours(x)
        theirs(tx)
    assert_close(ours.running_mean, theirs.running_mean)
    assert_close(ours.running_var, theirs.running_var)


def test_batchnorm_rejects_wrong_rank():
    with pytest.raises(ValueError, match="expected 4D input"):
        nn.BatchNorm2d(3)(tc.randn(2, 3))


def test_embedding_matches_torch_with_padding_idx():
    ours, theirs = seeded("Embedding(10, 4, padding_idx=1)")
    assert ours.weight[1].abs().sum().item() == 0
    idx = tc.tensor([[1, 2, 2], [9, 1, 0]])
    y, ty = ours(idx), theirs(to_torch(idx))
    assert_close(y, ty)
    g, tg = pair(2, 3, 4, requires_grad=False)
    y.backward(g)
    ty.backward(tg)
    assert_close(ours.weight.grad, theirs.weight.grad)
    assert y.grad_fn.name() == "EmbeddingBackward0"


def test_dropout_train_and_eval():
    d = nn.Dropout(0.25)
    x = tc.ones(200, 50, requires_grad=True)
    y = d(x)
    values = set(y.detach().cpu().numpy().ravel().tolist())
    assert len(values) == 2 and 0.0 in values and abs(max(values) - 1 / 0.75) < 1e-6
    frac = (y == 0).float().mean().item()
    assert 0.2 < frac < 0.3
    y.sum().backward()
    assert tc.equal(x.grad, y.detach())  # the gradient is the mask itself
    assert y.grad_fn.name() == "NativeDropoutBackward0"
    d.eval()
    assert d(x) is x
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        nn.Dropout(1.5)


def test_linear_default_init_bounds_and_graph_names():
    lin = nn.Linear(100, 7)
    assert lin.weight.shape == (7, 100)
    bound = 1 / 10
    assert lin.weight.abs().max().item() <= bound and lin.weight.abs().max().item() > 0.8 * bound
    assert lin.bias.abs().max().item() <= bound
    out = lin(tc.randn(3, 100))
    assert out.grad_fn.name() == "AddmmBackward0"
    assert nn.Linear(3, 2, bias=False)(tc.randn(4, 3)).grad_fn.name() == "MmBackward0"


def test_conv_and_pool_node_names():
    x = tc.randn(1, 1, 6, 6, requires_grad=True)
    y = nn.Conv2d(1, 2, 3)(x)
    assert y.grad_fn.name() == "ConvolutionBackward0"
    assert nn.MaxPool2d(2)(y).grad_fn.name() == "MaxPool2DWithIndicesBackward0"
    assert nn.AvgPool2d(2)(y).grad_fn.name() == "AvgPool2DBackward0"
    assert nn.LayerNorm(6)(x).grad_fn.name() == "NativeLayerNormBackward0"
    assert nn.BatchNorm2d(1)(x).grad_fn.name() == "NativeBatchNormBackward0"
    assert y.is_contiguous()


def test_max_pool_return_indices_match_torch():
    x, tx = pair(2, 3, 6, 6)
    out, idx = nn.functional.max_pool2d(x, 3, 2, 1, return_indices=True)
    tout, tidx = torch.nn.functional.max_pool2d(tx, 3, 2, 1, return_indices=True)
    assert_close(out, tout)
    assert idx.dtype == tc.int64 and idx.tolist() == tidx.tolist()


def test_conv_errors_speak_pytorch():
    conv = nn.Conv2d(3, 16, 3)
    with pytest.raises(RuntimeError) as ours:
        conv(tc.randn(2, 1, 28, 28))
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.Conv2d(3, 16, 3)(torch.randn(2, 1, 28, 28))
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(RuntimeError, match="Expected 3D \\(unbatched\\) or 4D \\(batched\\) input to conv2d"):
        conv(tc.randn(3, 4))


def test_layers_keep_float64():
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(2 * 3 * 3, 4),
                          nn.LayerNorm(4), nn.GELU()).double()
    out = model(tc.randn(2, 1, 8, 8, dtype=tc.float64))
    assert out.dtype == tc.float64
    out.sum().backward()
    assert all(p.grad.dtype == tc.float64 for p in model.parameters())


def test_unfold_takes_unbatched_input_and_refuses_other_ranks_like_torch():
    x = tc.randn(2, 4, 5)
    assert_close(nn.functional.unfold(x, 2, stride=(1, 2)), torch.nn.functional.unfold(to_torch(x), 2, stride=(1, 2)))
    for shape, error in [((4, 4), IndexError), ((1, 2, 3, 4, 4), RuntimeError)]:
        with pytest.raises(error) as theirs:
            torch.nn.functional.unfold(torch.ones(shape), 2)
        with pytest.raises(error) as ours:
            nn.functional.unfold(tc.ones(shape), 2)
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("size", [(None, 2), (3, None), (None, None), 2])
def test_adaptive_avg_pool2d_keeps_dims_given_as_none(size):
    x, tx = pair(1, 2, 6, 5)
    out, tout = nn.AdaptiveAvgPool2d(size)(x), torch.nn.AdaptiveAvgPool2d(size)(tx)
    assert_close(out, tout)
    out.sum().backward()
    tout.sum().backward()
    assert_close(x.grad, tx.grad)
