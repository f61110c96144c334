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


def _masked_scores(xp, q, k, mask, scale):
    """q k^T * scale with the mask applied (bool: keep where True, float: added), as arrays."""
    s = xp.matmul(q, xp.swapaxes(k, -1, -2))
    s *= s.dtype.type(scale)  # in place: s is a fresh array, and one score array is all the step holds
    if mask is None:
        return s
    if mask.dtype.name == "bool":
        xp.copyto(s, s.dtype.type(-xp.inf), where=~mask._data)
        return s
    s += mask._data
    return s


def _attention_weights(xp, s, masked):
    """softmax over the last axis; with a mask, rows whose keys are all masked give zeros (not NaN). `s` is
    overwritten (callers pass the fresh scores of `_masked_scores`)."""
    dead = None
    m = s.max(axis=-1, keepdims=True)  # one row maximum, shared by the dead-row test and the softmax
    if masked:
        dead = m == -xp.inf
        if dead.any():
            s = xp.where(dead, xp.asarray(0, dtype=s.dtype), s)
            m = xp.where(dead, xp.asarray(0, dtype=m.dtype), m)
        else:
            dead = None
    p = xp.subtract(s, m, out=s)  # in place: the scores are a temporary of the caller's
    xp.exp(p, out=p)
    p /= p.sum(axis=-1, keepdims=True)
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
        s = _masked_scores(xp, q._data, k._data, mask, scale)
        p, dead = _attention_weights(xp, s, mask is not None)
        if ctx.needs_input_grad:
            ctx.dead, ctx.mask, ctx.scale = dead, mask, scale
            ctx.save_for_backward(q, k, v)
        return xp.matmul(p, v._data)

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
        p = _attention_weights(xp, _masked_scores(xp, q._data, k._data, ctx.mask, ctx.scale), ctx.mask is not None)[0]
        return _attention_grads_array(xp, g._data, p, q._data, k._data, v._data, ctx.scale, ctx.needs_input_grad)


def _attention_grads_array(xp, g, p, q, k, v, scale, need):
    """The backward's five products and row reduction on arrays (`fused_backward`)."""
    gq = gk = gv = None
    if need[2]:
        gv = xp.matmul(xp.swapaxes(p, -1, -2), g)
    if need[0] or need[1]:
        gp = xp.matmul(g, xp.swapaxes(v, -1, -2))
        gs = gp  # p * (gp - rowsum(gp * p)) * scale, in place on the fresh gp (the same bits, fewer arrays)
        gs -= (gp * p).sum(axis=-1, keepdims=True)
        gs *= p
        gs *= scale
        if need[0]:
            gq = xp.matmul(gs, k)
        if need[1]:
            gk = xp.matmul(xp.swapaxes(gs, -1, -2), q)
    return gq, gk, gv, None, None
