"""Distances and similarities in `tc.nn.functional`: normalize, cosine_similarity, pairwise_distance, pdist."""
from __future__ import annotations

from ...shapes import broadcast_shapes_checked
from ...tensor_base import _wrap


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """x / max(||x||_p, eps) along `dim`, like `F.normalize`."""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    result = input / denom
    return result if out is None else out.copy_(result)


def _broadcast(x1, x2):
    """x1 and x2 expanded to their common shape (what `tc.broadcast_tensors` gives), or PyTorch's error for
    shapes that do not broadcast."""
    shape = broadcast_shapes_checked(tuple(x1.shape), tuple(x2.shape), hint=False)
    return x1.expand(shape), x2.expand(shape)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 * x2) / (max(||x1||, eps) * max(||x2||, eps)) along `dim`, like `F.cosine_similarity`."""
    if not x1.dtype.is_floating_point and not x2.dtype.is_floating_point:
        kind = x1.type().split(".")[-1].replace("Tensor", "")
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {kind}")
    if not x1.dtype.is_floating_point:
        x1 = x1.to(x2.dtype)
    elif not x2.dtype.is_floating_point:
        x2 = x2.to(x1.dtype)
    x1, x2 = _broadcast(x1, x2)
    # Each vector is divided by its own norm first (as PyTorch does), so large inputs do not overflow;
    # the norms are clamped at eps without changing their gradient.
    n1, n2 = x1.norm(2, dim, keepdim=True), x2.norm(2, dim, keepdim=True)
    n1 = n1 + (n1.clamp_min(eps) - n1).detach()
    n2 = n2 + (n2.clamp_min(eps) - n2).detach()
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dim, like `F.pairwise_distance`."""
    last = max(x1.ndim, x2.ndim) - 1
    return (x1 - x2 + eps).norm(p, last, keepdim)


def pdist(input, p=2):
    """p-norm distances between all pairs of rows of a 2-D input (the upper triangle, row by row),
    like `F.pdist`."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    xp = input._xp
    rows, cols = xp.triu_indices(input.shape[0], 1)
    diff = input.index_select(0, _wrap(rows.astype(xp.int64))) - input.index_select(0, _wrap(cols.astype(xp.int64)))
    return diff.norm(p, 1)
