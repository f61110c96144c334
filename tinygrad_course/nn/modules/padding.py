"""Padding layers: `ZeroPad1d/2d/3d`, `ConstantPad1d/2d/3d`, `ReflectionPad1d/2d/3d`, `ReplicationPad1d/2d/3d`,
`CircularPad1d/2d/3d` (each a fixed call of `F.pad`)."""
from __future__ import annotations

from .. import functional as F
from .module import Module

_DIMS = (1, 2, 3)
__all__ = [f"{kind}Pad{d}d" for kind in ("Zero", "Constant", "Reflection", "Replication", "Circular") for d in _DIMS]


class _PadNd(Module):
    """F.pad with a fixed `padding` (an int pads every side) and mode."""

    _dims = 1
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = tuple(padding) if isinstance(padding, (tuple, list)) else (padding,) * (2 * self._dims)
        if len(self.padding) != 2 * self._dims:
            raise ValueError(f"{type(self).__name__}: padding must be an int or a {2 * self._dims}-tuple, "
                             f"got {padding}")

    def _check_input_dim(self, input):
        if input.ndim not in (self._dims + 1, self._dims + 2):
            raise ValueError(f"expected {self._dims + 1}D or {self._dims + 2}D input (got {input.ndim}D input)")

    def forward(self, input):
        """`F.pad` with this layer's settings."""
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        """`F.pad` with this layer's settings."""
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input):
        """Pad `input` circularly (wrapping around) by `padding`."""
        self._check_input_dim(input)
        return F.pad(input, self.padding, "circular")


def _make(kind, base, dims, doc, mode=None):
    attrs = {"_dims": dims, "__doc__": doc.format(d=dims), "__module__": __name__}
    if mode is not None:
        attrs["_mode"] = mode
    return type(f"{kind}Pad{dims}d", (base,), attrs)


for _d in _DIMS:
    globals()[f"ZeroPad{_d}d"] = _make("Zero", _ZeroPadNd, _d, "Pad the last {d} dim(s) with zeros.")
    globals()[f"ConstantPad{_d}d"] = _make("Constant", _ConstantPadNd, _d, "Pad the last {d} dim(s) with a constant.")
    globals()[f"ReflectionPad{_d}d"] = _make("Reflection", _PadNd, _d,
                                            "Pad the last {d} dim(s) with their mirror image (edge not repeated).",
                                            "reflect")
    globals()[f"ReplicationPad{_d}d"] = _make("Replication", _PadNd, _d, "Pad the last {d} dim(s) by repeating the edge.",
                                             "replicate")
    globals()[f"CircularPad{_d}d"] = _make("Circular", _CircularPadNd, _d,
                                          "Pad the last {d} dim(s) by wrapping around (periodic padding).")
del _d
