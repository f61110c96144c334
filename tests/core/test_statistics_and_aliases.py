"""cov / corrcoef against PyTorch (values, gradients, weights, errors), and the small Tensor aliases
(`H`, `mH`, `adjoint`, `is_cpu`, `bernoulli`/`multinomial` methods)."""
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import tinygrad_course as tc
from core_helpers import to_tc
from gradcheck_table import gradcheck_both_orders_test


def _x(*shape, seed=0):
    return tc.tensor(np.random.default_rng(seed).uniform(-2, 2, shape), dtype=tc.float64, requires_grad=True)


FW = tc.tensor([1, 2, 1, 3])
AW = tc.tensor([0.5, 1.0, 2.0, 0.25], dtype=tc.float64)
CASES = {
    "cov": (lambda a: a.cov(), lambda: (_x(3, 4),)),
    "cov_weights": (lambda a: tc.cov(a, correction=2, fweights=FW, aweights=AW), lambda: (_x(2, 4),)),
    "cov_vector": (lambda a: tc.cov(a, correction=0), lambda: (_x(5),)),
    "corrcoef": (lambda a: tc.corrcoef(a), lambda: (_x(3, 5),)),
}


test_gradcheck = gradcheck_both_orders_test(CASES)


@given(rows=st.integers(1, 4), cols=st.integers(2, 6), correction=st.integers(0, 1), seed=st.integers(0, 99))
def test_cov_and_corrcoef_match_torch(rows, cols, correction, seed):
    data = np.random.default_rng(seed).normal(size=(rows, cols)).astype(np.float32)
    theirs = torch.tensor(data, requires_grad=True)
    ours = to_tc(theirs)
    for fn in (lambda m, t: m.cov(t, correction=correction), lambda m, t: m.corrcoef(t)):
        t_out, o_out = fn(torch, theirs), fn(tc, ours)
        assert tuple(o_out.shape) == tuple(t_out.shape) and o_out.dtype is tc.float32
        np.testing.assert_allclose(o_out.detach().cpu().numpy(), t_out.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_cov_gradients_with_weights_match_torch():
    data = np.random.default_rng(3).normal(size=(3, 4))
    theirs = torch.tensor(data, requires_grad=True)
    ours = to_tc(theirs)
    fw, aw = [1, 2, 1, 3], [0.5, 1.0, 2.0, 0.25]
    torch.cov(theirs, correction=1, fweights=torch.tensor(fw), aweights=torch.tensor(aw)).sum().backward()
    tc.cov(ours, correction=1, fweights=tc.tensor(fw), aweights=tc.tensor(aw)).sum().backward()
    np.testing.assert_allclose(ours.grad.cpu().numpy(), theirs.grad.numpy(), rtol=1e-6)  # torch: float32 weights


def test_cov_of_integers_is_float_like_torch():
    ours = tc.cov(tc.tensor([[1, 2, 4], [3, 1, 0]]))
    assert ours.dtype is tc.float32
    np.testing.assert_allclose(ours.cpu().numpy(), torch.cov(torch.tensor([[1, 2, 4], [3, 1, 0]])).numpy(), rtol=1e-6)


@pytest.mark.parametrize("kwargs, message", [
    ({"fweights": [1.0, 2.0, 1.0]}, "expected fweights to have integral dtype but got fweights with Float dtype"),
    ({"fweights": [1, -2, 1]}, "fweights cannot be negative"),
    ({"aweights": [1.0, -2.0, 1.0]}, "aweights cannot be negative"),
    ({"aweights": [1.0, 2.0]}, "expected aweights to have the same numel as there are observations in the input "
                               "but got 2 != 3"),
])
def test_cov_weight_errors_match_torch(kwargs, message):
    data = [[1.0, 2.0, 4.0], [3.0, 1.0, 0.0]]
    with pytest.raises(RuntimeError, match=message):
        torch.cov(torch.tensor(data), **{k: torch.tensor(v) for k, v in kwargs.items()})
    with pytest.raises(RuntimeError, match=message):
        tc.cov(tc.tensor(data), **{k: tc.tensor(v) for k, v in kwargs.items()})


def test_cov_errors_and_warnings_match_torch():
    with pytest.raises(RuntimeError, match="expected input to have two or fewer dimensions but got an input with 3"):
        tc.cov(tc.ones(2, 3, 4))
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        out = tc.cov(tc.ones(2, 1))
    assert np.isnan(out.cpu().numpy()).all()


def test_matrix_transpose_aliases_match_torch():
    a = np.arange(24.0).reshape(2, 3, 4)
    for attr in ("mH", "mT"):
        assert getattr(tc.tensor(a), attr).tolist() == getattr(torch.tensor(a), attr).tolist()
    assert tc.tensor(a).adjoint().tolist() == torch.tensor(a).adjoint().tolist()
    assert tc.tensor(a[0]).H.tolist() == torch.tensor(a[0]).H.tolist()
    for expr, message in [(lambda m: m.ones(3).H, "tensor.H is only supported on matrices \\(2-D tensors\\). Got 1-D"),
                          (lambda m: m.ones(2, 3, 4).H, "For batches of matrices, consider using tensor.mH"),
                          (lambda m: m.ones(3).mH, "tensor.mH is only supported on matrices or batches of matrices"),
                          (lambda m: m.ones(3).adjoint(), "tensor.adjoint\\(\\) is only supported on matrices")]:
        for lib in (torch, tc):
            with pytest.raises(RuntimeError, match=message):
                expr(lib)


def test_device_predicates():
    t = tc.ones(2)
    assert t.is_cpu is (t.device.type == "cpu") and t.is_cuda is (t.device.type == "cuda")
    assert tc.ones(2, device="cpu").is_cpu


def test_random_methods_draw_like_the_functions():
    probs = tc.tensor([[0.0, 1.0, 0.0], [0.2, 0.3, 0.5]])
    tc.manual_seed(5)
    a, b = probs.bernoulli(), probs.multinomial(2)
    tc.manual_seed(5)
    assert a.tolist() == tc.bernoulli(probs).tolist() and b.tolist() == tc.multinomial(probs, 2).tolist()
    assert a[0].tolist() == [0.0, 1.0, 0.0] and b[0, 0].item() == 1
