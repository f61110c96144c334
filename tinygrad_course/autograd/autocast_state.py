"""The autocast switch that `Op.apply` consults; `tc.autocast` (in `amp/`, a higher layer) sets it.

`autocast_state.active` is True while at least one `tc.autocast` region is enabled; only then does
`Op.apply` hand its arguments to `autocast_state.cast_inputs`, so ops pay one attribute lookup when
autocast is off. `amp/autocast_mode.py` installs its casting rule in `cast_inputs` when it is imported
(it always is before a region can be entered), so this layer never imports the one above it.
"""
from __future__ import annotations


def _no_casting(op_cls, args):
    return args


class _AutocastState:
    __slots__ = ("active", "enabled", "dtype", "cast_inputs")

    def __init__(self):
        self.active = False
        self.enabled = {"cpu": False, "cuda": False}
        self.dtype = {}  # device type -> tc dtype, filled by autocast_mode on first use
        self.cast_inputs = _no_casting  # (op class, positional args) -> args cast as the op lists say


autocast_state = _AutocastState()
