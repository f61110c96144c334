"""Recurrent layers `RNN`, `LSTM`, `GRU` (multi-layer, bidirectional, over whole sequences); the cells
`RNNCell`, `LSTMCell`, `GRUCell` live in rnn_cells.py and are re-exported here.

Each layer and direction runs as one fused op (ops/recurrent.py): the input projections of all steps in one
matmul, one matmul of the hidden state with the stacked gate weights per step, and a hand-written backward
through time; with packed input a finished sequence keeps its state. Under `create_graph=True` the backward
differentiates the same layer written with framework ops, so double backward works (at unfused speed).
Gate order and parameter layout are PyTorch's.
"""
from __future__ import annotations

import math
import numbers
import warnings

from ... import factories
from ...autograd.autocast_state import autocast_state
from ...dtypes import float32
from ...ops.concat import cat, stack
from ...ops.recurrent import recurrent_sequence
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, _packed_to_padded, _padded_to_packed
from .module import Module
from .rnn_cells import GRUCell, LSTMCell, RNNCell, RNNCellBase

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# ---- multi-layer, multi-step layers ------------------------------------------------------------------------

def _check_rnn_args(input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size):
    if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
        raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                         "being zeroed")
    if dropout > 0 and num_layers == 1:
        warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects "
                      f"num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                      stacklevel=4)
    for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                              ("input_size", input_size, int), ("hidden_size", hidden_size, int)):
        if not isinstance(value, kind):
            raise TypeError(f"{name} should be of type {kind.__name__}, got: {type(value).__name__}")
        if kind is int and value <= 0:
            raise ValueError(f"{name} must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")


