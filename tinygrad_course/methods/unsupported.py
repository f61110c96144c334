"""`Tensor.__getattr__` for PyTorch methods the framework does not implement (`x.stft(...)`,
`x.quantile(...)`, `x.svd()`, ...): it raises `UnsupportedError` (a NotImplementedError that is also an
AttributeError) naming the method and what to use instead; other missing names get Python's usual
AttributeError. It runs only when normal lookup fails, so it costs nothing on the methods that exist."""
from __future__ import annotations

from .._unsupported import missing

METHOD_FUNCTIONS: tuple[str, ...] = ()
__all__: list[str] = []


class UnsupportedMethods:
    """The fallback for names a tensor does not have."""

    __slots__ = ()

    def __getattr__(self, name):
        raise missing("Tensor", name, f"'{type(self).__name__}' object has no attribute '{name}'")
