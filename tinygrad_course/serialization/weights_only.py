"""Whether `tc.load` unpickles only weights, decided as PyTorch 2.13's `torch.load` decides it.

`weights_only=None` (not given) means True unless a `pickle_module` is passed. The environment switch
`TORCH_FORCE_WEIGHTS_ONLY_LOAD` ("1", "y", "yes" or "true") forces True even over an explicit False;
`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` turns the default into False, with a warning, but never overrides an
explicit `weights_only=True`. Setting both is an error."""
from __future__ import annotations

import os
import warnings

_TRUE = ("1", "y", "yes", "true")


def _switch(name):
    return os.getenv(name, "0").lower() in _TRUE


def resolve(weights_only, pickle_module):
    """The effective `weights_only` for a `tc.load(..., pickle_module=..., weights_only=...)` call."""
    not_set = weights_only is None
    if not_set:
        weights_only = pickle_module is None
    force, force_no = _switch("TORCH_FORCE_WEIGHTS_ONLY_LOAD"), _switch("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD")
    if force and force_no:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` "
                           "should be set, but both were set.")
    if force:
        weights_only = True
    elif force_no and not_set:
        warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the`weights_only` "
                      "argument was not explicitly passed to `torch.load`, forcing weights_only=False.",
                      UserWarning, stacklevel=3)
        weights_only = False
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    return bool(weights_only)
