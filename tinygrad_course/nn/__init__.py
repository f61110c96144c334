"""`tc.nn`: modules, layers and losses, like `torch.nn` (functional ops in `tc.nn.functional`)."""
from . import functional, init, parallel, utils
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from .parameter import Parameter
from .._unsupported import missing as _missing

__all__ = ["Parameter", "functional", "init", "utils", "parallel"] + list(_modules_all)


def __getattr__(name):
    raise _missing("tc.nn", name, f"module '{__name__}' has no attribute '{name}'")
