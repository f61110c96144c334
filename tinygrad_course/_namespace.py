"""Which name reprs use for the framework: `tc` (`tc.Size([2])`, `tc.float64`) or `torch`.

A program written for PyTorch and run with `import tinygrad_course as torch` (or with `torch` mapped to
the framework in `sys.modules`) prints `torch.Size([2])` and `torch.float64`, exactly as under PyTorch.
`tc.set_printoptions(namespace="torch")` forces that spelling, `namespace="tc"` the framework's own, and
`namespace=None` returns to detecting it."""
from __future__ import annotations

import sys

_PACKAGE = __name__.rpartition(".")[0]
_forced: list = [None]


def set_namespace(name) -> None:
    """Force reprs to print `name.` ("torch" or "tc") before Size/dtype names; None detects it again."""
    if name not in (None, "torch", "tc"):
        raise ValueError(f"namespace must be 'torch', 'tc' or None, got {name!r}")
    _forced[0] = name


def _is_package(obj) -> bool:
    return getattr(obj, "__name__", None) == _PACKAGE


def namespace() -> str:
    """'torch' when the framework stands in for PyTorch (forced, `sys.modules['torch']`, or a `torch` name
    in the running script bound to the framework), else 'tc'."""
    if _forced[0] is not None:
        return _forced[0]
    if _is_package(sys.modules.get("torch")):
        return "torch"
    main = sys.modules.get("__main__")
    return "torch" if _is_package(getattr(main, "torch", None)) else "tc"
