"""Recurrent cells: `RNNCell`, `LSTMCell`, `GRUCell` (one time step), and the step functions they share.

Each step is written with framework ops (linear, sigmoid, tanh, chunk), so autograd, double backward and the GPU
come for free. Gate order and parameter layout are PyTorch's. The multi-step layers (rnn.py) run whole sequences
through the fused op in ops/recurrent.py instead.
"""
from __future__ import annotations

import math

from ... import factories
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


# ---- one time step (shared by the cells and the multi-step layers) -----------------------------------------
# `gi` is the input projection W_ih x + b_ih of this step, already computed.

def _rnn_step(gi, h, w_hh, b_hh, relu=False):
    pre = gi + F.linear(h, w_hh, b_hh)
    return pre.relu() if relu else pre.tanh()


def _lstm_step(gi, h, c, w_hh, b_hh, w_hr=None):
    i, f, g, o = (gi + F.linear(h, w_hh, b_hh)).chunk(4, 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    if w_hr is not None:  # LSTM with proj_size: h is projected down after the output gate
        h = F.linear(h, w_hr)
    return h, c


def _gru_step(gi, h, w_hh, b_hh):
    i_r, i_z, i_n = gi.chunk(3, 1)
    h_r, h_z, h_n = F.linear(h, w_hh, b_hh).chunk(3, 1)
    r = (i_r + h_r).sigmoid()
    z = (i_z + h_z).sigmoid()
    n = (i_n + r * h_n).tanh()  # PyTorch's GRU: the reset gate multiplies W_hn h + b_hn
    return n + z * (h - n)  # = (1 - z) * n + z * h


# ---- cells -------------------------------------------------------------------------------------------------

class RNNCellBase(Module):
    """Base of the single-step cells: weight_ih (chunks*H, I), weight_hh (chunks*H, H), bias_ih, bias_hh."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        kw = {"device": device, "dtype": dtype}
        self.weight_ih = Parameter(factories.empty(num_chunks * hidden_size, input_size, **kw))
        self.weight_hh = Parameter(factories.empty(num_chunks * hidden_size, hidden_size, **kw))
        if bias:
            self.bias_ih = Parameter(factories.empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(factories.empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self) -> None:
        """Every weight and bias uniform in (-1/sqrt(hidden_size), 1/sqrt(hidden_size)), like PyTorch."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _batched(self, input, hx, name):
        """Checks dims; returns (2-D input, tuple of 2-D states or None, is_batched)."""
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        is_batched = input.ndim == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected {self.input_size}")
        if hx is None:
            return input, None, is_batched
        states = tuple(hx) if isinstance(hx, (tuple, list)) else (hx,)
        for i, h in enumerate(states):
            if h.ndim not in (1, 2):
                what = "hidden" if len(states) == 1 else f"hx[{i}]"
                raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {h.ndim}D instead")
        states = tuple(h.unsqueeze(0) for h in states) if not is_batched else states
        for i, h in enumerate(states):
            if h.shape[0] != input.shape[0]:
                raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{i} batch size {h.shape[0]}")
            if h.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {h.shape[1]}, expected "
                                   f"{self.hidden_size}")
        return input, states, is_batched

    def _zeros(self, input):
        return factories.zeros(input.shape[0], self.hidden_size, dtype=input.dtype, device=input.device)


class RNNCell(RNNCellBase):
    """One Elman RNN step: h' = tanh(W_ih x + b_ih + W_hh h + b_hh) (or relu)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        x, states, is_batched = self._batched(input, hx, "RNNCell")
        h = self._zeros(x) if states is None else states[0]
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        out = _rnn_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh,
                        relu=self.nonlinearity == "relu")
        return out if is_batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step (gates i, f, g, o); returns (h', c')."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        x, states, is_batched = self._batched(input, hx, "LSTMCell")
        h, c = (self._zeros(x), self._zeros(x)) if states is None else states
        h, c = _lstm_step(F.linear(x, self.weight_ih, self.bias_ih), h, c, self.weight_hh, self.bias_hh)
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step (gates r, z, n): h' = (1 - z) * n + z * h."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        x, states, is_batched = self._batched(input, hx, "GRUCell")
        h = self._zeros(x) if states is None else states[0]
        out = _gru_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return out if is_batched else out.squeeze(0)
