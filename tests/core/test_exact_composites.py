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


UNARY = ("abs neg exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sin cos tan tanh sigmoid relu sinh cosh asin acos "
         "atan asinh atanh erf erfc erfinv reciprocal square sign frac trunc floor ceil round logit sinc deg2rad "
         "rad2deg nan_to_num sum mean std var prod norm amax amin max min t flatten squeeze clone").split()
WITH_DIM = {"softmax": (1,), "log_softmax": (1,), "cumsum": (1,), "cumprod": (1,), "logcumsumexp": (1,),
            "logsumexp": (1,), "unsqueeze": (0,), "squeeze": (0,)}
BINARY = "add sub mul div pow atan2 hypot maximum minimum fmax fmin remainder fmod copysign logaddexp xlogy".split()


def _names(result_torch, result_tc):
    first = (lambda r: r[0] if isinstance(r, tuple) else r)
    return first(result_torch).grad_fn.name(), first(result_tc).grad_fn.name()


@pytest.mark.parametrize("call", [(n, ()) for n in UNARY] + list(WITH_DIM.items()) + [("squeeze", ((0, 2),))])
def test_every_function_records_pytorchs_node(call):
    name, args = call
    values = np.random.default_rng(0).random((1, 4, 1)).astype(np.float32) * 0.8 + 0.1
    if name == "t":
        values = values[0]
    x, y = torch.tensor(values, requires_grad=True), tc.tensor(values, requires_grad=True)
    theirs, ours = _names(getattr(x, name)(*args), getattr(y, name)(*args))
    assert ours == theirs


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("number", [False, True])
def test_binary_functions_record_pytorchs_node_per_overload(name, number):
    rng = np.random.default_rng(1)
    a, b = rng.random((3, 4)).astype(np.float32) + 0.5, rng.random((3, 4)).astype(np.float32) + 0.5
    x, y = torch.tensor(a, requires_grad=True), tc.tensor(a, requires_grad=True)
    if number:
        if name in ("atan2", "hypot", "maximum", "minimum", "fmax", "fmin", "copysign", "logaddexp", "xlogy"):
            pytest.skip("PyTorch takes only a tensor here")
        other_torch = other_tc = 1.5
    else:
        other_torch, other_tc = torch.tensor(b, requires_grad=True), tc.tensor(b, requires_grad=True)
    theirs, ours = _names(getattr(x, name)(other_torch), getattr(y, name)(other_tc))
    assert ours == theirs
