"""`tc.fft`: PyTorch's `torch.fft` is not part of this framework. `import tinygrad_course.fft` works so a
program's imports run; using any of its names raises NotImplementedError saying what to use instead."""
from __future__ import annotations

from ._unsupported import missing_in_module as _missing_in_module

__all__: list[str] = []


def __getattr__(name):
    raise _missing_in_module("tc.fft", name)
