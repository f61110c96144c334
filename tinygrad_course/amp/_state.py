"""The autocast switch that `Op.apply` consults (kept free of framework imports so the core can import it).

`autocast_state.active` is True while at least one `tc.autocast` region is enabled; only then does
`Op.apply` hand its arguments to `cast_inputs`, so ops pay one attribute lookup when autocast is off.
"""
from __future__ import annotations


class _AutocastState:
    __slots__ = ("active", "enabled", "dtype")

    def __init__(self):
        self.active = False
        self.enabled = {"cpu": False, "cuda": False}
        self.dtype = {}  # device type -> tc dtype, filled by autocast_mode on first use


autocast_state = _AutocastState()


def cast_inputs(op_cls, args):
    """The op's positional arguments, cast the way the autocast op lists say (see autocast_mode)."""
    from .autocast_mode import _cast_inputs

    return _cast_inputs(op_cls, args)
