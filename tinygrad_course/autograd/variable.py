"""`tc.autograd.Variable`: the pre-0.4 wrapper, kept as in PyTorch for old tutorials.

Since PyTorch 0.4 a Variable *is* a tensor: `Variable(t, requires_grad=True)` returns a tensor sharing
`t`'s data, and `isinstance(t, Variable)` is True for every tensor."""
from __future__ import annotations

import warnings

from ..tensor_base import TensorBase


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, TensorBase)

    def __call__(cls, data=None, requires_grad=False, volatile=False):
        if data is None:
            raise TypeError("Variable data has to be a tensor, but got NoneType")
        if not isinstance(data, TensorBase):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        out = data.detach()
        out.requires_grad_(requires_grad)
        return out


class Variable(metaclass=_VariableMeta):
    """`Variable(data, requires_grad=False)`: a tensor sharing `data`'s storage (PyTorch's legacy API)."""
