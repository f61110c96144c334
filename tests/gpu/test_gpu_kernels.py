"""The fused kernels of tinygrad_course.ops.gpu_kernels.

On every machine: the NumPy reference paths against PyTorch (so the reference is right). On a GPU
(marked `gpu`): each CuPy kernel against the reference on the same data (so the kernel is right).
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tinygrad_course as tc
from devices import requires_real_gpu
from tinygrad_course.ops import gpu_kernels as K


def _rng(seed=0):
    return np.random.default_rng(seed)


def _adam_run(arrays, steps, decoupled, weight_decay, to_backend=np.asarray, lr=0.01, betas=(0.9, 0.999)):
    p, m, v = (to_backend(a.copy()) for a in (arrays[0], np.zeros_like(arrays[0]), np.zeros_like(arrays[0])))
    for step in range(1, steps + 1):
        g = to_backend(arrays[step])
        K.adam_update(p, g, m, v, lr=lr, beta1=betas[0], beta2=betas[1], eps=1e-8, weight_decay=weight_decay,
                      decoupled=decoupled, step=step)
    return p, m, v


def _adam_arrays(steps=5, shape=(64, 33)):
    rng = _rng()
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(steps + 1)]


@pytest.mark.parametrize("decoupled,weight_decay", [(False, 0.0), (False, 0.1), (True, 0.01)])
def test_adam_reference_matches_torch(decoupled, weight_decay):
    arrays = _adam_arrays()
    p, m, v = _adam_run(arrays, 5, decoupled, weight_decay)
    tp = torch.tensor(arrays[0], requires_grad=True)
    opt = (torch.optim.AdamW if decoupled else torch.optim.Adam)([tp], lr=0.01, weight_decay=weight_decay)
    for step in range(1, 6):
        tp.grad = torch.tensor(arrays[step])
        opt.step()
    np.testing.assert_allclose(p, tp.detach().numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(m, opt.state[tp]["exp_avg"].numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(v, opt.state[tp]["exp_avg_sq"].numpy(), rtol=1e-6, atol=1e-9)


def _ce_inputs(m=32, c=10, seed=0):
    rng = _rng(seed)
    x = (rng.standard_normal((m, c)) * 3).astype(np.float32)
    y = rng.integers(0, c, m)
    coeff = np.zeros((m, c), np.float32)
    coeff[np.arange(m), y] = 1.0
    return x, y, coeff


def test_cross_entropy_reference_keeps_precision_for_huge_logits():
    x = np.array([[1e4, 1e4 - 1, 0.0], [-3e4, -3e4, -3e4]], dtype=np.float32)
    y = np.array([1, 2])
    coeff = np.zeros_like(x)
    coeff[np.arange(2), y] = 1.0
    per_row, stats = K.cross_entropy_forward(x, coeff)
    tx = torch.tensor(x, requires_grad=True)
    TF.cross_entropy(tx, torch.tensor(y), reduction="sum").backward()
    np.testing.assert_allclose(K.cross_entropy_backward(x, stats, coeff, 1.0), tx.grad.numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(per_row, TF.cross_entropy(tx, torch.tensor(y), reduction="none").detach().numpy(),
                               rtol=1e-6)


def test_cross_entropy_reference_matches_torch():
    x, y, coeff = _ce_inputs()
    per_row, stats = K.cross_entropy_forward(x, coeff)
    grad = K.cross_entropy_backward(x, stats, coeff, 1.0 / len(y))
    tx = torch.tensor(x, requires_grad=True)
    loss = TF.cross_entropy(tx, torch.tensor(y))
    loss.backward()
    np.testing.assert_allclose(per_row.mean(), loss.item(), rtol=1e-6)
    np.testing.assert_allclose(grad, tx.grad.numpy(), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_reference_matches_torch(approximate):
    x = np.linspace(-6, 6, 101, dtype=np.float32)
    g = _rng().standard_normal(101).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    ty = TF.gelu(tx, approximate=approximate)
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(K.gelu_forward(x, approximate), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(K.gelu_backward(x, g, approximate), tx.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_kernels_are_only_chosen_for_cupy_float32():
    assert not K.uses_kernel(np.ones(3, np.float32))


# ---- on a GPU: kernel == reference ----------------------------------------------------------------------


def _cp():
    return tc._backend.cupy_module()


@pytest.mark.gpu
@requires_real_gpu
@pytest.mark.parametrize("decoupled,weight_decay", [(False, 0.0), (False, 0.1), (True, 0.01)])
def test_adam_kernel_matches_reference(decoupled, weight_decay):
    cp = _cp()
    arrays = _adam_arrays(steps=20, shape=(257, 129))
    assert K.uses_kernel(cp.asarray(arrays[0]))
    ref = _adam_run(arrays, 20, decoupled, weight_decay)
    got = _adam_run(arrays, 20, decoupled, weight_decay, to_backend=cp.asarray)
    for r, g, name in zip(ref, got, ("param", "exp_avg", "exp_avg_sq")):
        np.testing.assert_allclose(cp.asnumpy(g), r, rtol=2e-5, atol=1e-7, err_msg=name)


@pytest.mark.gpu
@requires_real_gpu
@pytest.mark.parametrize("m,c", [(1, 2), (512, 10), (100, 1000)])
def test_cross_entropy_kernels_match_reference(m, c):
    cp = _cp()
    x, y, coeff = _ce_inputs(m, c)
    per_row, stats = K.cross_entropy_forward(x, coeff)
    grad = K.cross_entropy_backward(x, stats, coeff, 1.0 / m)
    gper_row, gstats = K.cross_entropy_forward(cp.asarray(x), cp.asarray(coeff))
    ggrad = K.cross_entropy_backward(cp.asarray(x), gstats, cp.asarray(coeff), 1.0 / m)
    for ours, ref in zip(gstats, stats):
        np.testing.assert_allclose(cp.asnumpy(ours), ref, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(cp.asnumpy(gper_row), per_row, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cp.asnumpy(ggrad), grad, rtol=1e-5, atol=1e-8)
    # a per-row incoming gradient (reduction="none")
    scale = _rng(1).standard_normal((m, 1)).astype(np.float32)
    np.testing.assert_allclose(cp.asnumpy(K.cross_entropy_backward(cp.asarray(x), gstats, cp.asarray(coeff),
                                                                     cp.asarray(scale))),
                               K.cross_entropy_backward(x, stats, coeff, scale), rtol=1e-5, atol=1e-7)


@pytest.mark.gpu
@requires_real_gpu
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_kernels_match_reference(approximate):
    cp = _cp()
    x = np.linspace(-8, 8, 10001, dtype=np.float32)
    g = _rng().standard_normal(x.shape).astype(np.float32)
    np.testing.assert_allclose(cp.asnumpy(K.gelu_forward(cp.asarray(x), approximate)),
                               K.gelu_forward(x, approximate), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cp.asnumpy(K.gelu_backward(cp.asarray(x), cp.asarray(g), approximate)),
                               K.gelu_backward(x, g, approximate), rtol=1e-5, atol=1e-6)


@pytest.mark.gpu
@requires_real_gpu
def test_non_float32_gpu_arrays_use_the_reference_path():
    cp = _cp()
    x = cp.linspace(-3, 3, 7, dtype=cp.float64)
    assert not K.uses_kernel(x)
    np.testing.assert_allclose(cp.asnumpy(K.gelu_forward(x)), K.gelu_forward(cp.asnumpy(x)), rtol=1e-12)
