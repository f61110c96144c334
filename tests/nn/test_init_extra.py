"""tc.nn.init: orthogonal_, eye_, dirac_, sparse_, trunc_normal_ (on the tensor's device), calculate_gain and the
deprecated aliases behave like torch.nn.init: exact where deterministic, statistically where random."""
import math
import warnings

import numpy as np
import pytest
import torch

import tinygrad_course as tc
from tinygrad_course.nn import init


def _np(t):
    return t.detach().cpu().numpy()


def _generator(seed, like):
    return tc.Generator(device=like.device).manual_seed(seed)


@pytest.mark.parametrize("shape", [(5, 8), (8, 5), (4, 4), (6, 2, 3), (3, 2, 2, 2), (1, 7)])
@pytest.mark.parametrize("dtype", [tc.float32, tc.float64])
def test_orthogonal_rows_or_columns_are_orthonormal(shape, dtype):
    w = tc.empty(*shape, dtype=dtype, requires_grad=True)
    assert init.orthogonal_(w, gain=1.5) is w
    assert w.requires_grad and w.grad_fn is None and w.dtype == dtype and w.shape == shape
    a = _np(w).reshape(shape[0], -1).astype(np.float64)
    gram = a @ a.T if a.shape[0] <= a.shape[1] else a.T @ a
    tol = 1e-5 if dtype == tc.float32 else 1e-12
    np.testing.assert_allclose(gram, 1.5 ** 2 * np.eye(gram.shape[0]), atol=tol)


def test_orthogonal_is_haar_distributed_and_reproducible():
    like = tc.empty(0)
    draws = np.stack([_np(init.orthogonal_(tc.empty(4, 4), generator=_generator(s, like))) for s in range(300)])
    # entries of a uniformly random 4x4 orthogonal matrix have mean 0 and variance 1/4 (no sign bias)
    assert abs(draws.mean()) < 0.02
    assert abs((draws ** 2).mean() - 0.25) < 1e-6  # rows have unit norm exactly
    assert np.abs(draws[:, 0, 0].mean()) < 0.1 and np.abs(draws[:, 3, 2].mean()) < 0.1
    a = init.orthogonal_(tc.empty(3, 5), generator=_generator(7, like))
    b = init.orthogonal_(tc.empty(3, 5), generator=_generator(7, like))
    assert np.array_equal(_np(a), _np(b))


def test_orthogonal_edge_cases_and_errors_like_torch():
    empty = tc.empty(0, 3)
    assert init.orthogonal_(empty) is empty
    for lib, mod in ((tc, init), (torch, torch.nn.init)):
        with pytest.raises(ValueError, match="^Only tensors with 2 or more dimensions are supported$"):
            mod.orthogonal_(lib.empty(4))


@pytest.mark.parametrize("shape", [(3, 5), (4, 2), (3, 3), (0, 2)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_eye_equals_torch(shape, dtype):
    w = tc.full(shape, 7, dtype=getattr(tc, dtype))
    t = torch.full(shape, 7, dtype=getattr(torch, dtype))
    assert init.eye_(w) is w
    torch.nn.init.eye_(t)
    assert w.dtype == getattr(tc, dtype) and np.array_equal(_np(w), t.numpy())


@pytest.mark.parametrize("shape,groups", [((4, 2, 3), 1), ((2, 4, 5), 1), ((6, 3, 3, 3), 2), ((6, 1, 3, 3), 3),
                                          ((2, 4, 1, 2, 3), 2), ((4, 4, 3, 3), 4), ((3, 5, 2, 2, 2), 1)])
def test_dirac_equals_torch(shape, groups):
    w, t = tc.full(shape, 5.0, requires_grad=True), torch.full(shape, 5.0, requires_grad=True)
    assert init.dirac_(w, groups) is w
    torch.nn.init.dirac_(t, groups)
    assert np.array_equal(_np(w), t.detach().numpy()) and w.requires_grad and w.grad_fn is None


def test_dirac_convolution_passes_the_input_through():
    w = init.dirac_(tc.empty(3, 3, 3, 3))
    x = tc.randn(2, 3, 6, 6)
    np.testing.assert_allclose(_np(tc.nn.functional.conv2d(x, w, padding=1)), _np(x), atol=1e-6)


def test_eye_and_dirac_errors_like_torch():
    for lib, mod in ((tc, init), (torch, torch.nn.init)):
        with pytest.raises(ValueError, match="^Only tensors with 2 dimensions are supported$"):
            mod.eye_(lib.empty(2, 2, 2))
        with pytest.raises(ValueError, match="^Only tensors with 3, 4, or 5 dimensions are supported$"):
            mod.dirac_(lib.empty(2, 2))
        with pytest.raises(ValueError, match="^dim 0 must be divisible by groups$"):
            mod.dirac_(lib.empty(5, 2, 3), groups=2)
        with pytest.raises(ValueError, match="^Only tensors with 2 dimensions are supported$"):
            mod.sparse_(lib.empty(2, 2, 2), 0.5)


@pytest.mark.parametrize("sparsity", [0.0, 0.1, 0.35, 1.0])
def test_sparse_zeros_the_same_number_of_entries_in_every_column(sparsity):
    tc.manual_seed(0)
    rows, cols = 40, 30
    w = tc.empty(rows, cols, requires_grad=True)
    assert init.sparse_(w, sparsity, std=0.5) is w
    a = _np(w)
    zeros = (a == 0).sum(axis=0)
    assert (zeros == math.ceil(sparsity * rows)).all()
    kept = a[a != 0]
    if kept.size > 200:
        assert abs(kept.std() - 0.5) < 0.05 and abs(kept.mean()) < 0.05
    # the zeroed rows differ between columns (an independent permutation per column)
    if 0 < sparsity < 1:
        assert len({tuple(np.flatnonzero(a[:, j] == 0)) for j in range(cols)}) > cols // 2


def _truncated_moments(mean, std, a, b):
    alpha, beta = (a - mean) / std, (b - mean) / std
    pdf = lambda x: math.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))  # noqa: E731
    z = cdf(beta) - cdf(alpha)
    m = mean + std * (pdf(alpha) - pdf(beta)) / z
    var = std ** 2 * (1 + (alpha * pdf(alpha) - beta * pdf(beta)) / z - ((pdf(alpha) - pdf(beta)) / z) ** 2)
    return m, math.sqrt(var)


