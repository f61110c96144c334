"""Normalisation layers: layer, group, RMS and local response norm, like `torch.nn.modules.normalization`
(batch norm is in `batchnorm.py`, instance norm in `instancenorm.py`)."""
from __future__ import annotations

from ..._unsupported import getattr_for
from ...factories import ones, zeros
from .. import functional as F
from .. import init
from ...seams import ACTIVE, component, learner, offer
from ..parameter import Parameter
from .module import Module

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm"]
__getattr__ = getattr_for("tc.nn", __name__)  # CrossMapLRN2d: a PyTorch name not implemented


def _init_scale_and_shift(module, affine, bias, shape, device, dtype):
    """Register `weight` (ones) and `bias` (zeros) of the given shape, or None when affine/bias is off."""
    if affine:
        module.weight = Parameter(ones(shape, device=device, dtype=dtype))
        if bias:
            module.bias = Parameter(zeros(shape, device=device, dtype=dtype))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


class LayerNorm(Module):
    """Normalize over the trailing `normalized_shape` dims, then apply a learned scale and shift."""

    @component("LayerNorm.__init__")
    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _init_scale_and_shift(self, elementwise_affine, bias, self.normalized_shape, device, dtype)

    def forward(self, input):
        """`F.layer_norm` with this layer's settings."""
        if ACTIVE:  # build mode: the learner's LayerNorm.forward (an inline seam: it runs on every forward pass)
            mine = learner("LayerNorm.forward")
            if mine is not None:
                return mine(self, input)
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalize each group of channels of each sample, then apply a per-channel scale and shift."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True, device=None,
                 dtype=None, *, bias: bool = True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _init_scale_and_shift(self, affine, bias, num_channels, device, dtype)

    def forward(self, input):
        """`F.group_norm` with this layer's settings."""
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, bias={self.bias is not None}"


class RMSNorm(Module):
    """x / sqrt(mean(x**2) + eps) over the trailing `normalized_shape` dims, times a learned scale.

    eps=None uses the machine epsilon of the input's dtype, as PyTorch does.
    """

    def __init__(self, normalized_shape, eps=None, elementwise_affine: bool = True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self) -> None:
        """Scale back to ones."""
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, input):
        """`F.rms_norm` with this layer's settings."""
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LocalResponseNorm(Module):
    """Normalize each value by the energy of `size` neighbouring channels (AlexNet's LRN)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        """`F.local_response_norm` with this layer's settings."""
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


offer("LayerNorm.forward", LayerNorm.forward)
