"""The names PyTorch records: fused losses as one node, Linear as addmm with TBackward0 for the weight, and
reprs that say `torch.` when the framework stands in for PyTorch."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import tinygrad_course as tc


def _chain(fn, depth=4):
    out = []

    def walk(f, d):
        if f is None or d > depth:
            return
        out.append("  " * d + f.name().replace("torch::autograd::", ""))
        for g, _ in f.next_functions:
            walk(g, d + 1)
    walk(fn, 0)
    return out


LOSSES = [
    ("mse_loss", "F.mse_loss(x, y)"), ("mse_none", "F.mse_loss(x, y, reduction='none')"),
    ("smooth_l1", "F.smooth_l1_loss(x, y, beta=0.5)"), ("huber", "F.huber_loss(x, y, delta=0.7)"),
    ("bce_logits", "F.binary_cross_entropy_with_logits(x, y)"),
    ("bce_logits_w", "F.binary_cross_entropy_with_logits(x, y, pos_weight=ns.ones(4) * 2)"),
    ("bce", "F.binary_cross_entropy(ns.sigmoid(x), y)"), ("soft_margin", "F.soft_margin_loss(x, y * 2 - 1)"),
    ("nll", "F.nll_loss(F.log_softmax(x, 1), ns.tensor([0, 1, 2]))"),
    ("cross_entropy", "F.cross_entropy(x, ns.tensor([0, 1, 2]))"),
    ("multi_margin", "F.multi_margin_loss(x, ns.tensor([0, 1, 2]))"),
    ("multilabel_margin", "F.multilabel_margin_loss(x, ns.tensor([[0, 1, -1, 0]] * 3))"),
]


def _loss(ns, expr, x0, y0):
    x = ns.tensor(x0, dtype=ns.float64, requires_grad=True)
    y = ns.tensor(y0, dtype=ns.float64)
    return eval(expr, {"F": ns.nn.functional, "ns": ns, "x": x, "y": y}), x


@pytest.mark.parametrize("name, expr", LOSSES)
def test_loss_node_names_and_gradients_match_pytorch(name, expr):
    rng = np.random.default_rng(0)
    x0, y0 = rng.normal(size=(3, 4)), rng.uniform(size=(3, 4))
    ours, x = _loss(tc, expr, x0, y0)
    theirs, tx = _loss(torch, expr, x0, y0)
    assert ours.grad_fn.name() == theirs.grad_fn.name()
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10)
    g = tc.ones(ours.shape, dtype=tc.float64)
    (gx,) = tc.autograd.grad(ours, x, g, create_graph=True)
    (tgx,) = torch.autograd.grad(theirs, tx, torch.ones(theirs.shape, dtype=torch.float64), create_graph=True)
    np.testing.assert_allclose(gx.detach().numpy(), tgx.detach().numpy(), rtol=1e-9, atol=1e-12)
    if tgx.requires_grad and "margin_loss(x, ns.tensor" not in expr:  # second derivative (PyTorch has none
        # for multi_margin / multilabel_margin)
        (tggx,) = torch.autograd.grad((tgx * tgx).sum(), tx, allow_unused=True, materialize_grads=True)
        if gx.requires_grad:
            (ggx,) = tc.autograd.grad((gx * gx).sum(), x, allow_unused=True, materialize_grads=True)
        else:  # piecewise-linear losses: the gradient does not depend on x
            ggx = tc.zeros_like(x)
        np.testing.assert_allclose(ggx.numpy(), tggx.numpy(), rtol=1e-8, atol=1e-12)


def test_composite_loss_backward_twice_with_retain_graph():
    x = tc.randn(3, 4, requires_grad=True)
    loss = tc.nn.functional.mse_loss(x, tc.zeros(3, 4))
    loss.backward(retain_graph=True)
    first = x.grad.clone()
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first.numpy(), rtol=1e-6)
    assert loss.grad_fn.next_functions[0][0].name() == "AccumulateGrad"


@pytest.mark.parametrize("shape", [(3, 4), (4,), (2, 3, 4)])
def test_linear_records_addmm_chain_like_pytorch(shape):
    lin, tlin = tc.nn.Linear(4, 2), torch.nn.Linear(4, 2)
    x, tx = tc.ones(*shape, requires_grad=True), torch.ones(*shape, requires_grad=True)
    assert _chain(lin(x).grad_fn) == _chain(tlin(tx).grad_fn)
    if len(shape) == 2:
        fn = lin(x).grad_fn
        assert fn.name() == "AddmmBackward0"
        names = [f.name() if f is not None else None for f, _ in fn.next_functions]
        assert names == ["AccumulateGrad", "AccumulateGrad", "TBackward0"]
        assert fn.next_functions[2][0].next_functions[0][0].variable is lin.weight
    lin.bias.requires_grad_(False)
    tlin.bias.requires_grad_(False)
    assert _chain(lin(x).grad_fn) == _chain(tlin(tx).grad_fn)


def test_set_printoptions_namespace_switches_reprs():
    x = tc.zeros(2, dtype=tc.float64)
    try:
        tc.set_printoptions(namespace="torch")
        assert repr(x.shape) == "torch.Size([2])" and repr(x.dtype) == "torch.float64"
        assert repr(x) == repr(torch.zeros(2, dtype=torch.float64))
        assert x.type() == "torch.DoubleTensor" and repr(tc.FloatTensor) == "<class 'torch.FloatTensor'>"
        tc.set_printoptions(namespace="tc")
        assert repr(x.shape) == "tc.Size([2])" and repr(x.dtype) == "tc.float64"
    finally:
        tc.set_printoptions(namespace=None)
    assert repr(x.shape) == "tc.Size([2])"
    with pytest.raises(ValueError, match="namespace must be 'torch', 'tc' or None"):
        tc.set_printoptions(namespace="np")


@pytest.mark.parametrize("how", ["alias", "sys.modules"])
def test_a_script_importing_the_framework_as_torch_prints_like_pytorch(tmp_path, how):
    setup = ("import tinygrad_course as torch" if how == "alias" else
             "import sys, tinygrad_course\nsys.modules['torch'] = tinygrad_course\nimport torch")
    body = "x = torch.ones(2, 3, dtype=torch.float64)\nprint(x.shape, x.dtype, x.sum(0).shape, torch.float32, x.type())\n"
    script = tmp_path / "prog.py"
    script.write_text(setup + "\n" + body)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    ours = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, check=True).stdout
    theirs = subprocess.run([sys.executable, "-c", "import torch\n" + body], capture_output=True, text=True,
                            env=env, check=True).stdout
    assert ours == theirs == "torch.Size([2, 3]) torch.float64 torch.Size([3]) torch.float32 torch.DoubleTensor\n"
