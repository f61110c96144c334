"""Convolutions: `Conv1d`, `Conv2d`, `ConvTranspose1d`, `ConvTranspose2d`."""
from __future__ import annotations

from ..._unsupported import getattr_for
from ...factories import empty
from ...seams import component
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d"]
__getattr__ = getattr_for("tc.nn", __name__)  # Conv3d, Lazy*: PyTorch names not implemented

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


def _pair(v):
    return _ntuple(v, 2)


class _ConvNd(Module):
    """What every convolution layer shares: argument checks, weight/bias creation, PyTorch's repr."""

    _dims = 2
    transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode,
                 device, dtype, output_padding=0):
        super().__init__()
        n = self._dims
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {set(_PADDING_MODES)}, but got padding_mode='{padding_mode}'")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in _ntuple(stride, n)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.dilation = _ntuple(dilation, n)
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        if self.transposed:
            shape = (in_channels, out_channels // groups, *self.kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *self.kernel_size)
        self.weight = Parameter(empty(*shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw weight and bias with PyTorch's default initialisation."""
        init.default_reset_(self.weight, self.bias)

    def _padding_for_mode(self):
        """F.pad's amounts (last dim first) for a non-'zeros' padding_mode (PyTorch pads explicitly first)."""
        if self.padding == "valid":
            return (0,) * (2 * self._dims)
        if self.padding == "same":
            amounts = []
            for d, k in zip(reversed(self.dilation), reversed(self.kernel_size)):
                total = d * (k - 1)
                amounts += [total // 2, total - total // 2]
            return tuple(amounts)
        return tuple(p for p in reversed(self.padding) for _ in range(2))

    def _conv_forward(self, input, conv):
        if self.padding_mode != "zeros":
            input = F.pad(input, self._padding_for_mode(), mode=self.padding_mode)
            return conv(input, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * len(self.kernel_size):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """1-D convolution over (N, C, L) input; weight of shape (out_channels, in_channels/groups, k)."""

    _dims = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode,
                         device, dtype)

    def forward(self, input):
        """`F.conv1d` with this layer's weight, bias and settings (padding modes applied first)."""
        return self._conv_forward(input, F.conv1d)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C, H, W) input; weight of shape (out_channels, in_channels/groups, kh, kw).

    Initialised like PyTorch (uniform in +-1/sqrt(fan_in), fan_in = in_channels/groups * kh * kw).
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode,
                         device, dtype)

    @component("Conv2d.forward")
    def forward(self, input):
        """`F.conv2d` with this layer's weight, bias and settings (padding modes applied first)."""
        if self.padding_mode == "zeros":  # the common case, without the extra call
            return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)
        return self._conv_forward(input, F.conv2d)


class _ConvTransposeNd(_ConvNd):
    transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, bias,
                 dilation, padding_mode, device, dtype):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        if isinstance(padding, str):
            raise ValueError(f"{type(self).__name__} does not support string padding; give the amounts as ints.")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode,
                         device, dtype, output_padding)

    def _output_padding(self, input, output_size):
        """The output_padding giving `output_size` (PyTorch's rule), or the layer's own when none is asked for."""
        if output_size is None:
            return self.output_padding
        n = self._dims
        output_size = tuple(output_size)[-n:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.ndim}D input, output_size must have {n} or "
                             f"{n + 2} elements (got {len(output_size)})")
        result = []
        for d in range(n):
            size = input.shape[input.ndim - n + d]
            smallest = ((size - 1) * self.stride[d] - 2 * self.padding[d]
                        + self.dilation[d] * (self.kernel_size[d] - 1) + 1)
            largest = smallest + self.stride[d] - 1
            if not smallest <= output_size[d] <= largest:
                raise ValueError(f"requested an output size of {list(output_size)}, but valid sizes range from "
                                 f"{smallest} to {largest} (for an input of {list(input.shape[2:])})")
            result.append(output_size[d] - smallest)
        return tuple(result)


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-D convolution (a 'deconvolution'): weight of shape (in_channels, out_channels/groups, k)."""

    _dims = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, bias,
                         dilation, padding_mode, device, dtype)

    def forward(self, input, output_size=None):
        """`F.conv_transpose1d` with this layer's settings."""
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups, self.dilation)


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-D convolution (upsampling by a learned kernel): weight (in_channels, out_channels/groups, kh, kw)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, bias,
                         dilation, padding_mode, device, dtype)

    def forward(self, input, output_size=None):
        """`F.conv_transpose2d` with this layer's settings."""
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups, self.dilation)
