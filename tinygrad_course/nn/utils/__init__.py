"""`tc.nn.utils`: gradient clipping and parameter/vector conversion."""
from . import rnn
from .clip_grad import clip_grad_norm_, clip_grad_value_
from .convert_parameters import parameters_to_vector, vector_to_parameters
from ..._unsupported import missing as _missing

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters", "rnn"]


def __getattr__(name):
    raise _missing("tc.nn.utils", name, f"module '{__name__}' has no attribute '{name}'")
