"""`Parameter`: a tensor that a `Module` registers as one of its learnable weights."""
from __future__ import annotations

from ..factories import empty
from ..seams import ACTIVE, component, learner, offer
from ..tensor import Tensor


class Parameter(Tensor):
    """A leaf tensor that is a module parameter, like `torch.nn.Parameter`.

    Assigning one to a module attribute registers it in `module.parameters()`. It shares the data
    of the tensor it wraps and requires grad by default.
    """

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if ACTIVE:  # build mode: the learner's Parameter.__new__ (inline: no call while nothing is installed)
            mine = learner("Parameter.__new__")
            if mine is not None:
                return mine(cls, data, requires_grad)
        if data is None:
            data = empty(0)
        return Tensor._make_subclass(cls, data, requires_grad)

    def __init__(self, data=None, requires_grad=True):
        pass

    @component("Parameter.__repr__")
    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self.detach(), self._requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.detach().clone(), self._requires_grad)
        memo[id(self)] = result
        return result


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


# offered as a component; its seam is inline (above), so `seams.reference` gives the method itself
offer("Parameter.__new__", Parameter.__new__)