# the first two keep most of the mass (redraw branch), the last two little of it (rejection branch)
@pytest.mark.parametrize("mean,std,a,b", [(0.0, 1.0, -2.0, 2.0), (0.5, 2.0, -1.0, 3.0), (0.0, 1.0, 2.0, 4.0),
                                          (1.0, 0.5, -1.0, 0.2)])
def test_trunc_normal_stays_in_bounds_with_the_truncated_moments(mean, std, a, b):
    tc.manual_seed(1)
    w = tc.empty(40000, dtype=tc.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert init.trunc_normal_(w, mean, std, a, b) is w
    x = _np(w)
    assert x.min() >= a and x.max() <= b and w.requires_grad and w.grad_fn is None
    want_mean, want_std = _truncated_moments(mean, std, a, b)
    assert abs(x.mean() - want_mean) < 5 * want_std / math.sqrt(x.size)
    assert abs(x.std() - want_std) < 0.03 * want_std


def test_trunc_normal_draws_on_the_tensors_device_with_its_generator():
    w = tc.empty(3, 100)
    a = init.trunc_normal_(tc.empty(3, 100), generator=_generator(3, w))
    b = init.trunc_normal_(tc.empty(3, 100), generator=_generator(3, w))
    assert a.device == w.device and np.array_equal(_np(a), _np(b))
    if w.device.type != "cpu":  # a CPU generator cannot fill a GPU tensor, as in PyTorch
        with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator"):
            init.trunc_normal_(w, generator=tc.Generator())


def test_trunc_normal_warns_like_torch_when_the_mean_is_far_outside():
    for lib, mod in ((tc, init), (torch, torch.nn.init)):
        with pytest.warns(UserWarning, match="mean is more than 2 std from \\[a, b\\]"):
            mod.trunc_normal_(lib.empty(10), mean=10.0, std=1.0, a=-2.0, b=2.0)


@pytest.mark.parametrize("nonlinearity", ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                                          "conv_transpose2d", "conv_transpose3d", "sigmoid", "tanh", "relu",
                                          "leaky_relu", "selu"])
@pytest.mark.parametrize("param", [None, 0.2, 3])
def test_calculate_gain_equals_torch(nonlinearity, param):
    got, want = init.calculate_gain(nonlinearity, param), torch.nn.init.calculate_gain(nonlinearity, param)
    assert got == want and type(got) is type(want)


@pytest.mark.parametrize("nonlinearity,param", [("leaky_relu", True), ("leaky_relu", "0.1"),
                                                ("leaky_relu", np.float32(0.1)), ("gelu", None), ("Relu", None)])
def test_calculate_gain_errors_like_torch(nonlinearity, param):
    with pytest.raises(ValueError) as theirs:
        torch.nn.init.calculate_gain(nonlinearity, param)
    with pytest.raises(ValueError) as ours:
        init.calculate_gain(nonlinearity, param)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("old,args", [("uniform", ()), ("normal", ()), ("constant", (0.5,)), ("eye", ()),
                                      ("xavier_uniform", ()), ("xavier_normal", ()), ("kaiming_uniform", ()),
                                      ("kaiming_normal", ()), ("orthogonal", ()), ("sparse", (0.5,))])
def test_deprecated_names_warn_like_torch_and_still_fill(old, args):
    w = tc.zeros(4, 6)
    with pytest.warns(FutureWarning, match=f"^`nn.init.{old}` is now deprecated in favor of `nn.init.{old}_`.$"):
        assert getattr(init, old)(w, *args) is w
    with pytest.warns(FutureWarning, match=f"^`nn.init.{old}` is now deprecated"):
        getattr(torch.nn.init, old)(torch.zeros(4, 6), *args)
    assert np.abs(_np(w)).sum() > 0
    with pytest.warns(FutureWarning):
        init.dirac(tc.zeros(2, 2, 3))


def test_public_names_match_torch():
    missing = {n for n in dir(torch.nn.init) if not n.startswith("_") and callable(getattr(torch.nn.init, n))
               and n.endswith("_")} - set(init.__all__)
    assert not missing


@pytest.mark.parametrize("name", ["orthogonal_", "eye_", "dirac_", "sparse_", "trunc_normal_", "calculate_gain"])
def test_signature_equals_torch(name):
    import inspect

    def signature(fn):
        return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]

    assert signature(getattr(init, name)) == signature(getattr(torch.nn.init, name))
