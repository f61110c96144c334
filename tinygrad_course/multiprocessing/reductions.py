"""How tensors travel between processes, like `torch.multiprocessing.reductions`: a tensor in shared
memory (`share_memory_()`) is sent as the name of its segment and its layout, so the receiver maps the
same memory; any other tensor is sent as a copy of its values. Parameters stay Parameters."""
from __future__ import annotations

from multiprocessing.reduction import ForkingPickler

from .. import _shared
from ..nn.parameter import Parameter
from ..tensor import Tensor
from ..tensor_base import _wrap


def rebuild_shared(path, size, offset, shape, strides, dtype, requires_grad, is_parameter):
    """The receiving side of a shared tensor: a tensor viewing the same shared memory."""
    t = _wrap(_shared.attach(path, size, offset, shape, strides, dtype))
    if is_parameter:
        return Parameter(t, requires_grad)
    t._requires_grad = requires_grad
    return t


def reduce_tensor(t):
    """Reduce `t` for `ForkingPickler`: shared storage by name, anything else by value."""
    loc = _shared.shared_location(t._data) if t._device.type == "cpu" else None
    if loc is None:
        return t.__reduce_ex__(4)
    path, offset, size = loc
    arr = t._data
    return (rebuild_shared, (path, size, offset, arr.shape, arr.strides, arr.dtype.str, t._requires_grad,
                             isinstance(t, Parameter)))


def init_reductions() -> None:
    """Register the reductions with the pickler multiprocessing uses (done when tc.multiprocessing loads)."""
    ForkingPickler.register(Tensor, reduce_tensor)
    ForkingPickler.register(Parameter, reduce_tensor)
