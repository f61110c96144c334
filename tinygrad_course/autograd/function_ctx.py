"""What a custom `Function`'s `forward` may declare on its `ctx` besides the tensors it saves, as PyTorch's
`torch.autograd.function.FunctionCtx`: inputs it modified in place, outputs without a gradient, and whether
`backward` receives zeros or None for unused outputs. The engine's `Node` (every `ctx`) inherits it.
"""
from __future__ import annotations


class FunctionCtx:
    """The declarations a custom `forward` makes on `ctx` (read by `Function.apply` and `Node.apply`)."""

    def mark_dirty(self, *tensors):
        """Declare inputs modified in place by a custom `forward` (their version is bumped)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        """Declare outputs of a custom `forward` that have no gradient."""
        self._non_diff = tensors

    def set_materialize_grads(self, value: bool):
        """Whether `backward` receives zero tensors (True, default) or None for unused outputs."""
        self._materialize = value
