"""`F.pad` of `tc.nn.functional`: constant, reflect, replicate and circular padding of the last dims."""
from __future__ import annotations

from ...ops import padding as _padding
from ...ops.padding import ConstantPad as _ConstantPad
from ._utils import _shape_str


def pad(input, pad, mode="constant", value=None):
    """Pad the last dims: `pad=(left, right, top, bottom, ...)`, last dim first (constant, reflect, replicate, circular)."""
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension "
                           f"but got padding length {len(pad)} and input of dimension {input.ndim}")
    if mode != "constant":
        return pad_by_mode(input, pad, mode, value)  # reflect / replicate / circular
    return _ConstantPad.apply(input, tuple(int(p) for p in pad), 0.0 if value is None else value)


def pad_by_mode(input, pad, mode, value=None):
    """`F.pad` in 'reflect', 'replicate' or 'circular' mode (called by `F.pad` itself)."""
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    pad = tuple(int(p) for p in pad)
    k = len(pad) // 2
    if k not in (1, 2, 3) or input.ndim not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
        )
    for d in range(k):
        dim = input.ndim - 1 - d
        size, lo, hi = input.shape[dim], pad[2 * d], pad[2 * d + 1]
        if mode == "reflect" and (lo >= size or hi >= size):
            raise RuntimeError(
                f"Argument #4: Padding size should be less than the corresponding input dimension, but got: "
                f"padding ({lo}, {hi}) at dimension {dim} of input {_shape_str(input.shape)}"
            )
        if mode == "circular" and (lo > size or hi > size):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if size + lo + hi <= 0 or (size == 0 and mode != "constant"):
            raise RuntimeError(f"input tensor with shape {_shape_str(input.shape)} and padding {list(pad)} "
                               f"gives an empty output (dimension {dim}).")
    return _padding.index_pad_op(mode, k).apply(input, pad, mode)
