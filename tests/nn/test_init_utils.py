"""tc.nn.init distributions and gains, and tc.nn.utils (clipping, vector conversion) against PyTorch."""
import math

import numpy as np
import pytest
import torch

import tinygrad_course as tc
import tinygrad_course.nn as nn
from nn_helpers import assert_close, to_torch


@pytest.mark.parametrize("args", [("linear",), ("conv2d",), ("sigmoid",), ("tanh",), ("relu",), ("leaky_relu",),
                                  ("leaky_relu", 0.2), ("selu",)])
def test_calculate_gain_matches_torch(args):
    assert nn.init.calculate_gain(*args) == pytest.approx(torch.nn.init.calculate_gain(*args))


def test_calculate_gain_errors():
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        nn.init.calculate_gain("foo")


def _std(t):
    return float(np.std(t.detach().cpu().numpy()))


def test_initialisers_have_the_right_spread():
    w = tc.empty(400, 300)
    nn.init.xavier_uniform_(w)
    bound = math.sqrt(6 / 700)
    assert w.abs().max().item() <= bound and _std(w) == pytest.approx(bound / math.sqrt(3), rel=0.05)
    nn.init.xavier_normal_(w, gain=2.0)
    assert _std(w) == pytest.approx(2 * math.sqrt(2 / 700), rel=0.05)
    nn.init.kaiming_uniform_(w, nonlinearity="relu")
    assert _std(w) == pytest.approx(math.sqrt(2 / 300), rel=0.05)
    nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert _std(w) == pytest.approx(math.sqrt(2 / 400), rel=0.05)
    nn.init.normal_(w, 1.0, 0.5)
    assert float(w.mean()) == pytest.approx(1.0, abs=0.01) and _std(w) == pytest.approx(0.5, rel=0.05)
    nn.init.uniform_(w, -2, -1)
    assert w.max().item() <= -1 and w.min().item() >= -2
    assert nn.init.constant_(w, 3.0) is w and w.min().item() == 3.0
    nn.init.zeros_(w)
    assert w.abs().sum().item() == 0
    nn.init.ones_(w)
    assert w.sum().item() == 400 * 300
    nn.init.trunc_normal_(w, std=1.0, a=-1.0, b=1.0)
    assert w.abs().max().item() <= 1.0


def test_init_on_parameters_keeps_leaf_and_grad_flag():
    lin = nn.Linear(4, 3)
    nn.init.kaiming_normal_(lin.weight)
    assert lin.weight.is_leaf and lin.weight.requires_grad and lin.weight.grad_fn is None
    with pytest.raises(ValueError, match="Mode fan_x not supported"):
        nn.init.kaiming_uniform_(lin.weight, mode="fan_x")
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        nn.init.xavier_uniform_(lin.bias)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    ours = [nn.Parameter(tc.randn(3, 4)), nn.Parameter(tc.randn(5))]
    theirs = [torch.nn.Parameter(to_torch(p.detach())) for p in ours]
    for p, tp in zip(ours, theirs):
        p.grad = tc.randn(*p.shape)
        tp.grad = to_torch(p.grad)
    total = nn.utils.clip_grad_norm_(ours, max_norm, norm_type)
    ttotal = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type)
    assert_close(total, ttotal)
    for p, tp in zip(ours, theirs):
        assert_close(p.grad, tp.grad)


def test_clip_grad_value_and_vector_conversion():
    p = nn.Parameter(tc.zeros(4))
    p.grad = tc.tensor([-3.0, -0.5, 0.5, 3.0])
    nn.utils.clip_grad_value_([p], 1.0)
    assert p.grad.tolist() == [-1.0, -0.5, 0.5, 1.0]
    model = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
    vec = nn.utils.parameters_to_vector(model.parameters())
    assert vec.shape == (13,)
    tmodel = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Linear(3, 1))
    tmodel.load_state_dict({k: to_torch(v) for k, v in model.state_dict().items()})
    assert_close(vec, torch.nn.utils.parameters_to_vector(tmodel.parameters()))
    nn.utils.vector_to_parameters(tc.arange(13, dtype=tc.float32), model.parameters())
    assert model[0].weight.tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    assert model[1].bias.tolist() == [12.0]
    assert isinstance(model[0].weight, nn.Parameter) and model[0].weight.requires_grad
