"""`Parameter`: a tensor that a `Module` registers as one of its learnable weights."""
from __future__ import annotations

from ..factories import empty
from ..tensor import Tensor
from ..tensor_base import TensorBase


class Parameter(Tensor):
    """A leaf tensor that is a module parameter, like `torch.nn.Parameter`.

    Assigning one to a module attribute registers it in `module.parameters()`. It shares the data
    of the tensor it wraps and requires grad by default.
    """

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        p = object.__new__(cls)
        for slot in TensorBase.__slots__[:-1]:  # the data fields (not __weakref__)
            setattr(p, slot, getattr(data, slot))
        p.grad = None
        p.grad_fn = None
        p._grad_acc = None
        p._hooks = None
        p._base = None
        p._output_nr = 0
        p._requires_grad = False
        if requires_grad:
            p.requires_grad_(True)
        return p

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self.detach(), self._requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = Parameter(self.detach().clone(), self._requires_grad)
        memo[id(self)] = result
        return result


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)
