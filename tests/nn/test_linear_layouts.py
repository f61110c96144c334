"""nn.Linear's product is computed in whichever operand order is faster for its shape (W @ x.T for few rows and
many output features); whatever the order, the result is PyTorch's value, row-major like PyTorch's, and its
gradients are PyTorch's."""
import numpy as np
import pytest
import torch

import tinygrad_course as tc


@pytest.mark.parametrize("batch", [1, 8, 64, 65, 200])
@pytest.mark.parametrize("features", [(784, 256), (256, 10), (32, 128)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_torch_and_is_row_major(batch, features, bias):
    rng = np.random.default_rng(batch)
    x = rng.standard_normal((batch, features[0])).astype(np.float32)
    ours, theirs = tc.nn.Linear(*features, bias=bias), torch.nn.Linear(*features, bias=bias)
    with torch.no_grad():
        ours.load_state_dict({k: tc.from_numpy(v.numpy().copy()) for k, v in theirs.state_dict().items()})
    tx, ox = tc.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y, ty = ours(tx), theirs(ox)
    assert y.is_contiguous() and y.stride() == ty.stride()
    np.testing.assert_allclose(y.detach().cpu().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-5)
    g = rng.standard_normal(tuple(ty.shape)).astype(np.float32)
    y.backward(tc.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(tx.grad.cpu().numpy(), ox.grad.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours.weight.grad.cpu().numpy(), theirs.weight.grad.numpy(), rtol=1e-4, atol=1e-4)
    if bias:
        np.testing.assert_allclose(ours.bias.grad.cpu().numpy(), theirs.bias.grad.numpy(), rtol=1e-5, atol=1e-5)
