"""Backward through time of the fused recurrent layers (ops/recurrent.py), on arrays.

Each function walks the sequence backwards once and returns the gradients with respect to the gate
pre-activations of every step (`dGi`: of the input projections W_ih x + b_ih; `dGh`: of the hidden projections
W_hh h + b_hh where they differ, i.e. GRU's n block, else None), plus the gradients of the initial states. The
weight gradients then come from one matmul over all steps (done by the caller). Factors that do not depend on
the incoming gradient (activation derivatives) are computed for the whole sequence before the loop, into the
array of the result itself (fewer large temporaries: less memory to allocate and fault in).

Layouts: like the forward loops, the loops here are gate-major (see ops/recurrent.py): the saved states and
activations are (T, features, B), each gate a contiguous block of rows, and the step's gradient goes back
through the weights as W_hh.T @ dG (H, B). The incoming gradients (d_out (T, B, Hout), d_h (B, Hout), d_c) and
the results (dGi (T, B, G), dGh, dh0, dc0) are batch-major, as the caller uses them; `swap_last` converts.

`mask` (T, 1, B), 1 where a step is valid and 0 past the end of a packed sequence (where the forward carried
the states over), or None: the gradient of a carried state goes straight to the previous step.
"""
from __future__ import annotations

__all__ = ["gru_backward", "lstm_backward", "rnn_backward", "swap_last"]


def swap_last(xp, a):
    """(T, X, Y) -> (T, Y, X) as a C-contiguous copy: between batch-major and gate-major."""
    return xp.ascontiguousarray(a.transpose(0, 2, 1))


def _start(xp, d_state, shape, dtype):
    """The gradient of the final state, gate-major (shape), zeros when it has none."""
    return xp.zeros(shape, dtype=dtype) if d_state is None else xp.ascontiguousarray(d_state.T)


def _batch_major(xp, state):
    """A state's gradient (H, B) back in the caller's layout (B, H)."""
    return xp.ascontiguousarray(state.T)


def lstm_backward(xp, d_out, d_h, d_c, hs, cs, saved, w_hh, w_hr, mask=None):
    """LSTM (gates i, f, g, o; optional projection w_hr). Returns (dG, None, dh0, dc0, dW_hr)."""
    acts, tanh_c, hfull = saved
    T, G, B = acts.shape
    H = G // 4
    # dG starts as the factors of each step's gradient that do not depend on the incoming one: the activation
    # derivative (sigmoid' = s (1 - s) for i, f, o; tanh' = 1 - g^2 for g) times the other factor of the
    # product the gate enters (g, c_{t-1}, i and tanh(c_t)); the loop then multiplies by d c_t or d h_t
    dG = xp.subtract(1, acts)
    dG *= acts
    d_g = dG[:, 2 * H:3 * H]
    xp.multiply(acts[:, 2 * H:3 * H], acts[:, 2 * H:3 * H], out=d_g)
    xp.subtract(1, d_g, out=d_g)
    dG[:, :H] *= acts[:, 2 * H:3 * H]
    dG[:, H:2 * H] *= cs[:-1]
    d_g *= acts[:, :H]
    dG[:, 3 * H:] *= tanh_c
    oc = tanh_c * tanh_c  # d c_t / d h_t through the output gate: o (1 - tanh(c_t)^2)
    xp.subtract(1, oc, out=oc)
    oc *= acts[:, 3 * H:]
    d_out = None if d_out is None else swap_last(xp, d_out)
    dh = _start(xp, d_h, hs.shape[1:], acts.dtype)
    dc = _start(xp, d_c, (H, B), acts.dtype)
    dh_steps = xp.empty((T,) + hs.shape[1:], dtype=acts.dtype) if w_hr is not None else None
    for t in range(T - 1, -1, -1):
        dht = dh if d_out is None else dh + d_out[t]
        if mask is not None:
            carry_h, carry_c = dht * (1 - mask[t]), dc * (1 - mask[t])
            dht, dc = dht * mask[t], dc * mask[t]
        if w_hr is not None:
            dh_steps[t] = dht
            dht = w_hr.T @ dht
        dg = dG[t]
        dcc = dht * oc[t]
        dcc += dc
        ifg = dg[:3 * H].reshape(3, H, B)  # i, f, g reach h_t through c_t, o directly
        ifg *= dcc
        dg[3 * H:] *= dht
        dc = dcc * acts[t, H:2 * H]
        dh = w_hh.T @ dg
        if mask is not None:
            dh += carry_h
            dc += carry_c
    dw_hr = None
    if w_hr is not None:
        dw_hr = swap_last(xp, dh_steps).reshape(T * B, -1).T @ swap_last(xp, hfull).reshape(T * B, H)
    return swap_last(xp, dG), None, _batch_major(xp, dh), _batch_major(xp, dc), dw_hr


