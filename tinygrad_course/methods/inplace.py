"""How a tensor is changed in place (`x.add_(y)`, `x[i] = v`) without breaking autograd.

An in-place op runs its out-of-place twin on the old values and writes the result into the tensor's
storage (`_write`, in the core); the tensor takes the result's history and its version counter goes up,
so a backward that saved the old values raises PyTorch's error. Writing through a view gives the base
the history (`CopySlices`, as in PyTorch) and re-derives the view from it. `Tensor` lists this family as a
base; the engine calls `_refresh_view_history` through the tensor.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..autograd.grad_mode import _state
from ..ops.indexing import AdvancedGetItem, AsStridedView, CopySlices
from ..tensor_base import _address, _wrap


class InplaceMachinery:
    """The private methods every in-place op goes through."""

    __slots__ = ()

    def _check_inplace(self, through_view=False):
        """Raise PyTorch's error for in-place ops on leaves that require grad (outside no_grad).
        `through_view`: the write goes through an indexing view (`x[i] = v`)."""
        if _state.enabled:
            if self._requires_grad and self.grad_fn is None and through_view:
                raise RuntimeError(
                    "a view of a leaf Variable that requires grad is being used in an in-place operation. "
                    "Hint: wrap parameter updates in `with tc.no_grad():`."
                )
            if self._requires_grad and self.grad_fn is None:
                raise RuntimeError(
                    "a leaf Variable that requires grad is being used in an in-place operation. "
                    "Hint: wrap parameter updates in `with tc.no_grad():`."
                )
            base = self._base
            # a view that does not require grad while its base does is detached (`x.data`, `x.detach()`)
            if base is not None and self._requires_grad and base._requires_grad and base.grad_fn is None:
                raise RuntimeError(
                    "a view of a leaf Variable that requires grad is being used in an in-place operation."
                )

    def _inplace(self, fn, *args, **kwargs):
        """Run out-of-place `fn(self, ...)` and write the result into this tensor's storage."""
        self._check_inplace()
        others_need_grad = any(getattr(a, "_requires_grad", False) for a in args)
        record = _state.enabled and (self._requires_grad or others_need_grad)
        if record:
            base = self._base
            if base is not None and (self._requires_grad or not base._requires_grad):  # not a detached view
                return self._inplace_on_view(fn, args, kwargs)
            old = _wrap(self._data.copy())
            old._requires_grad, old.grad_fn, old._output_nr = self._requires_grad, self.grad_fn, self._output_nr
            result = fn(old, *args, **kwargs)
        else:
            result = fn(self, *args, **kwargs)
        self._write(result)
        if record and result.grad_fn is not None:
            self.grad_fn, self._output_nr, self._requires_grad = result.grad_fn, result._output_nr, True
        return self

    def _inplace_on_view(self, fn, args, kwargs):
        """In-place op on a view whose base is in the graph: the base gets the new history
        (`CopySlices`, as in PyTorch) and this view is re-derived from it."""
        base = self._base
        idx = _positions_in_base(self, base)
        if idx is None:
            raise RuntimeError(
                "In-place operations on this view of a tensor that requires grad are not supported. "
                "Hint: compute a new tensor instead (e.g. with tc.where or tc.cat) rather than modifying a slice."
            )
        old = _wrap(base._data.copy())
        old._requires_grad, old.grad_fn, old._output_nr = base._requires_grad, base.grad_fn, base._output_nr
        result = fn(AdvancedGetItem.apply(old, idx, False), *args, **kwargs)
        if result.dtype is not self.dtype:
            if not _dt.can_cast(result.dtype, self.dtype):
                self._write(result)  # raises PyTorch's casting error
            result = result.to(self.dtype)
        new_base = CopySlices.apply(old, result, idx, False)
        base._write(new_base)
        base.grad_fn, base._output_nr, base._requires_grad = new_base.grad_fn, 0, True
        view = AsStridedView.apply(new_base, idx, False)
        self.grad_fn, self._output_nr, self._requires_grad = view.grad_fn, 0, True
        self._view_version = self._version[0]
        return self

    def _refresh_view_history(self):
        """Give a view whose base was modified in place since the view was made (`a = y[0]; y.mul_(2)`)
        a grad_fn that reads it from the base's current history, as PyTorch regenerates it."""
        base = self._base
        self._view_version = self._version[0]
        if self.grad_fn is None or base.grad_fn is None:
            return  # detached views (leaves of their own), and views of leaves (whose history cannot change)
        idx = _positions_in_base(self, base)
        if idx is not None:
            view = AsStridedView.apply(base, idx, False)
            self.grad_fn, self._output_nr = view.grad_fn, 0


def _positions_in_base(view, base):
    """Index (a tuple of integer arrays) of the view's elements inside its base, or None when the
    base's layout is not row-major."""
    b = base._data
    if not b.flags.c_contiguous or view._data.size == 0:
        return None
    xp = base._xp
    item = b.itemsize
    offset = (_address(view._data) - _address(b)) // item
    flat = xp.arange(b.size, dtype=np.int64)[offset:]
    strides = tuple(s // item * flat.itemsize for s in view._data.strides)
    pos = xp.lib.stride_tricks.as_strided(flat, shape=view._data.shape, strides=strides).copy()
    return xp.unravel_index(pos, b.shape)
