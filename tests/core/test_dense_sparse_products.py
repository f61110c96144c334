"""dense @ sparse COO (`@`, `mm`, `matmul`, `tc.sparse.mm`) and sparse @ dense, values and gradients (for the
dense operand and the stored values) compared with PyTorch."""
import numpy as np
import pytest
import torch

import tinygrad_course as tc

IDX = [[0, 1, 1, 2], [2, 0, 2, 1]]
VALS = [3.0, 4.0, 5.0, -1.5]


def _build(m, dense_shape, seed=0):
    d = np.random.default_rng(seed).standard_normal(dense_shape).astype(np.float32)
    v = m.tensor(VALS, requires_grad=True)
    s = m.sparse_coo_tensor(m.tensor(IDX), v, (3, 3))
    x = m.tensor(d, requires_grad=True)
    return x, v, s


CALLS = {
    "x @ S": lambda m, x, s: x @ s,
    "mm(x, S)": lambda m, x, s: m.mm(x, s),
    "matmul(x, S)": lambda m, x, s: m.matmul(x, s),
    "x.mm(S)": lambda m, x, s: x.mm(s),
    "x.matmul(S)": lambda m, x, s: x.matmul(s),
    "sparse.mm(x, S)": lambda m, x, s: m.sparse.mm(x, s),
    "S @ x.T": lambda m, x, s: (s @ x.t()).t(),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_dense_times_sparse_matches_pytorch(name):
    results = []
    for m in (tc, torch):
        x, v, s = _build(m, (4, 3))
        out = CALLS[name](m, x, s)
        (out * m.arange(12.0).reshape(4, 3)).sum().backward()
        results.append((out, x.grad, v.grad))
    assert type(results[0][0]) is tc.Tensor and results[1][0].layout == torch.strided  # dense results
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6, atol=1e-6)


def test_a_vector_times_sparse_and_shape_errors():
    for m in (tc, torch):
        x, v, s = _build(m, (3,))
        out = x @ s
        out.sum().backward()
        if m is tc:
            ours = (out.detach().numpy(), x.grad.numpy(), v.grad.numpy())
        else:
            for a, b in zip(ours, (out.detach().numpy(), x.grad.numpy(), v.grad.numpy())):
                np.testing.assert_allclose(a, b, rtol=1e-6)
    x, v, s = _build(tc, (4, 2))
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(4x2 and 3x3\)"):
        x @ s
