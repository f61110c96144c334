"""Functions PyTorch computes as one op (expm1, log1p, log2, log10, reciprocal) are one op here too: exact at
tiny inputs, PyTorch's node names, gradients that pass gradcheck."""
import numpy as np
import pytest
import torch

import tinygrad_course as tc

NAMES = ["expm1", "log1p", "log2", "log10", "reciprocal"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_gradients_and_node_names_match_pytorch(name, dtype):
    values = np.array([1e-10, -3e-8, 0.5, 3.0], dtype=dtype)
    if name in ("log2", "log10"):
        values = np.abs(values)
    x = torch.tensor(values, requires_grad=True)
    y = tc.tensor(values, requires_grad=True)
    tx, ty = getattr(x, name)(), getattr(y, name)()
    assert ty.grad_fn.name() == tx.grad_fn.name()
    np.testing.assert_allclose(ty.detach().cpu().numpy(), tx.detach().numpy(), rtol=1e-6 if dtype == "float32" else 1e-14)
    tx.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(y.grad.cpu().numpy(), x.grad.numpy(), rtol=1e-6 if dtype == "float32" else 1e-14)


def test_expm1_of_a_tiny_number_is_that_number():
    assert tc.tensor([1e-10]).expm1().item() == pytest.approx(1e-10, rel=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_gradcheck(name):
    x = tc.tensor([0.3, 1.7, 2.5], dtype=tc.float64, requires_grad=True)
    assert tc.autograd.gradcheck(lambda t: getattr(t, name)(), (x,))
    assert tc.autograd.gradgradcheck(lambda t: getattr(t, name)(), (x,))
