"""Scaled dot-product attention as one fused op: softmax(q k^T * scale + mask) v, with a hand-written backward.

`nn.functional.scaled_dot_product_attention` uses it for the common case (no dropout, float32/float64,
matching batch shapes). As PyTorch's CPU kernel, the forward keeps q, k and v but not the (..., L, S)
attention weights, which the backward computes again (one more product and softmax, far less memory held
between forward and backward); the backward is then five matrix products and one row reduction. The backward is written with framework
ops, so `create_graph=True` gives second derivatives (it then rebuilds the weights as recorded ops).
"""
from __future__ import annotations

from ..autograd.engine import Op
from ..tensor_base import _wrap
from .fused import Softmax


def _masked_scores_t(xp, q, k, mask, scale):
    """(q k^T * scale with the mask applied)^T as an array of shape (..., S, L): key-major, so that each
    query's scores are a column. NumPy reduces a short contiguous row one row at a time, but reduces over
    the second-last axis with vector instructions across the columns: the softmax's max and sum over the
    keys run about twice as fast in this layout, and every product below takes it without a copy.
    Bool masks keep where True, float masks are added."""
    s = xp.matmul(k, xp.swapaxes(q, -1, -2))
    s *= s.dtype.type(scale)  # in place: s is a fresh array, and one score array is all the step holds
    if mask is None:
        return s
    m = xp.swapaxes(mask._data, -1, -2)
    if mask.dtype.name == "bool":
        xp.copyto(s, s.dtype.type(-xp.inf), where=~m)
        return s
    s += m
    return s


def _attention_weights_t(xp, s, masked):
    """softmax over the keys (axis -2) of transposed scores; with a mask, queries whose keys are all masked
    give zeros (not NaN). `s` is overwritten (callers pass the fresh scores of `_masked_scores_t`)."""
    dead = None
    m = s.max(axis=-2, keepdims=True)  # one maximum per query, shared by the dead-query test and the softmax
    if masked:
        dead = m == -xp.inf
        if dead.any():
            s = xp.where(dead, xp.asarray(0, dtype=s.dtype), s)
            m = xp.where(dead, xp.asarray(0, dtype=m.dtype), m)
        else:
            dead = None
    p = xp.subtract(s, m, out=s)  # in place: the scores are a temporary of the caller's
    xp.exp(p, out=p)
    p /= p.sum(axis=-2, keepdims=True)
    if dead is not None:
        p = xp.where(dead, xp.asarray(0, dtype=p.dtype), p)
    return p, dead


class ScaledDotProductAttention(Op):
    """softmax(q k^T * scale + mask) v over the last two dims (PyTorch's CPU flash-attention node)."""

    node_name = "ScaledDotProductFlashAttentionForCpuBackward0"

    @classmethod
    def profile_name(cls) -> str:
        return "aten::scaled_dot_product_attention"

    @staticmethod
    def forward(ctx, q, k, v, mask, scale):
        xp = q._xp
        p_t, dead = _attention_weights_t(xp, _masked_scores_t(xp, q._data, k._data, mask, scale), mask is not None)
        if ctx.needs_input_grad:
            ctx.dead, ctx.mask, ctx.scale = (None if dead is None else xp.swapaxes(dead, -1, -2)), mask, scale
            ctx.save_for_backward(q, k, v)
        return xp.matmul(xp.swapaxes(p_t, -1, -2), v._data)

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
        p_t = _attention_weights_t(xp, _masked_scores_t(xp, q._data, k._data, ctx.mask, ctx.scale), ctx.mask is not None)[0]
        return _attention_grads_array(xp, g._data, p_t, q._data, k._data, v._data, ctx.scale, ctx.needs_input_grad)


def _attention_grads_array(xp, g, p_t, q, k, v, scale, need):
    """The backward's five products and reduction on arrays (`fused_backward`), with the weights and their
    gradient in the key-major layout of `_masked_scores_t` (p_t = p^T)."""
    gq = gk = gv = None
    if need[2]:
        gv = xp.matmul(p_t, g)
    if need[0] or need[1]:
        gs_t = xp.matmul(v, xp.swapaxes(g, -1, -2))  # (g v^T)^T
        # p * (gp - rowsum(gp * p)) * scale, transposed and in place on the fresh product
        gs_t -= (gs_t * p_t).sum(axis=-2, keepdims=True)
        gs_t *= p_t
        gs_t *= scale
        if need[0]:
            gq = xp.matmul(xp.swapaxes(gs_t, -1, -2), k)
        if need[1]:
            gk = xp.matmul(gs_t, q)
    return gq, gk, gv, None, None
