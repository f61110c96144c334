"""Fused recurrent layers: one LSTM, GRU or Elman RNN layer (one direction) over a whole sequence as one op.

What `torch.nn.LSTM/GRU/RNN` compute per layer and direction, done the way PyTorch's CPU kernels do it: the
input projection of every time step is one matmul before the loop, each step is one matmul of the hidden
state with the stacked gate weights plus a few whole-array element-wise operations, and the backward through
time is written by hand (one graph node for the whole sequence, not one per gate op). Arrays go through the
tensors' array module (`x._xp`, NumPy or CuPy).

Inside the loops the arrays are gate-major, the transpose of what the op takes and returns: a step's gate
pre-activations are (G, B) = W_hh @ h with h (H, B), rather than h @ W_hh.T (B, G). Each gate (i, f, g, o) is
then a contiguous block of rows, so the per-gate element-wise operations run on contiguous memory instead of
column slices (about twice as fast for these small arrays), and the matmul with the weights as stored is a bit
faster too (measured with OpenBLAS, B=16, H=128). The inputs, outputs and gradients keep the batch-major
layout; the conversions (`swap_last`) are one copy per array and sequence.

The hand-written backward is used when the backward is not itself recorded. Under `create_graph=True` the
backward recomputes the layer with framework ops (`reference_sequence`) and differentiates that, so second
derivatives through the layer are exact, at the speed of the unfused path.
"""
from __future__ import annotations

from ..autograd.engine import grad as _autograd_grad
from ..autograd.engine import Op
from .concat import stack
from .lowp import _LOW
from .recurrent_backward import gru_backward, lstm_backward, rnn_backward, swap_last

__all__ = ["recurrent_sequence", "reference_sequence"]


def _sigmoid_(xp, a):
    """sigmoid in place, as 0.5 * tanh(0.5 a) + 0.5 (one transcendental, never overflows)."""
    a *= 0.5
    xp.tanh(a, out=a)
    a *= 0.5
    a += 0.5
    return a


def _lstm_gate_scale(xp, H, dtype):
    """0.5 for the sigmoid gates i, f, o and 1 for g: sigmoid(v) = 0.5 * tanh(0.5 v) + 0.5, so with the
    weights and biases pre-scaled by this, one tanh over all four gates (then a scale and shift) does it."""
    scale = xp.full(4 * H, 0.5, dtype=dtype)
    scale[2 * H:3 * H] = 1
    return scale


def _full_column(xp, col, B):
    """col (n,) repeated over B columns as a C-contiguous (n, B) array: adding or multiplying it runs faster
    than broadcasting a column (n, 1)."""
    full = xp.empty((col.shape[0], B), dtype=col.dtype)
    full[...] = col[:, None]
    return full


def _lstm_forward(xp, gi, h0, c0, w_hh, w_hr, mask, keep):
    """Gate-major (see the module docstring). gi: (T, 4H, B) input projections with both biases and w_hh
    (4H, H) the hidden weights, both pre-scaled by _lstm_gate_scale; w_hr (Hout, H) the projection or None;
    h0 (Hout, B), c0 (H, B); mask (T, 1, B) or None. Each step's gate activations overwrite its input
    projections in gi. Returns the states (T+1, Hout, B) with h0 first, the cell states (T+1, H, B) and, if
    `keep`, what the backward needs. Where `mask` is False the states stay as they were (finished sequences of a
    packed batch)."""
    T, G, B = gi.shape
    H = G // 4
    dt = gi.dtype
    hs = xp.empty((T + 1,) + h0.shape, dtype=dt)
    cs = xp.empty((T + 1, H, B), dtype=dt)
    hs[0], cs[0] = h0, c0
    tanh_c = xp.empty((T, H, B), dtype=dt) if keep else None
    hfull = xp.empty((T, H, B), dtype=dt) if keep and w_hr is not None else None
    # sigmoid(v) = 0.5 * tanh(0.5 v) + 0.5 for the i, f, o blocks, tanh for g: one tanh over all gates
    scale = _full_column(xp, _lstm_gate_scale(xp, H, dt), B)
    shift = 1 - scale
    hh = xp.empty((G, B), dtype=dt)
    tc = xp.empty((H, B), dtype=dt)
    ig = xp.empty((H, B), dtype=dt)
    for t in range(T):
        if keep:
            tc = tanh_c[t]
        a = gi[t]  # rows: the i, f, g, o blocks
        xp.matmul(w_hh, hs[t], out=hh)
        a += hh
        xp.tanh(a, out=a)
        a *= scale
        a += shift
        c = cs[t + 1]
        xp.multiply(a[H:2 * H], cs[t], out=c)
        xp.multiply(a[:H], a[2 * H:3 * H], out=ig)
        c += ig
        xp.tanh(c, out=tc)
        if w_hr is None:
            xp.multiply(a[3 * H:], tc, out=hs[t + 1])
        else:
            h = a[3 * H:] * tc
            if keep:
                hfull[t] = h
            xp.matmul(w_hr, h, out=hs[t + 1])
        if mask is not None:
            hs[t + 1] = xp.where(mask[t], hs[t + 1], hs[t])
            cs[t + 1] = xp.where(mask[t], c, cs[t])
    return hs, cs, (gi, tanh_c, hfull)