class RNNBase(Module):
    """Shared machinery of RNN, LSTM and GRU: parameters weight_ih_l{k}[_reverse], weight_hh_l{k}[_reverse],
    bias_ih_l{k}[_reverse], bias_hh_l{k}[_reverse] (and weight_hr_l{k}[_reverse] for a projected LSTM)."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None):
        super().__init__()
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        _check_rnn_args(input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        kw = {"device": device, "dtype": dtype}
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                shapes = [("weight_ih", (gate_size, layer_input_size)), ("weight_hh", (gate_size, real_hidden_size))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for kind, shape in shapes:
                    name = f"{kind}_l{layer}{suffix}"
                    setattr(self, name, Parameter(factories.empty(*shape, **kw)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        """The parameters grouped per layer and direction, like PyTorch's `all_weights`."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """No-op here (PyTorch uses it to compact weights for cuDNN); kept so PyTorch code runs unchanged."""

    def reset_parameters(self) -> None:
        """Every parameter uniform in (-1/sqrt(hidden_size), 1/sqrt(hidden_size)), like PyTorch."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -- forward ------------------------------------------------------------------------------------------
    def _state_sizes(self):
        """Feature size of each state tensor: (h,) or (h, c) for LSTM."""
        h = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (h, self.hidden_size) if self.mode == "LSTM" else (h,)

    def _prepare(self, input, hx):
        """Returns (time-major 3-D input, states tuple, step masks or None, unbatched, packed input or None)."""
        num_directions = 2 if self.bidirectional else 1
        packed = input if isinstance(input, PackedSequence) else None
        if packed is not None:
            x, masks = _packed_to_padded(packed.data, packed.batch_sizes)
            batch = x.shape[1]
            unbatched = False
        else:
            if input.ndim not in (2, 3):
                name = self.mode if self.mode in ("LSTM", "GRU") else "RNN"
                tail = " tensor instead" if name == "RNN" else " instead"
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.ndim}D{tail}")
            unbatched = input.ndim == 2
            x = input.unsqueeze(0 if self.batch_first else 1) if unbatched else input
            if self.batch_first:
                x = x.transpose(0, 1)
            batch, masks = x.shape[1], None
        sizes = self._state_sizes()
        if hx is None:
            states = tuple(factories.zeros(self.num_layers * num_directions, batch, s, dtype=x.dtype,
                                           device=x.device) for s in sizes)
        else:
            states = tuple(hx) if self.mode == "LSTM" else (hx,)
            want = 2 if unbatched else 3
            if any(s.ndim != want for s in states):
                dims = ", ".join(f"{s.ndim}-D" for s in states)
                what, shape = ("unbatched 2-D", "2-D") if unbatched else ("batched 3-D", "3-D")
                if self.mode == "LSTM":
                    raise RuntimeError(f"For {what} input, hx and cx should also be {shape} but got ({dims}) tensors")
                raise RuntimeError(f"For {what} input, hx should also be {shape} but got {dims} tensor")
            if unbatched:
                states = tuple(s.unsqueeze(1) for s in states)
            if packed is not None and packed.sorted_indices is not None:
                states = tuple(s.index_select(1, packed.sorted_indices) for s in states)
        self._check_forward_args(x, states)
        return x, states, masks, unbatched, packed

    def _check_forward_args(self, x, states):
        weight = self.weight_ih_l0
        if x.dtype is not weight.dtype:
            raise ValueError(f"RNN input dtype ({x.dtype}) does not match weight dtype ({weight.dtype}). "
                             f"Convert input: input.to({weight.dtype}), or convert model: model.to({x.dtype})")
        if x.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {x.shape[-1]}")
        num_directions = 2 if self.bidirectional else 1
        for i, (s, size) in enumerate(zip(states, self._state_sizes())):
            expected = (self.num_layers * num_directions, x.shape[1], size)
            if tuple(s.shape) != expected:
                what = f"hidden[{i}]" if self.mode == "LSTM" else "hidden"
                raise RuntimeError(f"Expected {what} size {expected}, got {list(s.shape)}")

    def _run_direction(self, x, state, weights, reverse, masks):
        """One layer in one direction over the whole sequence (one fused op); returns (outputs (T, B, H), final
        states). With packed input, `masks` (T, B, 1) marks the valid steps: a finished sequence keeps its state."""
        return recurrent_sequence(self.mode, x, state, weights["weight_ih"], weights["weight_hh"],
                                  weights.get("bias_ih"), weights.get("bias_hh"), weights.get("weight_hr"), reverse,
                                  masks)

    def _autocast_dtype(self, y):
        """Inside `tc.autocast`, PyTorch runs LSTM and RNN (not GRU) in the lower precision, so their outputs
        and final states come out in it: that dtype, or None. (Computed here in float32, then rounded.)"""
        dev = y.device.type
        if self.mode == "GRU" or not autocast_state.active or not autocast_state.enabled.get(dev):
            return None
        return autocast_state.dtype.get(dev) if y.dtype is float32 else None

    def forward(self, input, hx=None):
        x, states, masks, unbatched, packed = self._prepare(input, hx)
        num_directions = 2 if self.bidirectional else 1
        finals = [[] for _ in states]
        layer_input = x
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(num_directions):
                idx = layer * num_directions + direction
                names = self._all_weights[idx]
                weights = {name.split("_l")[0]: getattr(self, name) for name in names}
                out, final = self._run_direction(layer_input, tuple(s[idx] for s in states), weights,
                                                 direction == 1, masks)
                outputs.append(out)
                for store, value in zip(finals, final):
                    store.append(value)
            layer_input = outputs[0] if num_directions == 1 else cat(outputs, 2)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        final_states = tuple(stack(store) for store in finals)
        low = self._autocast_dtype(layer_input)
        if low is not None:
            layer_input = layer_input.to(low)
            final_states = tuple(s.to(low) for s in final_states)
        if packed is not None:
            output = PackedSequence(_padded_to_packed(layer_input, packed.batch_sizes), packed.batch_sizes,
                                    packed.sorted_indices, packed.unsorted_indices)
            if packed.unsorted_indices is not None:
                final_states = tuple(s.index_select(1, packed.unsorted_indices) for s in final_states)
        else:
            output = layer_input.transpose(0, 1) if self.batch_first else layer_input
            if unbatched:
                output = output.squeeze(0 if self.batch_first else 1)
                final_states = tuple(s.squeeze(1) for s in final_states)
        if self.mode == "LSTM":
            return output, final_states
        return output, final_states[0]


class RNN(RNNBase):
    """Multi-layer Elman RNN: h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh) (or relu)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)


class LSTM(RNNBase):
    """Multi-layer LSTM (gates i, f, g, o); returns output and (h_n, c_n); optional proj_size."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """Multi-layer GRU (gates r, z, n); returns output and h_n."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)
