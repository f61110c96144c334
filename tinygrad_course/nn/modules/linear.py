"""`Linear` (y = x A^T + b), `Bilinear` (y = x1^T A x2 + b) and `Identity`, like `torch.nn.modules.linear`."""
from __future__ import annotations

import math

from ..._unsupported import getattr_for
from ...factories import empty
from ...seams import component
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Linear", "Bilinear", "Identity"]  # NonDynamicallyQuantizableLinear stays out, as in PyTorch
__getattr__ = getattr_for("tc.nn", __name__)  # LazyLinear: a PyTorch name not implemented


def add_weight_and_bias(module, weight_shape, bias, device, dtype):
    """Register `weight` (weight_shape) and `bias` (weight_shape[0], or None) and initialise them."""
    module.weight = Parameter(empty(*weight_shape, device=device, dtype=dtype))
    if bias:
        module.bias = Parameter(empty(weight_shape[0], device=device, dtype=dtype))
    else:
        module.register_parameter("bias", None)
    module.reset_parameters()


class Identity(Module):
    """Returns its input unchanged (a placeholder layer); accepts and ignores any arguments."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        """Return `input` unchanged."""
        return input


class Linear(Module):
    """y = x @ weight.T + bias, with weight of shape (out_features, in_features).

    Initialised like PyTorch: weight and bias uniform in (-1/sqrt(in_features), 1/sqrt(in_features)).
    """

    @component("Linear.__init__")
    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        add_weight_and_bias(self, (out_features, in_features), bias, device, dtype)

    @component("Linear.reset_parameters")
    def reset_parameters(self) -> None:
        """Re-draw weight and bias with PyTorch's default initialisation."""
        init.default_reset_(self.weight, self.bias)

    @component("Linear.forward")
    def forward(self, input):
        """`F.linear` with this layer's settings."""
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class NonDynamicallyQuantizableLinear(Linear):
    """A plain `Linear`; PyTorch names MultiheadAttention's output projection this way (it shows in reprs and
    in the allow-list a whole-model checkpoint needs)."""


class Bilinear(Module):
    """y = x1^T A x2 + b with weight A of shape (out_features, in1_features, in2_features).

    Initialised like PyTorch: weight and bias uniform in +-1/sqrt(in1_features).
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(empty(out_features, in1_features, in2_features, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw weight and bias uniformly in +-1/sqrt(in1_features)."""
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        """`F.bilinear` with this layer's settings."""
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
