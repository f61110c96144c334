"""Scaled dot-product attention as one fused op: softmax(q k^T * scale + mask) v, with a hand-written backward.

`nn.functional.scaled_dot_product_attention` uses it for the common case (no dropout, float32/float64,
matching batch shapes). As PyTorch's CPU kernel, the forward keeps q, k and v and two numbers per query (its
maximum score and 1 / sum of exponentials, where PyTorch keeps the log-sum-exp), not the (..., L, S)
attention weights: the backward computes the exponentials again (one more product and exp2, no reduction,
far less memory held between forward and backward), then five matrix products and one sum over the keys.
Output and input gradients are stored heads-last like PyTorch's. The backward is written with framework
ops, so `create_graph=True` gives second derivatives (it then rebuilds the weights as recorded ops).
"""
from __future__ import annotations

import math

import numpy as np

from .. import seams
from ..autograd.autocast_state import autocast_state as _autocast
from ..autograd.engine import Op, profilers
from ..tensor_base import _wrap
from .fused import Softmax


_max_reduce, _add_reduce = np.maximum.reduce, np.add.reduce  # ndarray.max/.sum without their Python wrappers
_LOG2E = 1.0 / math.log(2.0)
_EXP_SAFE = 80.0  # exp(s) for |s| <= 80 is a normal float32 (its range is about e^-87 .. e^88)
_FEW_SCORES = 256  # per head: below, the plain reductions cost less than the calls that avoid them


def _scaled_q(xp, q, k, mask, scale):
    """(q * scale, whether every score is known to lie within +-80): from the largest row norms of q * scale
    and k (|q_i . k_j| <= |q_i| |k_j|), with no mask or a bool one. Such scores need no maximum subtracted
    in the softmax, as they cannot overflow and a live query's sum of exponentials stays above e^-80, and
    they are exponentiated as 2^(s log2 e) (`_exponentials_t`); then q * scale * log2(e) is returned. NaN or
    infinite inputs are not bounded."""
    qs = q * q.dtype.type(scale)
    if (mask is not None and mask.dtype.name != "bool") or q.shape[-2] * k.shape[-2] < _FEW_SCORES or k.size == 0:
        return qs, False  # few scores per head (generation: one query) are not worth the bound's six calls
    ones = xp.ones((qs.shape[-1], 1), dtype=qs.dtype)
    bounded = bool(xp.matmul(qs * qs, ones).max() * xp.matmul(k * k, ones).max() <= _EXP_SAFE * _EXP_SAFE)
    if bounded:
        qs *= qs.dtype.type(_LOG2E)
    return qs, bounded


def _exponentials_t(xp, qs, k, mask, m):
    """The softmax's exponentials, transposed to shape (..., S, L): key-major, so that each query's scores
    are a column. NumPy reduces a short contiguous row one row at a time, but reduces over the second-last
    axis with vector instructions across the columns: the maximum over the keys runs about twice as fast
    in this layout, and every product below takes it without a copy. Scaling q (L x E numbers) rather than
    the scores (L x S) changes a score by a rounding at most.

    `m` says which of two ways (`_scaled_q`): bounded scores (m None) are 2^(k qs^T), with qs in units of
    log2(e), since NumPy's float32 exp2 runs twice as fast as its exp on arguments within its range, a bool
    mask then multiplying them by 0 or 1. Otherwise the mask is added (a bool one as 0 / -inf, as PyTorch
    does), `m` is each query's maximum (True: take it here) and the result exp(s - m). Returns the
    exponentials (a fresh array) and m."""
    s = xp.matmul(k, xp.swapaxes(qs, -1, -2))
    if m is None:
        xp.exp2(s, out=s)
        if mask is not None:
            _combine(xp, s, xp.swapaxes(mask._data, -1, -2), xp.multiply)
        return s, None
    if mask is not None:
        mt = xp.swapaxes(mask._data, -1, -2)
        if mask.dtype.name == "bool":
            mt = xp.where(mt, s.dtype.type(0), s.dtype.type(-xp.inf))
        _combine(xp, s, mt, xp.add)
    if m is True:
        m = _key_max(xp, s)  # one maximum per query
        if mask is not None:
            dead = m == -xp.inf
            if dead.any():
                m = xp.where(dead, xp.asarray(0, dtype=m.dtype), m)  # exp(-inf - 0) = 0 for every key
    xp.subtract(s, m, out=s)
    xp.exp(s, out=s)
    return s, m


