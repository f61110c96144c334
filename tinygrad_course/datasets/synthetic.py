"""Small synthetic 2-D classification sets for quick demos: moons, spirals, blobs.

Each function returns `(X, y)`: a float32 tensor of shape (n_samples, n_features) and int64 labels.
Pass `generator=tc.Generator().manual_seed(0)` (or call `tc.manual_seed`) for reproducible data.
"""
from __future__ import annotations

import numpy as np

from ..factories import from_numpy
from ..generator import _generator


def _rng(generator):
    return np.random.default_rng(int(_generator(generator).integers(0, 2 ** 63 - 1, ())))


def _split_counts(n, k):
    return [n // k + (1 if i < n % k else 0) for i in range(k)]


def make_moons(n_samples=200, noise=0.1, generator=None):
    """Two interleaving half circles (labels 0 and 1), with Gaussian noise of std `noise`."""
    rng = _rng(generator)
    n_out, n_in = _split_counts(n_samples, 2)
    t_out, t_in = np.linspace(0, np.pi, n_out), np.linspace(0, np.pi, n_in)
    X = np.vstack([np.stack([np.cos(t_out), np.sin(t_out)], 1),
                   np.stack([1 - np.cos(t_in), 1 - np.sin(t_in) - 0.5], 1)])
    y = np.concatenate([np.zeros(n_out), np.ones(n_in)]).astype(np.int64)
    X = X + rng.normal(0.0, noise, X.shape)
    order = rng.permutation(n_samples)
    return from_numpy(X[order].astype(np.float32)), from_numpy(y[order])


def make_spirals(n_samples=300, n_classes=3, noise=0.2, generator=None):
    """`n_classes` interleaved spiral arms (the classic "not linearly separable" picture)."""
    rng = _rng(generator)
    xs, ys = [], []
    for c, n in enumerate(_split_counts(n_samples, n_classes)):
        r = np.linspace(0.0, 1.0, n)
        theta = np.linspace(c * 4.0, (c + 1) * 4.0, n) + rng.normal(0.0, noise, n)
        xs.append(np.stack([r * np.sin(theta), r * np.cos(theta)], 1))
        ys.append(np.full(n, c, dtype=np.int64))
    X, y = np.vstack(xs), np.concatenate(ys)
    order = rng.permutation(n_samples)
    return from_numpy(X[order].astype(np.float32)), from_numpy(y[order])


def make_blobs(n_samples=200, centers=3, n_features=2, cluster_std=1.0, center_box=(-10.0, 10.0), generator=None):
    """Gaussian clusters: `centers` is a count (random centres in `center_box`) or an array of centres."""
    rng = _rng(generator)
    if isinstance(centers, int):
        centers = rng.uniform(center_box[0], center_box[1], (centers, n_features))
    centers = np.asarray(centers, dtype=np.float64)
    xs, ys = [], []
    for c, n in enumerate(_split_counts(n_samples, len(centers))):
        xs.append(rng.normal(centers[c], cluster_std, (n, centers.shape[1])))
        ys.append(np.full(n, c, dtype=np.int64))
    X, y = np.vstack(xs), np.concatenate(ys)
    order = rng.permutation(n_samples)
    return from_numpy(X[order].astype(np.float32)), from_numpy(y[order])