def _gru_forward(xp, gi, h0, w_hh, b_hh, mask, keep):
    """Gate-major: gi (T, 3H, B) input projections with b_ih, w_hh (3H, H), h0 (H, B). PyTorch's GRU: r and z
    from both projections, n = tanh(gi_n + r * (W_hn h + b_hn)), h' = n + z * (h - n). Each step's r, z and n
    overwrite its input projections in gi; the backward also needs W_hn h + b_hn."""
    T, G, B = gi.shape
    H = G // 3
    hs = xp.empty((T + 1,) + h0.shape, dtype=gi.dtype)
    hs[0] = h0
    ghn_all = xp.empty((T, H, B), dtype=gi.dtype) if keep else None
    b_full = None if b_hh is None else _full_column(xp, b_hh, B)
    gh = xp.empty((G, B), dtype=gi.dtype)
    rn = xp.empty((H, B), dtype=gi.dtype)
    for t in range(T):
        xp.matmul(w_hh, hs[t], out=gh)
        if b_full is not None:
            gh += b_full
        rz, n = gi[t, :2 * H], gi[t, 2 * H:]
        rz += gh[:2 * H]
        _sigmoid_(xp, rz)
        ghn = gh[2 * H:]
        xp.multiply(rz[:H], ghn, out=rn)
        n += rn
        xp.tanh(n, out=n)
        h = hs[t + 1]
        xp.subtract(hs[t], n, out=h)
        h *= rz[H:]
        h += n
        if mask is not None:
            hs[t + 1] = xp.where(mask[t], h, hs[t])
        if keep:
            ghn_all[t] = ghn
    return hs, (gi, ghn_all)


def _rnn_forward(xp, gi, h0, w_hh, relu, mask):
    """Gate-major: gi (T, H, B) input projections with both biases, w_hh (H, H), h0 (H, B);
    h' = tanh(gi + W_hh h) (or relu)."""
    T = gi.shape[0]
    hs = xp.empty((T + 1,) + h0.shape, dtype=gi.dtype)
    hs[0] = h0
    for t in range(T):
        h = hs[t + 1]
        xp.matmul(w_hh, hs[t], out=h)
        h += gi[t]
        if relu:
            xp.maximum(h, 0, out=h)
        else:
            xp.tanh(h, out=h)
        if mask is not None:
            hs[t + 1] = xp.where(mask[t], h, hs[t])
    return hs


def _arrays(low, *tensors):
    """The tensors' arrays (None stays None), in float32 when `low` (16-bit floats are computed in float32
    and rounded once at the end, like PyTorch's CPU kernels)."""
    return tuple(None if t is None else t._data.astype("float32") if low else t._data for t in tensors)


def _hidden_grads(xp, dGi2, dGh, hs, need_w, need_b):
    """Gradients of W_hh and b_hh (or None where not needed), from the gate gradients dGi2 (T*B, G) and the
    states h_{t-1} (hs, gate-major); for GRU only the first blocks (r, z): its n block is dGh (T, B, H)."""
    hs2 = swap_last(xp, hs).reshape(dGi2.shape[0], -1) if need_w else None
    if dGh is None:
        return (dGi2.T @ hs2 if need_w else None), (dGi2.sum(axis=0) if need_b else None)
    parts = (dGi2[:, :dGi2.shape[1] - dGh.shape[-1]], dGh.reshape(dGi2.shape[0], -1))
    return (xp.concatenate([p.T @ hs2 for p in parts]) if need_w else None,
            xp.concatenate([p.sum(axis=0) for p in parts]) if need_b else None)


