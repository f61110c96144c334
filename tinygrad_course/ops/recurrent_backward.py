"""Backward through time of the fused recurrent layers (ops/recurrent.py), on arrays.

Each function walks the sequence backwards once and returns the gradients with respect to the gate
pre-activations of every step (`dGi`: of the input projections W_ih x + b_ih, `dGh`: of the hidden projections
W_hh h + b_hh, or None when they are the same), plus the gradients of the initial states. The weight
gradients then come from one matmul over all steps (done by the caller). Factors that do not depend on the
incoming gradient (activation derivatives) are computed for the whole sequence before the loop.

`mask` (T, B, 1), 1 where a step is valid and 0 past the end of a packed sequence (where the forward carried
the states over), or None: the gradient of a carried state goes straight to the previous step.
"""
from __future__ import annotations

__all__ = ["gru_backward", "lstm_backward", "rnn_backward"]


def _start(xp, d_state, shape, dtype):
    return xp.zeros(shape, dtype=dtype) if d_state is None else d_state


def lstm_backward(xp, d_out, d_h, d_c, hs, cs, saved, w_hh, w_hr, mask=None):
    """LSTM (gates i, f, g, o; optional projection w_hr). Returns (dG, None, dh0, dc0, dW_hr)."""
    acts, tanh_c, hfull = saved
    T, B, G = acts.shape
    H = G // 4
    deriv = acts * (1 - acts)  # sigmoid' for i, f, o; the g block is replaced by tanh'
    g_all = acts[..., 2 * H:3 * H]
    deriv[..., 2 * H:3 * H] = 1 - g_all * g_all
    oc = acts[..., 3 * H:] * (1 - tanh_c * tanh_c)  # d c_t / d h_t through the output gate
    dG = xp.empty_like(acts)
    dh = _start(xp, d_h, hs.shape[1:], acts.dtype)
    dc = _start(xp, d_c, (B, H), acts.dtype)
    dh_steps = xp.empty((T,) + hs.shape[1:], dtype=acts.dtype) if w_hr is not None else None
    for t in range(T - 1, -1, -1):
        dht = dh if d_out is None else dh + d_out[t]
        if mask is not None:
            carry_h, carry_c = dht * (1 - mask[t]), dc * (1 - mask[t])
            dht, dc = dht * mask[t], dc * mask[t]
        if w_hr is not None:
            dh_steps[t] = dht
            dht = dht @ w_hr
        a, dg = acts[t], dG[t]
        dcc = dht * oc[t]
        dcc += dc
        xp.multiply(dcc, a[:, 2 * H:3 * H], out=dg[:, :H])
        xp.multiply(dcc, cs[t], out=dg[:, H:2 * H])
        xp.multiply(dcc, a[:, :H], out=dg[:, 2 * H:3 * H])
        xp.multiply(dht, tanh_c[t], out=dg[:, 3 * H:])
        dg *= deriv[t]
        dc = dcc * a[:, H:2 * H]
        dh = dg @ w_hh
        if mask is not None:
            dh += carry_h
            dc += carry_c
    dw_hr = None
    if w_hr is not None:
        dw_hr = dh_steps.reshape(T * B, -1).T @ hfull.reshape(T * B, H)
    return dG, None, dh, dc, dw_hr


def gru_backward(xp, d_out, d_h, hs, saved, w_hh, mask=None):
    """GRU (gates r, z, n; n = tanh(gi_n + r * (W_hn h + b_hn)), h' = n + z * (h - n)). Returns (dGi, dGh, dh0)."""
    rz, n, ghn = saved
    T, B, H = n.shape
    r, z = rz[..., :H], rz[..., H:]
    a_n = (1 - z) * (1 - n * n)  # d n_pre / d h_t
    k_z = (hs[:-1] - n) * z * (1 - z)  # d z_pre / d h_t
    k_r = ghn * r * (1 - r)  # d r_pre / d n_pre
    dGi = xp.empty((T, B, 3 * H), dtype=n.dtype)
    dGh = xp.empty_like(dGi)
    dh = _start(xp, d_h, hs.shape[1:], n.dtype)
    for t in range(T - 1, -1, -1):
        dht = dh if d_out is None else dh + d_out[t]
        if mask is not None:
            carry = dht * (1 - mask[t])
            dht = dht * mask[t]
        di, dhh = dGi[t], dGh[t]
        dn = xp.multiply(dht, a_n[t], out=di[:, 2 * H:])
        xp.multiply(dht, k_z[t], out=di[:, H:2 * H])
        xp.multiply(dn, k_r[t], out=di[:, :H])
        dhh[:, :2 * H] = di[:, :2 * H]
        xp.multiply(dn, r[t], out=dhh[:, 2 * H:])
        dh = dht * z[t]
        dh += dhh @ w_hh
        if mask is not None:
            dh += carry
    return dGi, dGh, dh


def rnn_backward(xp, d_out, d_h, hs, w_hh, relu, mask=None):
    """Elman RNN, h' = tanh(pre) or relu(pre). Returns (dG, None, dh0)."""
    out = hs[1:]
    deriv = (out > 0).astype(out.dtype) if relu else 1 - out * out
    dG = xp.empty_like(out)
    dh = _start(xp, d_h, hs.shape[1:], out.dtype)
    for t in range(out.shape[0] - 1, -1, -1):
        dht = dh if d_out is None else dh + d_out[t]
        if mask is not None:
            carry = dht * (1 - mask[t])
            dht = dht * mask[t]
        xp.multiply(dht, deriv[t], out=dG[t])
        dh = dG[t] @ w_hh
        if mask is not None:
            dh += carry
    return dG, None, dh