def _combine(xp, s, mt, op):
    """s = op(s, mt) in place for a mask mt broadcast over s; one (S, L) mask for every batch and head is
    applied to rows of S * L numbers, not of L numbers."""
    n = s.shape[-2] * s.shape[-1]
    if mt.size == n and mt.shape[-2:] == s.shape[-2:] and s.flags.c_contiguous:
        flat = s.reshape(-1, n)
        op(flat, mt.reshape(n).astype(s.dtype, copy=False), out=flat)
    else:
        op(s, mt, out=s, casting="unsafe")


def _key_max(xp, s):
    """s.max(axis=-2, keepdims=True), as a tree of element-wise maxima of halves: each step runs over
    blocks of (S/2) * L contiguous numbers, where NumPy's reduction over axis -2 steps through rows of L."""
    n = s.shape[-2]
    if n * s.shape[-1] < _FEW_SCORES or not s.flags.c_contiguous:
        return s.max(axis=-2, keepdims=True)
    h = (n + 1) // 2
    m = xp.maximum(s[..., :h, :], s[..., n - h:, :])  # for odd n the middle key is in both halves
    while h > 1:
        k = (h + 1) // 2
        m = xp.maximum(m[..., :k, :], m[..., h - k:, :])
        h = k
    return m


def _key_sum(xp, a):
    """a.sum(axis=-2, keepdims=True) as a product with a row of ones: one matrix-vector product per head
    instead of NumPy's pass over rows of L numbers (about 4 times faster at L = 64)."""
    if a.shape[-2] * a.shape[-1] < _FEW_SCORES:
        return a.sum(axis=-2, keepdims=True)
    return xp.matmul(xp.ones((1, a.shape[-2]), dtype=a.dtype), a)


def _inverse_sums(xp, e, masked):
    """1 / (each query's sum of exponentials); queries whose keys are all masked (sum 0) get 0, so that their
    weights, output and gradients are zeros (not NaN), as in PyTorch."""
    total = _key_sum(xp, e)  # > 0 for a live query
    if not masked:
        return 1.0 / total
    dead = total == 0
    inv = 1.0 / xp.where(dead, total.dtype.type(1), total)
    inv[dead] = 0
    return inv


def _heads_last(xp, shape, dtype):
    """An empty array of `shape` (..., H, L, E) stored as (..., L, H, E), as PyTorch's CPU kernel lays out
    its output and input gradients: the usual `y.transpose(1, 2).reshape(B, L, H * E)` that merges the
    heads is then a view, not a copy, and so is the reshape of the gradients back to (B, L, 3C) rows."""
    if len(shape) < 3:
        return xp.empty(shape, dtype=dtype)
    return xp.swapaxes(xp.empty(shape[:-3] + (shape[-2], shape[-3], shape[-1]), dtype=dtype), -2, -3)


def _product(xp, a, b):
    """a @ b written into a `_heads_last` array (a BLAS product writes any row stride at no cost)."""
    if xp.__name__ != "numpy" or a.shape[-2] * b.shape[-1] < _FEW_SCORES:
        return xp.matmul(a, b)
    shape = a.shape[:-1] + (b.shape[-1],)  # the fused op's operands share their batch shape
    return xp.matmul(a, b, out=_heads_last(xp, shape, xp.result_type(a, b)))


def one_query_unrecorded(q, k, v, scale):
    """The fused op's output array for one query per head (generation with a key/value cache: q is
    (..., 1, E), k and v (..., S, E)) and no mask, for a call that records no graph (the caller checks, and
    that the op could take the inputs) while nothing intercepts ops (no profiler, autocast or build-mode
    component), on NumPy arrays; None for every other case, which the op handles. The same calls as the
    op's forward for so few scores (`_scaled_q`, `_exponentials_t`, `_inverse_sums`, `_product`), hence the
    same bits, without the op's bookkeeping and helpers."""
    if profilers or _autocast.active or seams.ACTIVE:
        return None
    qd, kd, vd = q._data, k._data, v._data
    if (type(qd) is not np.ndarray or type(kd) is not np.ndarray or type(vd) is not np.ndarray
            or qd.shape[-2] != 1 or not 0 < kd.shape[-2] < _FEW_SCORES):
        return None
    s = np.matmul(kd, (qd * qd.dtype.type(scale)).swapaxes(-1, -2))  # (..., S, 1): key-major scores
    s -= _max_reduce(s, axis=-2, keepdims=True)
    np.exp(s, out=s)
    inv = 1.0 / _add_reduce(s, axis=-2, keepdims=True)
    out = np.matmul(s.swapaxes(-1, -2), vd)
    out *= inv.swapaxes(-1, -2)
    return out