class _RecurrentSequence(Op):
    """One layer, one direction, whole sequence. Arguments: x (T, B, I) time-major, h0 (B, Hout), c0 (B, H)
    or None, w_ih, w_hh, b_ih or None, b_hh or None, w_hr or None, masks (T, B, 1) bool or None, mode,
    reverse. Returns (output, h_n) or (output, h_n, c_n) for LSTM."""

    released_after_backward = ("arrays",)  # the states of every step, kept for backpropagation through time

    @staticmethod
    def forward(ctx, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, masks, mode, reverse):
        xp = x._xp
        low = x._data.dtype in _LOW
        X, H0, C0, W_ih, W_hh, bias, bh, W_hr = _arrays(low, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr)
        X = X[::-1] if reverse else X
        M = None if masks is None else (masks._data[::-1] if reverse else masks._data)
        T, B = X.shape[:2]
        if bh is not None and mode != "GRU":
            bias = bh if bias is None else bias + bh
        G = W_ih.shape[0]
        scale = _lstm_gate_scale(xp, G // 4, W_ih.dtype) if mode == "LSTM" else None
        if scale is not None:  # the LSTM's weights and biases are pre-scaled (see _lstm_gate_scale)
            W_ih, W_hh = W_ih * scale[:, None], W_hh * scale[:, None]
            bias = None if bias is None else bias * scale
        # gate-major input projections (T, G, B) = W_ih @ x_t.T for every step, in one batched matmul
        gi = xp.matmul(W_ih, X.transpose(0, 2, 1))
        if bias is not None:
            gi += _full_column(xp, bias, B)
        H0, C0 = H0.T, None if C0 is None else C0.T
        M = None if M is None else M.transpose(0, 2, 1)  # (T, 1, B)
        keep = bool(ctx.needs_input_grad)
        cs = saved = None
        if mode == "LSTM":
            hs, cs, saved = _lstm_forward(xp, gi, H0, C0, W_hh, W_hr, M, keep)
        elif mode == "GRU":
            hs, saved = _gru_forward(xp, gi, H0, W_hh, bh, M, keep)
        else:
            hs = _rnn_forward(xp, gi, H0, W_hh, mode == "RNN_RELU", M)
        out = (hs[:0:-1] if reverse else hs[1:]).transpose(0, 2, 1)
        results = (out, hs[-1].T, cs[-1].T) if mode == "LSTM" else (out, hs[-1].T)
        if keep:
            ctx.mode, ctx.reverse, ctx.low = mode, reverse, low
            ctx.arrays = (X, hs, cs, saved, None if M is None else M.astype(hs.dtype))
            ctx.save_for_backward(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, masks)
        # C-contiguous copies in the batch-major layout: the saved states stay private
        dtype = x._data.dtype
        return tuple(r.astype(dtype, order="C") if low else r.copy() for r in results)

    @staticmethod
    def backward(ctx, d_out, d_h, d_c=None):
        """The math: the gradients of the unfused computation (the layer again with framework ops)."""
        return _recorded_backward(ctx, (d_out, d_h, d_c))

    @staticmethod
    def fused_backward(ctx, d_out, d_h, d_c=None):
        """Backpropagation through time on arrays, the gates of all steps in one product per weight."""
        x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, _ = ctx.saved_tensors  # also checks in-place changes
        X, hs, cs, saved, mask = ctx.arrays
        xp = x._xp
        dO, dH, dC, W_ih, W_hh, W_hr = _arrays(ctx.low, d_out, d_h, d_c, w_ih, w_hh, w_hr)
        if dO is not None and ctx.reverse:
            dO = dO[::-1]
        if ctx.mode == "LSTM":
            dGi, dGh, dh0, dc0, dW_hr = lstm_backward(xp, dO, dH, dC, hs, cs, saved, W_hh, W_hr, mask)
        elif ctx.mode == "GRU":
            dGi, dGh, dh0 = gru_backward(xp, dO, dH, hs, saved, W_hh, mask)
            dc0 = dW_hr = None
        else:
            dGi, dGh, dh0 = rnn_backward(xp, dO, dH, hs, W_hh, ctx.mode == "RNN_RELU", mask)
            dc0 = dW_hr = None
        need = ctx.needs_input_grad
        T, B = hs.shape[0] - 1, hs.shape[2]
        X2 = X.reshape(T * B, X.shape[2])
        dGi2 = dGi.reshape(T * B, dGi.shape[-1])
        dx = None
        if need[0]:
            dx = (dGi2 @ W_ih).reshape(T, B, X2.shape[1])
            dx = xp.ascontiguousarray(dx[::-1]) if ctx.reverse else dx
        dw_ih = dGi2.T @ X2 if need[3] else None
        db_ih = dGi2.sum(axis=0) if need[5] else None
        dw_hh, db_hh = _hidden_grads(xp, dGi2, dGh, hs[:-1], need[4], need[6])
        grads = (dx, dh0 if need[1] else None, dc0 if need[2] else None,
                 dw_ih, dw_hh, db_ih, db_hh, dW_hr if need[7] else None)
        inputs = (x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr)
        return tuple(None if g is None else g.astype(t._data.dtype) if ctx.low else g
                     for g, t in zip(grads, inputs)) + (None, None, None)


class LstmSequence(_RecurrentSequence):
    node_name = "LstmSequenceBackward0"


class GruSequence(_RecurrentSequence):
    node_name = "GruSequenceBackward0"


class RnnSequence(_RecurrentSequence):
    node_name = "RnnSequenceBackward0"


_OPS = {"LSTM": LstmSequence, "GRU": GruSequence, "RNN_TANH": RnnSequence, "RNN_RELU": RnnSequence}


def recurrent_sequence(mode, x, states, w_ih, w_hh, b_ih=None, b_hh=None, w_hr=None, reverse=False, masks=None):
    """One layer and direction of `torch.nn.LSTM/GRU/RNN` (mode "LSTM", "GRU", "RNN_TANH", "RNN_RELU") over
    the time-major sequence x (T, B, I) from `states` ((h0,) or (h0, c0), each (B, size)), fused into one op.
    Where the bool `masks` (T, B, 1) are False (past the end of a packed sequence) the states are carried over
    unchanged. Returns (output (T, B, Hout), final states tuple)."""
    c0 = states[1] if mode == "LSTM" else None
    res = _OPS[mode].apply(x, states[0], c0, w_ih, w_hh, b_ih, b_hh, w_hr, masks, mode, reverse)
    return res[0], tuple(res[1:])


# ---- the same layer with framework ops (double backward) -------------------------------------------------

def reference_sequence(mode, reverse, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, masks=None):
    """The layer of `recurrent_sequence` written step by step with framework ops (differentiable to any
    order); returns (output, h_n) or (output, h_n, c_n)."""
    gi = x.matmul(w_ih.t())
    if b_ih is not None:
        gi = gi + b_ih
    steps = gi.unbind(0)
    outputs = [None] * len(steps)
    h, c = h0, c0
    for t in (range(len(steps) - 1, -1, -1) if reverse else range(len(steps))):
        gh = h.matmul(w_hh.t())
        if b_hh is not None:
            gh = gh + b_hh
        c_new = None
        if mode == "LSTM":
            i, f, g, o = (steps[t] + gh).chunk(4, 1)
            c_new = f.sigmoid() * c + i.sigmoid() * g.tanh()
            h_new = o.sigmoid() * c_new.tanh()
            if w_hr is not None:
                h_new = h_new.matmul(w_hr.t())
        elif mode == "GRU":
            i_r, i_z, i_n = steps[t].chunk(3, 1)
            h_r, h_z, h_n = gh.chunk(3, 1)
            r, z = (i_r + h_r).sigmoid(), (i_z + h_z).sigmoid()
            n = (i_n + r * h_n).tanh()
            h_new = n + z * (h - n)
        else:
            pre = steps[t] + gh
            h_new = pre.relu() if mode == "RNN_RELU" else pre.tanh()
        if masks is not None:  # a finished sequence keeps its last state
            h_new = h_new.where(masks[t], h)
            c_new = None if c_new is None else c_new.where(masks[t], c)
        h, c = h_new, c_new
        outputs[t] = h
    out = stack(outputs)
    return (out, h, c) if mode == "LSTM" else (out, h)


def _recorded_backward(ctx, grads):
    saved = ctx.saved_tensors
    need = ctx.needs_input_grad
    inputs = [t for t, n in zip(saved, need) if t is not None and n]
    outs = reference_sequence(ctx.mode, ctx.reverse, *saved)
    pairs = [(o, g) for o, g in zip(outs, grads) if g is not None]
    found = iter(_autograd_grad([o for o, _ in pairs], inputs, [g for _, g in pairs], create_graph=True,
                                allow_unused=True))
    result = [next(found) if t is not None and n else None for t, n in zip(saved, need)]
    return tuple(result) + (None, None)
