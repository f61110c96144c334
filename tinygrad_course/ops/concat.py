"""Joining and splitting: cat, stack, unbind and split. cat and stack copy (promoting to a common dtype);
unbind and split return views of their input.
"""
from __future__ import annotations

from .. import dtypes as _dt
from .. import factories
from ..autograd.engine import Op
from ..shapes import normalize_dim
from ._util import check_same_device


def _cat_alike(ctx, tensors, dim):
    """The concatenation of tensors of one dtype and device whose sizes match outside `dim` (the usual call, in
    one pass); None when anything differs (promotion, legacy empty tensors, errors: `Cat.forward` handles it)."""
    ref = tensors[0]
    dtype, device, shape = ref.dtype, ref._device, ref._data.shape
    nd = len(shape)
    if not nd:
        return None
    d = normalize_dim(dim, nd)
    others = shape[:d] + shape[d + 1:]
    for t in tensors:
        s = t._data.shape
        if t.dtype is not dtype or t._device is not device or len(s) != nd or s[:d] + s[d + 1:] != others:
            return None
    if ctx.needs_input_grad:  # recorded: the backward's slices
        ctx.d, ctx.parts = d, [(t._data.shape[d], dtype) for t in tensors]
    return ref._xp.concatenate([t._data for t in tensors], axis=d)


class Cat(Op):
    node_name = "CatBackward0"

    @staticmethod
    def forward(ctx, *tensors, dim=0):
        if not tensors:
            raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
        out = _cat_alike(ctx, tensors, dim)
        if out is not None:
            return out
        first = tensors[0].dtype
        rd = None  # every tensor's dtype is `first`
        for t in tensors:
            if t.dtype is not first:
                rd = _dt.result_type(*tensors)
                break
        shapes = [t._data.shape for t in tensors]
        # PyTorch still skips legacy empty 1-D tensors of shape (0,) in cat.
        skip = [s == (0,) for s in shapes] if (0,) in shapes else [False] * len(shapes)
        kept = ([t for t, s in zip(tensors, skip) if not s] or [tensors[0]]) if (0,) in shapes else tensors
        ref = kept[0]
        ref_shape = ref._data.shape
        nd = len(ref_shape)
        if nd == 0:
            raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
        d = normalize_dim(dim, nd)
        others = ref_shape[:d] + ref_shape[d + 1:]
        for i, t in enumerate(tensors):
            if skip[i] and t is not ref:
                continue
            check_same_device(ref, t)
            shape = shapes[i]
            if len(shape) != nd:
                raise RuntimeError(f"Tensors must have same number of dimensions: got {nd} and {len(shape)}")
            if shape[:d] + shape[d + 1:] != others:
                k = next(k for k in range(nd) if k != d and shape[k] != ref_shape[k])
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size {ref_shape[k]} but "
                    f"got size {shape[k]} for tensor number {i} in the list."
                )
        ctx.d = d
        if ctx.needs_input_grad:  # recorded: the backward's slices
            ctx.parts = [(None if s else shape[d], t.dtype) for t, s, shape in zip(tensors, skip, shapes)]
        if rd is None:
            arrays = [t._data for t in kept]
        else:
            arrays = [t._data if t.dtype is rd else t._data.astype(rd.np_dtype) for t in kept]
        return ref._xp.concatenate(arrays, axis=d)

    @staticmethod
    def backward(ctx, g):
        grads = []
        start = 0
        for size, dt in ctx.parts:
            if size is None:
                grads.append(factories.zeros(0, dtype=dt, device=g.device))
                continue
            part = g.narrow(ctx.d, start, size)
            grads.append(part if part.dtype is dt else part.to(dt))
            start += size
        return tuple(grads)


class Stack(Op):
    node_name = "StackBackward0"

    @staticmethod
    def forward(ctx, *tensors, dim=0):
        if not tensors:
            raise RuntimeError("stack expects a non-empty TensorList")
        shape = tensors[0]._data.shape
        for i, t in enumerate(tensors):
            check_same_device(tensors[0], t)
            if t._data.shape != shape:
                raise RuntimeError(
                    f"stack expects each tensor to be equal size, but got [{', '.join(map(str, shape))}] at entry 0 "
                    f"and [{', '.join(map(str, t._data.shape))}] at entry {i}"
                )

        rd = _dt.result_type(*tensors)
        d = normalize_dim(dim, len(shape) + 1)
        ctx.d, ctx.n, ctx.dtypes = d, len(tensors), [t.dtype for t in tensors]
        return tensors[0]._xp.stack([t._data if t.dtype is rd else t._data.astype(rd.np_dtype) for t in tensors], axis=d)

    @staticmethod
    def backward(ctx, g):
        return tuple(p if p.dtype is dt else p.to(dt) for p, dt in zip(g.unbind(ctx.d), ctx.dtypes))


class Unbind(Op):
    node_name = "UnbindBackward0"
    view = True

    @staticmethod
    def forward(ctx, x, dim=0):
        d = normalize_dim(dim, x.ndim)
        ctx.d, ctx.shape, ctx.dtype, ctx.device = d, x._data.shape, x.dtype, x._device
        return tuple(x._data[(slice(None),) * d + (i,)] for i in range(x._data.shape[d]))

    @staticmethod
    def backward(ctx, *grads):
        shape = ctx.shape[:ctx.d] + ctx.shape[ctx.d + 1:]
        parts = [g if g is not None else factories.zeros(shape, dtype=ctx.dtype, device=ctx.device) for g in grads]
        return stack(parts, ctx.d)


class Split(Op):
    node_name = "SplitWithSizesBackward0"
    view = True

    @staticmethod
    def forward(ctx, x, sizes, dim=0, by_size=False):
        d = normalize_dim(dim, x.ndim)
        total = x._data.shape[d]
        if sum(sizes) != total:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {total} (input tensor's size at dimension "
                f"{d}), but got split_sizes={list(sizes)}"
            )
        ctx.d, ctx.shape, ctx.sizes, ctx.dtype, ctx.device = d, x._data.shape, sizes, x.dtype, x._device
        if by_size and ctx.needs_input_grad:
            ctx.__class__ = _SPLIT_BY_SIZE_NODE
        out, start = [], 0
        for s in sizes:
            out.append(x._data[(slice(None),) * d + (slice(start, start + s),)])
            start += s
        return tuple(out)

    @staticmethod
    def backward(ctx, *grads):
        parts = []
        for g, s in zip(grads, ctx.sizes):
            if g is None:
                shape = list(ctx.shape)
                shape[ctx.d] = s
                g = factories.zeros(shape, dtype=ctx.dtype, device=ctx.device)
            parts.append(g)
        return cat(parts, ctx.d)


_SPLIT_BY_SIZE_NODE = type("SplitBackward0", (Split._Node,), {})  # x.split(int) rather than x.split(list)


def cat(tensors, dim=0, *, out=None):
    """Concatenate tensors along an existing dimension, like `torch.cat`."""
    return Cat.apply(*tensors, dim=dim)


concat = concatenate = cat


def stack(tensors, dim=0, *, out=None):
    """Stack equally shaped tensors along a new dimension, like `torch.stack`."""
    return Stack.apply(*tensors, dim=dim)
