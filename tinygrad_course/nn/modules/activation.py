"""Activation layers: `ReLU`, `LeakyReLU`, `Sigmoid`, `Tanh`, `GELU`, `SiLU`, `Softmax`, `LogSoftmax`, and the
rest of PyTorch's: `ELU`, `SELU`, `CELU`, `ReLU6`, `Hardtanh`, `Hardsigmoid`, `Hardswish`, `Mish`, `Softplus`,
`LogSigmoid`, `Softsign`, `Tanhshrink`, `Softshrink`, `Hardshrink`, `Threshold`, `Softmin`, `Softmax2d`, `GLU`,
`PReLU`, `RReLU`. The softmax family (`Softmax`, `LogSoftmax`, `Softmin`, `Softmax2d`) lives in `softmax` and
`MultiheadAttention` in `attention`; both are imported here, where PyTorch keeps them."""
from __future__ import annotations

import warnings

from ...autograd.grad_mode import no_grad
from ...factories import empty
from .. import functional as F
from ...seams import ACTIVE, learner, offer
from ..parameter import Parameter
from .attention import MultiheadAttention
from .module import Module
from .softmax import LogSoftmax, Softmax, Softmax2d, Softmin

__all__ = ["ReLU", "LeakyReLU", "Sigmoid", "Tanh", "GELU", "SiLU", "Softmax", "LogSoftmax", "ELU", "SELU", "CELU",
           "ReLU6", "Hardtanh", "Hardsigmoid", "Hardswish", "Mish", "Softplus", "LogSigmoid", "Softsign", "Tanhshrink",
           "Softshrink", "Hardshrink", "Threshold", "Softmin", "Softmax2d", "GLU", "PReLU", "RReLU",
           "MultiheadAttention"]


class ReLU(Module):
    """max(x, 0) element-wise."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        """`F.relu` with this layer's settings."""
        if ACTIVE:  # build mode: the learner's ReLU.forward (an inline seam: no call while none is installed)
            mine = learner("ReLU.forward")
            if mine is not None:
                return mine(self, input)
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """x for x > 0, negative_slope * x otherwise."""

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        """`F.leaky_relu` with this layer's settings."""
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class Sigmoid(Module):
    """1 / (1 + exp(-x)) element-wise."""

    def forward(self, input):
        """The logistic sigmoid of `input`, element-wise."""
        return input.sigmoid()


class Tanh(Module):
    """tanh(x) element-wise."""

    def forward(self, input):
        """The hyperbolic tangent of `input`, element-wise."""
        if ACTIVE:  # build mode: the learner's Tanh.forward (inline seam)
            mine = learner("Tanh.forward")
            if mine is not None:
                return mine(self, input)
        return input.tanh()


class GELU(Module):
    """Gaussian error linear unit (approximate='none' exact, or 'tanh')."""

    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        """`F.gelu` with this layer's settings."""
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """x * sigmoid(x)."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        """`F.silu` with this layer's settings."""
        return F.silu(input)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return "inplace=True" if self.inplace else ""


def _inplace_repr(inplace):
    return "inplace=True" if inplace else ""


class _AlphaActivation(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class ELU(_AlphaActivation):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""

    def forward(self, input):
        """`F.elu` with this layer's settings."""
        return F.elu(input, self.alpha, self.inplace)


class CELU(_AlphaActivation):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""

    def forward(self, input):
        """`F.celu` with this layer's settings."""
        return F.celu(input, self.alpha, self.inplace)


class SELU(Module):
    """scale * elu(x, alpha) with the self-normalizing constants."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        """`F.selu` with this layer's settings."""
        return F.selu(input, self.inplace)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return _inplace_repr(self.inplace)


class Hardtanh(Module):
    """x clipped to [min_val, max_val]."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False, min_value=None,
                 max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`", FutureWarning,
                          stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`", FutureWarning,
                          stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})")

    def forward(self, input):
        """`F.hardtanh` with this layer's settings."""
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")


class ReLU6(Hardtanh):
    """min(max(0, x), 6)."""

    def __init__(self, inplace: bool = False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return _inplace_repr(self.inplace)


class _InplaceActivation(Module):
    """An activation whose only option is `inplace` (shown in the repr only when set, unless told not to)."""

    _show_inplace = True

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        """The activation of `input` (in place when `inplace=True`)."""
        return self._function(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return _inplace_repr(self.inplace) if self._show_inplace else ""


class Hardsigmoid(_InplaceActivation):
    """relu6(x + 3) / 6."""

    _function = staticmethod(F.hardsigmoid)
    _show_inplace = False


class Hardswish(_InplaceActivation):
    """x * relu6(x + 3) / 6."""

    _function = staticmethod(F.hardswish)
    _show_inplace = False


class Mish(_InplaceActivation):
    """x * tanh(softplus(x))."""

    _function = staticmethod(F.mish)


class Softplus(Module):
    """log(1 + exp(beta * x)) / beta, linear where beta * x > threshold."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        """`F.softplus` with this layer's settings."""
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"beta={self.beta}, threshold={self.threshold}"


class LogSigmoid(Module):
    """log(sigmoid(x)), computed stably."""

    def forward(self, input):
        """`F.logsigmoid` with this layer's settings."""
        return F.logsigmoid(input)


class Softsign(Module):
    """x / (1 + |x|)."""

    def forward(self, input):
        """`F.softsign` with this layer's settings."""
        return F.softsign(input)


class Tanhshrink(Module):
    """x - tanh(x)."""

    def forward(self, input):
        """`F.tanhshrink` with this layer's settings."""
        return F.tanhshrink(input)


class _Shrink(Module):
    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return str(self.lambd)


class Softshrink(_Shrink):
    """x - lambd above lambd, x + lambd below -lambd, 0 in between."""

    def forward(self, input):
        """`F.softshrink` with this layer's settings."""
        return F.softshrink(input, self.lambd)


class Hardshrink(_Shrink):
    """x where |x| > lambd, else 0."""

    def forward(self, input):
        """`F.hardshrink` with this layer's settings."""
        return F.hardshrink(input, self.lambd)


class Threshold(Module):
    """x where x > threshold, else value."""

    def __init__(self, threshold: float, value: float, inplace: bool = False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        """`F.threshold` with this layer's settings."""
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"threshold={self.threshold}, value={self.value}" + (", inplace=True" if self.inplace else "")


class GLU(Module):
    """Gated linear unit: a * sigmoid(b) for the two halves of the input along `dim`."""

    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        """`F.glu` with this layer's settings."""
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"dim={self.dim}"


class PReLU(Module):
    """max(0, x) + weight * min(0, x) with a learnable slope (one, or one per channel), initialised to `init`."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Fill the slopes with `init` again."""
        with no_grad():
            self.weight.fill_(self.init)

    def forward(self, input):
        """`F.prelu` with this layer's settings."""
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """Randomized leaky ReLU: random negative slopes in U(lower, upper) in training, their mean in eval."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        """`F.rrelu` with this layer's settings."""
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


offer("ReLU.forward", ReLU.forward)
offer("Tanh.forward", Tanh.forward)
