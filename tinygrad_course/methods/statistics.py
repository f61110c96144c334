"""Covariance and correlation matrices: `cov` and `corrcoef` (like torch)."""
from __future__ import annotations

import warnings

from ..factories import arange
from ..dtypes import type_name

METHOD_FUNCTIONS: tuple[str, ...] = ("cov", "corrcoef")
__all__: list[str] = []


def _observations(input, name):
    if input.ndim > 2:
        raise RuntimeError(f"{name}(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    return x if x.dtype.is_floating_point else x.float()


def _check_weights(weights, kind, observations, integral):
    if weights.ndim > 1:
        raise RuntimeError(f"cov(): expected {kind} to have one or fewer dimensions but got {kind} with "
                           f"{weights.ndim} dimensions")
    if weights.numel() != observations:
        raise RuntimeError(f"cov(): expected {kind} to have the same numel as there are observations in the input "
                           f"but got {weights.numel()} != {observations}")
    if integral and weights.dtype.is_floating_point:
        raise RuntimeError(f"cov(): expected fweights to have integral dtype but got fweights with "
                           f"{type_name(weights.dtype)} dtype")
    if not integral and not weights.dtype.is_floating_point:
        raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got aweights with "
                           f"{type_name(weights.dtype)} dtype")
    if bool((weights < 0).any()):
        raise RuntimeError(f"cov(): {kind} cannot be negative")


class StatisticsMethods:
    """Mixin with the covariance and correlation methods of `Tensor`."""

    __slots__ = ()

    def cov(self, *, correction=1, fweights=None, aweights=None):
        """Covariance matrix of the variables in the rows (observations in the columns), like `torch.cov`."""
        x = _observations(self, "cov")
        n = x.shape[1]
        weights = None
        if fweights is not None:
            _check_weights(fweights, "fweights", n, integral=True)
            weights = fweights
        if aweights is not None:
            _check_weights(aweights, "aweights", n, integral=False)
            weights = aweights if weights is None else weights * aweights
        if weights is None:
            mean = x.mean(1, keepdim=True)
            norm = n - correction
        else:
            weights = weights.to(x.dtype)
            total = weights.sum()
            mean = (x * weights).sum(1, keepdim=True) / total
            if correction == 0:
                norm = total
            elif aweights is None:
                norm = total - correction
            else:
                norm = total - correction * (weights * aweights).sum() / total
        if float(norm) <= 0:
            warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                          "observations.", UserWarning, stacklevel=2)
            norm = norm * 0 if hasattr(norm, "_data") else 0
        centered = x - mean
        weighted = centered if weights is None else centered * weights
        return (weighted @ centered.mT / norm).squeeze()

    def corrcoef(self):
        """Pearson correlation coefficients of the variables in the rows, like `torch.corrcoef`."""
        c = _observations(self, "corrcoef").cov()
        if c.ndim == 0:
            return c / c

        idx = arange(c.shape[0], device=c.device)
        std = c[idx, idx].sqrt()
        return (c / std[:, None] / std[None, :]).clamp(-1, 1)
