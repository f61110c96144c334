"""Helpers for the tc.nn tests: build layers in both frameworks from one seed, move tensors between
tinygrad_course and PyTorch."""
import numpy as np
import torch

import tinygrad_course as tc

DTYPES = {tc.float32: torch.float32, tc.float64: torch.float64, tc.int64: torch.int64}


def to_torch(t, requires_grad=None):
    """A torch tensor with the same values (and requires_grad) as tc tensor `t`."""
    out = torch.tensor(np.array(t.detach().cpu().numpy()))
    rg = t.requires_grad if requires_grad is None else requires_grad
    return out.requires_grad_(rg) if rg else out


def seeded(spec, seed=0):
    """Layer `spec` (e.g. "Linear(5, 3)") built by each framework right after `manual_seed(seed)`: the same
    random stream gives the same initial weights, checked here exactly, with nothing copied."""
    tc.manual_seed(seed)
    ours = eval("tc.nn." + spec)
    torch.manual_seed(seed)
    theirs = eval("torch.nn." + spec)
    if any(t.device.type != "cpu" for t in ours.state_dict().values()):
        copy_weights(ours, theirs)  # the all-on-GPU pass: the GPU draws with CuPy's generator, not PyTorch's
    assert_same_state(ours, theirs)
    return ours, theirs


def assert_same_state(tc_module, torch_module):
    """The two modules' parameters and buffers are equal, name by name and bit for bit."""
    ours, theirs = tc_module.state_dict(), torch_module.state_dict()
    assert list(ours) == list(theirs)
    for name in ours:
        np.testing.assert_array_equal(ours[name].cpu().numpy(), theirs[name].numpy(), err_msg=name)


def copy_weights(tc_module, torch_module):
    """Load tc_module's parameters and buffers into torch_module."""
    state = {k: torch.tensor(np.array(v.cpu().numpy())) for k, v in tc_module.state_dict().items()}
    torch_module.load_state_dict(state)


def assert_close(a, b, atol=1e-5, rtol=1e-4):
    """tc tensor `a` equals torch tensor `b` in shape, dtype and values."""
    assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
    assert DTYPES[a.dtype] == b.dtype, (a.dtype, b.dtype)
    np.testing.assert_allclose(a.detach().cpu().numpy(), b.detach().cpu().numpy(), atol=atol, rtol=rtol)


def pair(*shape, dtype=tc.float32, requires_grad=True, scale=1.0):
    """A random tc tensor and its torch copy (both requiring grad)."""
    x = tc.randn(*shape, dtype=dtype) * scale
    x.requires_grad_(requires_grad)
    return x, to_torch(x)


def error_of(fn):
    """(exception type, message) raised by `fn()`, or None when it raises nothing."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the tests compare whatever was raised
        return type(e), str(e)
    return None


def assert_layer_matches_torch(ours, theirs, shape):
    """tc layer `ours` and torch layer `theirs` (built from one seed, with equal weights) match on a random
    input of `shape`: output, input gradient, parameter names and gradients, and buffers."""
    assert_same_state(ours, theirs)
    x, tx = pair(*shape)
    y, ty = ours(x), theirs(tx)
    assert_close(y, ty)
    g, tg = pair(*ty.shape, requires_grad=False)
    y.backward(g)
    ty.backward(tg)
    assert_close(x.grad, tx.grad)
    for (name, p), (tname, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert name == tname
        assert_close(p.grad, tp.grad)
    for (name, b), (_, tb) in zip(ours.named_buffers(), theirs.named_buffers()):
        assert_close(b, tb)
