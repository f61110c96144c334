"""Recurrent layers: `RNN`, `LSTM`, `GRU` and their cells `RNNCell`, `LSTMCell`, `GRUCell`."""
from __future__ import annotations

__all__: list[str] = []
