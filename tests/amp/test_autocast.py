"""tc.autocast against torch.autocast on the CPU: which ops run in bfloat16/float16, which in float32,
the values they produce, and the float32 gradients that reach the master weights."""
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tinygrad_course as tc
import tinygrad_course.nn.functional as F

TORCH_DTYPE = {"bfloat16": torch.bfloat16, "float16": torch.float16}


def _pair(*shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return tc.tensor(a), torch.tensor(a)


def _np(t):
    return t.detach().cpu().float().numpy() if isinstance(t, torch.Tensor) else t.detach().float().numpy()


CASES = {
    "matmul": (lambda m, x, w, b: x @ w.T),
    "linear": (lambda m, x, w, b: m.linear(x, w, b)),
    "relu(linear)": (lambda m, x, w, b: m.relu(m.linear(x, w, b))),
    "linear + float32": (lambda m, x, w, b: m.linear(x, w) + b),
    "softmax": (lambda m, x, w, b: m.softmax(x @ w.T, dim=1)),
    "log_softmax": (lambda m, x, w, b: m.log_softmax(x @ w.T, dim=1)),
    "sum": (lambda m, x, w, b: (x @ w.T).sum()),
}


@pytest.mark.parametrize("low", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_op_dtypes_and_values_match_torch(name, low):
    fn = CASES[name]
    x, tx = _pair(6, 4)
    w, tw = _pair(5, 4, seed=1)
    b, tb = _pair(5, seed=2)
    with tc.autocast("cpu", dtype=getattr(tc, low)):
        got = fn(F, x, w, b)
    with torch.autocast("cpu", dtype=TORCH_DTYPE[low]):
        want = fn(TF, tx, tw, tb)
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
    np.testing.assert_allclose(_np(got), _np(want), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
def test_losses_run_in_float32(loss):
    x, tx = _pair(8, 4)
    w, tw = _pair(3, 4, seed=1)
    y = np.array([0, 1, 2, 0, 1, 2, 0, 1])
    with tc.autocast("cpu"):
        logits = x @ w.T
        out = getattr(F, loss)(logits if loss == "cross_entropy" else F.log_softmax(logits, 1), tc.tensor(y))
    with torch.autocast("cpu"):
        tlogits = tx @ tw.T
        tout = getattr(TF, loss)(tlogits if loss == "cross_entropy" else TF.log_softmax(tlogits, 1), torch.tensor(y))
    assert logits.dtype is tc.bfloat16 and tlogits.dtype is torch.bfloat16
    assert out.dtype is tc.float32 and tout.dtype is torch.float32
    np.testing.assert_allclose(out.item(), tout.item(), rtol=1e-2)  # log_softmax ran in bfloat16


def test_conv2d_runs_in_bfloat16_like_torch():
    x, tx = _pair(2, 3, 8, 8)
    w, tw = _pair(4, 3, 3, 3, seed=1)
    b, tb = _pair(4, seed=2)
    with tc.autocast("cpu"):
        got = F.conv2d(x, w, b, padding=1)
    with torch.autocast("cpu"):
        want = TF.conv2d(tx, tw, tb, padding=1)
    assert got.dtype is tc.bfloat16 and want.dtype is torch.bfloat16
    np.testing.assert_allclose(_np(got), _np(want), rtol=3e-2, atol=5e-2)


def test_float64_and_integers_are_left_alone():
    d = tc.randn(3, 3, dtype=tc.float64)
    i = tc.ones(2, 2, dtype=tc.int64)
    with tc.autocast("cpu"):
        assert (d @ d).dtype is tc.float64
        assert (i @ i).dtype is tc.int64


def test_backward_reaches_float32_master_weights_like_torch():
    x, tx = _pair(16, 8)
    w, tw = _pair(4, 8, seed=1)
    b, tb = _pair(4, seed=2)
    for t in (w, b):
        t.requires_grad_()
    for t in (tw, tb):
        t.requires_grad_()
    y = np.arange(16) % 4
    with tc.autocast("cpu"):
        loss = F.cross_entropy(F.linear(x, w, b), tc.tensor(y))
    with torch.autocast("cpu"):
        tloss = TF.cross_entropy(TF.linear(tx, tw, tb), torch.tensor(y))
    loss.backward()
    tloss.backward()
    assert w.grad.dtype is tc.float32 and b.grad.dtype is tc.float32
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=5e-2, atol=5e-3)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=5e-2, atol=5e-3)


def test_the_cast_is_recorded_as_ToCopyBackward0():
    x = tc.randn(2, 3)
    w = tc.randn(4, 3, requires_grad=True)
    with tc.autocast("cpu"):
        y = x @ w.T
    names = [fn.name() for fn, _ in y.grad_fn.next_functions if fn is not None]
    assert y.grad_fn.name() == "MmBackward0" and names == ["ToCopyBackward0"]


def test_nesting_disabling_and_state_queries():
    assert not tc.amp.is_autocast_enabled("cpu")
    assert tc.amp.get_autocast_dtype("cpu") is tc.bfloat16 and tc.amp.get_autocast_dtype("cuda") is tc.float16
    x = tc.randn(2, 2)
    with tc.autocast("cpu"):
        assert tc.amp.is_autocast_enabled("cpu") and not tc.amp.is_autocast_enabled()
        with tc.autocast("cpu", enabled=False):
            assert (x @ x).dtype is tc.float32
        with tc.autocast("cpu", dtype=tc.float16):
            assert (x @ x).dtype is tc.float16
        assert (x @ x).dtype is tc.bfloat16
    assert (x @ x).dtype is tc.float32
    assert not tc.amp.is_autocast_enabled("cpu")


def test_decorator_form():
    @tc.autocast("cpu")
    def forward(a):
        return a @ a

    assert forward(tc.randn(2, 2)).dtype is tc.bfloat16
    assert not tc.amp.is_autocast_enabled("cpu")


def test_state_is_restored_after_an_exception():
    with pytest.raises(ValueError):
        with tc.autocast("cpu"):
            raise ValueError("boom")
    assert not tc.amp.is_autocast_enabled("cpu")


def test_unsupported_dtype_warns_and_disables_like_torch():
    with pytest.warns(UserWarning, match="Disabling autocast"):
        ctx = tc.autocast("cpu", dtype=tc.float32)
    with pytest.warns(UserWarning, match="Disabling autocast"):
        torch.autocast("cpu", dtype=torch.float32)
    with ctx:
        assert not tc.amp.is_autocast_enabled("cpu")


@pytest.mark.skipif(tc.cuda.is_available(), reason="checks the behaviour without a GPU")
def test_cuda_autocast_without_a_gpu_warns_and_leaves_cpu_tensors_alone():
    with pytest.warns(UserWarning, match="CUDA is not available"):
        ctx = tc.autocast("cuda")
    x = tc.randn(2, 2)
    with ctx:
        assert (x @ x).dtype is tc.float32


def test_cuda_autocast_does_not_touch_cpu_tensors():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with tc.autocast("cuda"):
            x = tc.randn(2, 2)
            assert (x @ x).dtype is tc.float32


def test_bad_device_type():
    with pytest.raises(RuntimeError, match="unsupported autocast device_type"):
        tc.autocast("tpu")


def test_top_level_alias():
    assert tc.autocast is tc.amp.autocast


def test_a_small_cnn_under_autocast_matches_torch_dtypes_and_values():
    tc.manual_seed(0)
    ours = tc.nn.Sequential(tc.nn.Conv2d(1, 4, 3, padding=1), tc.nn.ReLU(), tc.nn.MaxPool2d(2),
                            tc.nn.Conv2d(4, 8, 3, padding=1), tc.nn.ReLU(), tc.nn.Flatten(), tc.nn.Linear(8 * 4 * 4, 3))
    theirs = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                                 torch.nn.Conv2d(4, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(),
                                 torch.nn.Linear(8 * 4 * 4, 3))
    with torch.no_grad():
        for p, tp in zip(ours.parameters(), theirs.parameters()):
            tp.copy_(torch.tensor(p.detach().numpy()))
    x, tx = _pair(2, 1, 8, 8)
    y = np.array([0, 2])
    with tc.autocast("cpu"):
        out = ours(x)
        loss = F.cross_entropy(out, tc.tensor(y))
    with torch.autocast("cpu"):
        tout = theirs(tx)
        tloss = TF.cross_entropy(tout, torch.tensor(y))
    assert out.dtype is tc.bfloat16 and tout.dtype is torch.bfloat16
    np.testing.assert_allclose(_np(out), _np(tout), rtol=5e-2, atol=5e-2)
    loss.backward()
    tloss.backward()
    for p, tp in zip(ours.parameters(), theirs.parameters()):
        assert p.grad.dtype is tc.float32
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=0.1, atol=2e-2)