class ScaledDotProductAttention(Op):
    """softmax(q k^T * scale + mask) v over the last two dims (PyTorch's CPU flash-attention node)."""

    node_name = "ScaledDotProductFlashAttentionForCpuBackward0"

    @classmethod
    def profile_name(cls) -> str:
        return "aten::scaled_dot_product_attention"

    @staticmethod
    def forward(ctx, q, k, v, mask, scale):
        xp = q._xp
        qs, bounded = _scaled_q(xp, q._data, k._data, mask, scale)
        e_t, m = _exponentials_t(xp, qs, k._data, mask, None if bounded else True)
        inv = _inverse_sums(xp, e_t, mask is not None)
        if ctx.needs_input_grad:
            # besides q, k and v only each query's max (None when bounded) and 1 / sum (L numbers per head), as
            # PyTorch keeps its log-sum-exp: the backward rebuilds the exponentials from them without reductions
            ctx.mask, ctx.scale, ctx.row_max, ctx.row_inv = mask, scale, m, inv
            ctx.dead = None
            if mask is not None and not inv.all():
                ctx.dead = xp.swapaxes(inv == 0, -1, -2)
            ctx.save_for_backward(q, k, v)
        out = _product(xp, xp.swapaxes(e_t, -1, -2), v._data)
        out *= xp.swapaxes(inv, -1, -2)
        return out

    @staticmethod
    def backward(ctx, g):
        q, k, v = ctx.saved_tensors
        s = q @ k.transpose(-2, -1) * ctx.scale  # the weights again, as recorded ops of q and k
        mask = ctx.mask
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf")) if mask.dtype.name == "bool" else s + mask
        if ctx.dead is not None:
            dead = _wrap(ctx.dead)
            p = Softmax.apply(s.masked_fill(dead, 0.0), -1).masked_fill(dead, 0.0)
        else:
            p = Softmax.apply(s, -1)
        need = ctx.needs_input_grad
        gq = gk = gv = None
        if need[2]:
            gv = p.transpose(-2, -1) @ g
        if need[0] or need[1]:
            gp = g @ v.transpose(-2, -1)
            gs = p * (gp - (gp * p).sum(-1, keepdim=True)) * ctx.scale
            if need[0]:
                gq = gs @ k
            if need[1]:
                gk = gs.transpose(-2, -1) @ q
        return gq, gk, gv, None, None

    @staticmethod
    def fused_backward(ctx, g):
        q, k, v = ctx.saved_tensors
        if g.dtype is not q.dtype:
            return NotImplemented
        xp = q._xp
        m = ctx.row_max
        qs = q._data * q._data.dtype.type(ctx.scale)
        if m is None:  # bounded scores, as `_scaled_q` computed them
            qs *= qs.dtype.type(_LOG2E)
        e_t, _ = _exponentials_t(xp, qs, k._data, ctx.mask, m)  # the forward's, bit for bit
        grads = _attention_grads_array(xp, g._data, e_t, ctx.row_inv, qs, k._data, v._data, ctx.scale,
                                       ctx.needs_input_grad)
        gk = grads[1]
        if m is None and gk is not None:
            gk *= gk.dtype.type(1.0 / _LOG2E)  # qs held q * scale * log2(e)
        return grads


def _attention_grads_array(xp, g, e_t, inv, qs, k, v, scale, need):
    """The backward's products and reduction on arrays (`fused_backward`), with the unnormalised weights
    e in the key-major layout of `_exponentials_t` (weights p^T = e_t * inv) and qs = q * scale.

    With gn = g * inv (each query's output gradient over its sum): gv = p^T g = e_t gn, and the scores'
    gradient p * (gp - rowsum(gp * p)), gp = g v^T, is e * (a - inv * rowsum(a * e)) with a = gn v^T."""
    gq = gk = gv = None
    gn = g * xp.swapaxes(inv, -1, -2)
    if need[2]:
        gv = _product(xp, e_t, gn)
    if need[0] or need[1]:
        gs_t = xp.matmul(v, xp.swapaxes(gn, -1, -2))  # a^T, key-major
        d = _key_sum(xp, gs_t * e_t)
        d *= inv
        gs_t -= d
        gs_t *= e_t  # the gradient of the unscaled scores q k^T / scale, transposed
        if need[0]:
            gq = _product(xp, xp.swapaxes(gs_t, -1, -2), k)
            gq *= gq.dtype.type(scale)
        if need[1]:
            gk = _product(xp, gs_t, qs)
    return gq, gk, gv, None, None
