"""Pooling layers: max, average, adaptive, power-average (LP) pooling and max unpooling, 1-D and 2-D."""
from __future__ import annotations

from ..._unsupported import getattr_for
from ...seams import component
from .. import functional as F
from .module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
           "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "LPPool1d", "LPPool2d", "MaxUnpool1d", "MaxUnpool2d"]
__getattr__ = getattr_for("tc.nn", __name__)  # 3-d and fractional pooling: PyTorch names not implemented


class MaxPool2d(Module):
    """Maximum over kernel_size windows (stride defaults to kernel_size)."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    @component("MaxPool2d.forward")
    def forward(self, input):
        """`F.max_pool2d` with this layer's settings."""
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    """Mean over kernel_size windows (stride defaults to kernel_size)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        """`F.avg_pool2d` with this layer's settings."""
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """Average pooling to a fixed output size, whatever the input size."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        """`F.adaptive_avg_pool2d` with this layer's settings."""
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"output_size={self.output_size}"


class MaxPool1d(MaxPool2d):
    """Maximum over kernel_size windows of (N, C, L) input (stride defaults to kernel_size)."""

    def forward(self, input):
        """`F.max_pool1d` with this layer's settings."""
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


def _single_tuple(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


class AvgPool1d(Module):
    """Mean over kernel_size windows of (N, C, L) input (stride defaults to kernel_size)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size = _single_tuple(kernel_size)
        self.stride = _single_tuple(stride if (stride is not None) else kernel_size)
        self.padding = _single_tuple(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        """`F.avg_pool1d` with this layer's settings."""
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    """Average pooling of (N, C, L) input to a fixed output length."""

    def forward(self, input):
        """`F.adaptive_avg_pool1d` with this layer's settings."""
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveMaxPool2d(Module):
    """Max pooling to a fixed output size, whatever the input size (optionally also the indices)."""

    def __init__(self, output_size, return_indices: bool = False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input):
        """`F.adaptive_max_pool2d` with this layer's settings."""
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(AdaptiveMaxPool2d):
    """Max pooling of (N, C, L) input to a fixed output length (optionally also the indices)."""

    def forward(self, input):
        """`F.adaptive_max_pool1d` with this layer's settings."""
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class LPPool2d(Module):
    """Power-average pooling: (sum of x**norm_type over each window) ** (1/norm_type)."""

    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input):
        """`F.lp_pool2d` with this layer's settings."""
        return F.lp_pool2d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(LPPool2d):
    """Power-average pooling over 1-D windows of (N, C, L) input."""

    def forward(self, input):
        """`F.lp_pool1d` with this layer's settings."""
        return F.lp_pool1d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class MaxUnpool2d(Module):
    """Partial inverse of MaxPool2d: values put back at their max positions, zeros elsewhere."""

    _dims = 2

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        n = self._dims
        as_tuple = (lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v,) * n)
        self.kernel_size = as_tuple(kernel_size)
        self.stride = as_tuple(stride if (stride is not None) else kernel_size)
        self.padding = as_tuple(padding)

    def forward(self, input, indices, output_size=None):
        """`F.max_unpool2d` with this layer's settings."""
        return F.max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(MaxUnpool2d):
    """Partial inverse of MaxPool1d: values put back at their max positions, zeros elsewhere."""

    _dims = 1

    def forward(self, input, indices, output_size=None):
        """`F.max_unpool1d` with this layer's settings."""
        return F.max_unpool1d(input, indices, self.kernel_size, self.stride, self.padding, output_size)
