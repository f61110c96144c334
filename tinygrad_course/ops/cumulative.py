"""Cumulative ops along a dimension: cummax/cummin (values and indices), cumprod and logcumsumexp.
cummax/cummin and logcumsumexp scan in log2(n) vectorised steps where the array module has no
`accumulate` for them (CuPy). Backwards are framework ops, so double backward works.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..autograd.engine import Op
from ..dtypes import type_name
from ..shapes import normalize_dim
from .reduce import _sum_dtype
from .sorting import _at_least_1d, _PickAlongDim, comparable


def running_extreme(xp, data, d, largest):
    """Running max (or min) along `d` and where it was found, in log2(n) vectorised steps (a Hillis-Steele
    scan). Ties and NaNs go to the later element, as PyTorch's cummax/cummin do."""
    n, dtype = data.shape[d], data.dtype
    data = comparable(data)
    positions = xp.broadcast_to(xp.arange(n).reshape((n,) + (1,) * (data.ndim - d - 1)), data.shape)
    if xp is np:  # one pass with NumPy's accumulate (CuPy's supports add and multiply only)
        vals = (np.maximum if largest else np.minimum).accumulate(data, axis=d)  # NaN propagates
        took_over = data == vals  # ties take over, as does every NaN
        if data.dtype.kind == "f":
            took_over |= np.isnan(data)
        return vals.astype(dtype, copy=False), np.maximum.accumulate(np.where(took_over, positions, 0), axis=d)
    vals, idx, shift = data.copy(), positions.copy(), 1
    while shift < n:
        earlier = (slice(None),) * d + (slice(0, n - shift),)
        later = (slice(None),) * d + (slice(shift, None),)
        a, b = vals[earlier], vals[later]
        take_later = (b >= a) if largest else (b <= a)
        if data.dtype.kind == "f":
            take_later |= xp.isnan(b)
        new_vals, new_idx = xp.where(take_later, b, a), xp.where(take_later, idx[later], idx[earlier])
        vals[later], idx[later] = new_vals, new_idx
        shift *= 2
    return vals.astype(dtype, copy=False), idx


class Cummax(_PickAlongDim):
    node_name = "CummaxBackward0"
    accumulate = True

    @staticmethod
    def forward(ctx, x, dim, largest=True):
        d = normalize_dim(dim, x.ndim)
        vals, idx = running_extreme(x._xp, _at_least_1d(x._data), d, largest)
        return _PickAlongDim.finish(ctx, x, d, vals, idx)


class Cummin(Cummax):
    node_name = "CumminBackward0"


class Cumprod(Op):
    node_name = "CumprodBackward0"
    save_output = True

    @staticmethod
    def forward(ctx, x, dim, dtype=None):
        d = normalize_dim(dim, x.ndim)
        ctx.d, ctx.in_dtype = d, x.dtype
        ctx.save_for_backward(x)
        r = _at_least_1d(x._data).cumprod(axis=d, dtype=_sum_dtype(x, dtype).np_dtype)
        return r if x.ndim else r.reshape(())

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        if g.ndim == 0:
            return g.to(ctx.in_dtype)
        d, out = ctx.d, ctx.saved_output
        x = x.to(g.dtype)

        def reverse_cumsum(t):
            return t.flip(d).cumsum(d).flip(d)

        # d out_j / d x_i = out_j / x_i for j >= i wherever x_i != 0.
        zero = x == 0
        grad = (reverse_cumsum(g * out) / x.masked_fill(zero, 1.0)).masked_fill(zero, 0.0)
        # At the first zero of a slice the other factors are the running product with that zero set to 1;
        # after it every product holds the zero, so later zeros get no gradient.
        first_zero = zero & (zero.cumsum(d) == 1)
        at_first_zero = reverse_cumsum(g * x.masked_fill(first_zero, 1.0).cumprod(d))
        grad = at_first_zero.where(first_zero, grad)
        return grad if grad.dtype is ctx.in_dtype else grad.to(ctx.in_dtype)


class Logcumsumexp(Op):
    node_name = "LogcumsumexpBackward0"
    save_output = True

    @staticmethod
    def forward(ctx, x, dim):
        if x.dtype.category != 2:
            raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for '{type_name(x.dtype)}'")
        d = normalize_dim(dim, x.ndim)
        xp, data = x._xp, _at_least_1d(x._data)
        n, out, shift = data.shape[d], data.copy(), 1
        if xp is np and n:  # one pass with NumPy's accumulate (CuPy's supports add and multiply only)
            out, shift = np.logaddexp.accumulate(data, axis=d), n
        while shift < n:  # a log2(n)-step scan with logaddexp
            earlier = (slice(None),) * d + (slice(0, n - shift),)
            later = (slice(None),) * d + (slice(shift, None),)
            out[later] = xp.logaddexp(out[earlier], out[later])
            shift *= 2
        ctx.d = d
        ctx.save_for_backward(x)
        return out if x.ndim else out.reshape(())

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        if g.ndim == 0:
            return g
        d, out = ctx.d, ctx.saved_output

        def reverse_logcumsumexp(t):
            return t.flip(d).logcumsumexp(d).flip(d)

        # grad_i = sum_{j >= i} g_j exp(x_i - out_j), summed in log space separately for g > 0 and g < 0
        # so that nothing overflows (the formula PyTorch and TensorFlow use). log(0) is the lowest finite
        # value rather than -inf, so that the second derivative meets no inf - inf.
        lowest = float(_dt.finfo(g.dtype).min)

        def log_part(h):
            positive = h > 0
            return h.masked_fill(~positive, 1.0).log().masked_fill(~positive, lowest)

        return ((reverse_logcumsumexp(log_part(g) - out) + x).exp()
                - (reverse_logcumsumexp(log_part(-g) - out) + x).exp())