def gru_backward(xp, d_out, d_h, hs, saved, w_hh, mask=None):
    """GRU (gates r, z, n; n = tanh(gi_n + r * (W_hn h + b_hn)), h' = n + z * (h - n)). saved: the forward's
    activations (T, 3H, B) (r, z, n) and W_hn h + b_hn (T, H, B). Returns (dGi, dGh_n, dh0): the gradient of
    the hidden projections equals dGi but in the n block, which is dGh_n (T, B, H)."""
    acts, ghn = saved
    T, G, B = acts.shape
    H = G // 3
    r, z, n = acts[:, :H], acts[:, H:2 * H], acts[:, 2 * H:]
    # dGi starts as d (r, z, n pre-activations) / d h_t, which the loop multiplies by d h_t
    dGi = xp.empty_like(acts)
    one_z = xp.subtract(1, z)
    a_n = dGi[:, 2 * H:]  # (1 - z) (1 - n^2)
    xp.multiply(n, n, out=a_n)
    xp.subtract(1, a_n, out=a_n)
    a_n *= one_z
    k_z = dGi[:, H:2 * H]  # (h_{t-1} - n) z (1 - z)
    xp.subtract(hs[:-1], n, out=k_z)
    k_z *= z
    k_z *= one_z
    k_r = dGi[:, :H]  # a_n (W_hn h + b_hn) r (1 - r)
    xp.subtract(1, r, out=k_r)
    k_r *= r
    k_r *= ghn
    k_r *= a_n
    d_out = None if d_out is None else swap_last(xp, d_out)
    dh = _start(xp, d_h, hs.shape[1:], acts.dtype)
    dhh = xp.empty((G, B), dtype=acts.dtype)
    for t in range(T - 1, -1, -1):
        dht = dh if d_out is None else dh + d_out[t]
        if mask is not None:
            carry = dht * (1 - mask[t])
            dht = dht * mask[t]
        di = dGi[t]
        rzn = di.reshape(3, H, B)
        rzn *= dht
        dhh[:2 * H] = di[:2 * H]
        xp.multiply(di[2 * H:], r[t], out=dhh[2 * H:])
        dh = dht * z[t]
        dh += w_hh.T @ dhh
        if mask is not None:
            dh += carry
    dGh_n = swap_last(xp, dGi[:, 2 * H:] * r)
    return swap_last(xp, dGi), dGh_n, _batch_major(xp, dh)


def rnn_backward(xp, d_out, d_h, hs, w_hh, relu, mask=None):
    """Elman RNN, h' = tanh(pre) or relu(pre). Returns (dG, None, dh0)."""
    out = hs[1:]
    dG = (out > 0).astype(out.dtype) if relu else xp.subtract(1, out * out)  # the activation's derivative
    d_out = None if d_out is None else swap_last(xp, d_out)
    dh = _start(xp, d_h, hs.shape[1:], out.dtype)
    for t in range(out.shape[0] - 1, -1, -1):
        dht = dh if d_out is None else dh + d_out[t]
        if mask is not None:
            carry = dht * (1 - mask[t])
            dht = dht * mask[t]
        dG[t] *= dht
        dh = w_hh.T @ dG[t]
        if mask is not None:
            dh += carry
    return swap_last(xp, dG), None, _batch_major(xp, dh)
