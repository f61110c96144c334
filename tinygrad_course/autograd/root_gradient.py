"""Where a backward pass starts: the gradient of each output (PyTorch's `_make_grads` and the engine's checks of a
given gradient), and build mode's seam for the learner's `root_gradient` (exercise 02d.1), which makes it for a
pass from one output.
"""
from __future__ import annotations

import numpy as np

from .. import seams
from ..tensor_base import TensorBase, _wrap


def root_grads(outputs, grad_outputs, create_graph):
    """The gradient each output's pass starts from, as PyTorch's `_make_grads` and engine make it: ones of the
    output's shape for a one-element output that requires grad (None for one that does not: the engine's root node
    raises), a given gradient checked against the output's shape and device and cast to its dtype."""
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            if not out._requires_grad:  # nothing to make: the engine's `_root_node` raises PyTorch's "element i"
                grads.append(None)
                continue
            if out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if out.dtype.category != 2:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {out.dtype}")
            data = out._data  # NumPy's ones directly on the CPU (`_xp` is one call more on every backward)
            g = _wrap(np.ones(data.shape, out.dtype.np_dtype) if type(data) is np.ndarray else
                      out._xp.ones(data.shape, dtype=out.dtype.np_dtype))
        else:
            if not isinstance(g, TensorBase):
                g = _wrap(out._xp.asarray(g, dtype=out.dtype.np_dtype))
            if tuple(g.shape) != tuple(out.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] "
                                   f"has a shape of {out.shape}.")
            if g.device != out.device:
                raise RuntimeError(
                    f"invalid gradient at index {i} - expected device {out.device} but got {g.device}"
                )
            if g.dtype is not out.dtype:
                g = g.to(out.dtype)
            if not create_graph:
                g = g.detach()
        grads.append(g)
    return grads


def root_gradient(output, gradient=None):
    """The gradient `output.backward(gradient)` starts from (the reference of build mode's `root_gradient`)."""
    grad = root_grads((output,), (gradient,), True)[0]
    if grad is None:
        raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
    return grad


seams.offer("root_gradient", root_gradient)


def learner_root_grads(outputs, grad_outputs, create_graph):
    """Build mode: the learner's `root_gradient(output, gradient)` for a pass from one output (its gradient a
    tensor or None), its result then checked, cast and detached as a given gradient; None when the reference
    makes the gradients (nothing installed, several outputs, a gradient given as a number)."""
    if len(outputs) != 1 or not (grad_outputs[0] is None or isinstance(grad_outputs[0], TensorBase)):
        return None
    mine = seams.learner("root_gradient")
    return None if mine is None else root_grads(outputs, (mine(outputs[0], grad_outputs[0]),), create_graph)
