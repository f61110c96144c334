"""`torch.histogram` (bins as a count or as edges, range, weight, density) and PyTorch's NumPy argument
names (`axis=` for `dim=`, `keepdims=` for `keepdim=`), compared with PyTorch."""
import numpy as np
import pytest
import torch

import tinygrad_course as tc


def _inputs():
    g = torch.Generator().manual_seed(0)
    return [torch.randn(1000, generator=g), torch.rand(37, dtype=torch.float64, generator=g),
            torch.tensor([2.0, 2.0]), torch.tensor([]), torch.tensor([0.1, 0.5, 0.25, 1.0, 3.0, -1.0])]


def _same(ours, theirs):
    for a, b in zip(ours, theirs):
        assert a.dtype.itemsize == b.dtype.itemsize and tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.cpu().numpy(), b.numpy(), rtol=1e-6, atol=0)
    assert repr(ours).startswith("tc.return_types.histogram(\nhist=")


@pytest.mark.parametrize("bins", [1, 3, 10, 33])
def test_histogram_with_a_bin_count_matches_pytorch(bins):
    for x in _inputs():
        w = np.linspace(0, 1, x.numel()).astype(x.numpy().dtype)
        for kw in ({}, {"range": (-0.3, 0.77)}, {"density": True}, {"range": (-0.3, 0.77), "density": True}):
            _same(tc.histogram(tc.tensor(x.numpy()), bins, **kw), torch.histogram(x, bins, **kw))
        _same(tc.tensor(x.numpy()).histogram(bins, weight=tc.tensor(w)), x.histogram(bins, weight=torch.tensor(w)))


def test_histogram_with_edges_matches_pytorch():
    for x in _inputs():
        edges = np.array([-1.0, 0.0, 0.25, 1.0], x.numpy().dtype)
        for density in (False, True):
            _same(tc.histogram(tc.tensor(x.numpy()), tc.tensor(edges), density=density),
                  torch.histogram(x, torch.tensor(edges), density=density))


def test_histogram_errors():
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        tc.histogram(tc.tensor([1, 2]), 3)
    with pytest.raises(RuntimeError, match="bins must be > 0"):
        tc.histogram(tc.tensor([1.0]), 0)
    with pytest.raises(RuntimeError, match="min should not exceed max"):
        tc.histogram(tc.tensor([1.0]), 3, range=(2.0, 1.0))
    with pytest.raises(RuntimeError, match="is not finite"):
        tc.histogram(tc.tensor([1.0, float("nan")]), 3)


CALLS = [
    lambda m, P: P.sum(1, keepdims=True),
    lambda m, P: P.mean(axis=0),
    lambda m, P: m.sum(P, axis=1, keepdims=True),
    lambda m, P: P.max(axis=1, keepdims=True)[0],
    lambda m, P: P.std(axis=0, keepdims=True),
    lambda m, P: P.var(axis=1),
    lambda m, P: P.amax(axis=0, keepdims=True),
    lambda m, P: P.argmax(axis=1, keepdims=True),
    lambda m, P: P.logsumexp(axis=1, keepdims=True),
    lambda m, P: P.softmax(axis=1),
    lambda m, P: P.cumsum(axis=0),
    lambda m, P: P.sort(axis=0)[0],
    lambda m, P: P.unsqueeze(axis=0),
    lambda m, P: m.cat([P, P], axis=1),
    lambda m, P: m.stack([P, P], axis=2),
    lambda m, P: P.any(axis=0),
    lambda m, P: P.prod(axis=1, keepdims=True),
    lambda m, P: P.median(axis=1).values,
]


@pytest.mark.parametrize("call", CALLS)
def test_numpy_argument_names_are_accepted_where_pytorch_accepts_them(call):
    P = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    ours, theirs = call(tc, tc.tensor(P)), call(torch, torch.tensor(P))
    np.testing.assert_allclose(ours.cpu().numpy(), theirs.numpy(), rtol=1e-6)
    assert tuple(ours.shape) == tuple(theirs.shape)


def test_a_name_and_its_numpy_spelling_together_are_refused():
    with pytest.raises(TypeError, match="multiple values for argument 'keepdim'"):
        tc.ones(2, 3).sum(1, keepdim=True, keepdims=True)
    with pytest.raises(TypeError, match="multiple values for argument 'dim'"):
        tc.ones(2, 3).mean(dim=0, axis=0)
