"""Convolutions in `tc.nn.functional`: conv1d, conv2d, their transposes, and unfold/fold (im2col/col2im).

conv2d is im2col plus one matmul; the 1-d layers run the 2-d ones over a height-1 image.
"""
from __future__ import annotations

from ...amp.autocast_mode import autocast_args
from ...ops import conv as _conv
from ...ops import conv_transpose as _convt
from ._utils import _batched, _pair, _shape_str, _single
from .padding import pad


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D cross-correlation of (N, C, H, W) input with (O, C/groups, kh, kw) weight (im2col + one matmul)."""
    x, unbatched = _batched(input, "conv2d")
    stride, dilation = _pair(stride), _pair(dilation)
    o, cg, kh, kw = weight.shape
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0, 0)
        elif padding == "same":
            if stride != (1, 1):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            total = (dilation[0] * (kh - 1), dilation[1] * (kw - 1))
            if total[0] % 2 or total[1] % 2:
                left = (total[0] // 2, total[1] // 2)
                x = pad(x, (left[1], total[1] - left[1], left[0], total[0] - left[0]))
                padding = (0, 0)
            else:
                padding = (total[0] // 2, total[1] // 2)
        else:
            raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
    else:
        padding = _pair(padding)
    if x.shape[1] != cg * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {_shape_str(weight.shape)}, expected input{_shape_str(x.shape)} "
            f"to have {cg * groups} channels, but got {x.shape[1]} channels instead"
        )
    if o % groups:
        raise RuntimeError("Given groups, weight's out channels must be divisible by groups")
    for i, (size, k) in enumerate(zip(x.shape[2:], (kh, kw))):
        if size + 2 * padding[i] < dilation[i] * (k - 1) + 1:
            raise RuntimeError(
                f"Calculated padded input size per channel: ({x.shape[2] + 2 * padding[0]} x {x.shape[3] + 2 * padding[1]}). "
                f"Kernel size: ({dilation[0] * (kh - 1) + 1} x {dilation[1] * (kw - 1) + 1}). "
                "Kernel size can't be greater than actual input size"
            )
    x, weight, bias = autocast_args("Conv2d", x, weight, bias)  # tc.autocast casts before the dtype check
    if weight.dtype is not x.dtype:
        raise RuntimeError(
            f"Input type ({x.type()}) and weight type ({weight.type()}) should be the same"
        )
    out = _conv.Conv2d.apply(x, weight, bias, stride, padding, dilation, groups)
    return out.squeeze(0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D cross-correlation of (N, C, L) input with (O, C/groups, k) weight (conv2d over a height-1 image)."""
    x, unbatched = _batched(input, "conv1d", 1)
    if weight.ndim != 3:
        raise RuntimeError(f"weight should have at least three dimensions for conv1d, got {weight.ndim}")
    if x.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {_shape_str(weight.shape)}, expected input{_shape_str(x.shape)} "
            f"to have {weight.shape[1] * groups} channels, but got {x.shape[1]} channels instead"
        )
    pad2 = padding if isinstance(padding, str) else (0, _single(padding))
    out = conv2d(x.unsqueeze(2), weight.unsqueeze(2), bias, (1, _single(stride)), pad2, (1, _single(dilation)), groups)
    out = out.squeeze(2)
    return out.squeeze(0) if unbatched else out


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 2-D convolution (the gradient of conv2d w.r.t. its input): (N, Cin, H, W) with weight
    (Cin, Cout/groups, kh, kw) -> (N, Cout, (H-1)*stride - 2*padding + dilation*(k-1) + output_padding + 1, ...)."""
    x, unbatched = _batched(input, "conv_transpose2d")
    stride, padding, output_padding, dilation = _pair(stride), _pair(padding), _pair(output_padding), _pair(dilation)
    if weight.ndim != 4:
        raise RuntimeError(f"weight should have at least four dimensions for conv_transpose2d, got {weight.ndim}")
    if x.shape[1] != weight.shape[0]:
        raise RuntimeError(
            f"Given transposed=1, weight of size {_shape_str(weight.shape)}, expected input{_shape_str(x.shape)} "
            f"to have {weight.shape[0]} channels, but got {x.shape[1]} channels instead"
        )
    if weight.shape[0] % groups:
        raise RuntimeError("Given groups, weight's in channels must be divisible by groups")
    if any(op >= max(s, d) for op, s, d in zip(output_padding, stride, dilation)):
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            f"output_padding_height: {output_padding[0]} output_padding_width: {output_padding[1]} "
            f"stride_height: {stride[0]} stride_width: {stride[1]} "
            f"dilation_height: {dilation[0]} dilation_width: {dilation[1]}"
        )
    out_hw = [_convt.conv_transpose_output_size(size, k, s, p, op, d) for size, k, s, p, op, d in
              zip(x.shape[2:], weight.shape[2:], stride, padding, output_padding, dilation)]
    if min(out_hw) <= 0:
        raise RuntimeError(f"Given input size per channel: ({x.shape[2]} x {x.shape[3]}). Calculated output size per "
                           f"channel: ({out_hw[0]} x {out_hw[1]}). Output size is too small")
    if weight.dtype is not x.dtype:
        raise RuntimeError(f"Input type ({x.type()}) and weight type ({weight.type()}) should be the same")
    out = _convt.ConvTranspose2d.apply(x, weight, bias, stride, padding, output_padding, dilation, groups)
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 1-D convolution: (N, Cin, L) with weight (Cin, Cout/groups, k) -> (N, Cout, L_out)."""
    x, unbatched = _batched(input, "conv_transpose1d", 1)
    if weight.ndim != 3:
        raise RuntimeError(f"weight should have at least three dimensions for conv_transpose1d, got {weight.ndim}")
    out = conv_transpose2d(x.unsqueeze(2), weight.unsqueeze(2), bias, (1, _single(stride)), (0, _single(padding)),
                           (0, _single(output_padding)), groups, (1, _single(dilation))).squeeze(2)
    return out.squeeze(0) if unbatched else out


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding patches as columns: (N, C, H, W) -> (N, C*kh*kw, L), like `F.unfold`."""
    if input.ndim < 3:  # PyTorch's own error here comes from indexing the channel dimension
        raise IndexError(f"Dimension out of range (expected to be in range of [-{max(input.ndim, 1)}, "
                         f"{max(input.ndim, 1) - 1}], but got 2)")
    if input.ndim > 4:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {_shape_str(input.shape)}")
    x, unbatched = _batched(input, "unfold")
    kernel, dilation, padding, stride = _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    n = x.shape[0]
    cols = _conv.Im2Col.apply(x, kernel, stride, padding, dilation)  # (C*kh*kw, N*L)
    out = cols.reshape(cols.shape[0], n, -1).transpose(0, 1)
    return out.squeeze(0) if unbatched else out


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sum sliding-block columns (N, C*kh*kw, L) back into an (N, C, H, W) image (col2im; inverse layout of unfold)."""
    out_hw, kernel = _pair(output_size), _pair(kernel_size)
    dilation, padding, stride = _pair(dilation), _pair(padding), _pair(stride)
    unbatched = input.ndim == 2
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {_shape_str(input.shape)}")
    x = input.unsqueeze(0) if unbatched else input
    n, ckk, length = x.shape
    kk = kernel[0] * kernel[1]
    if ckk % kk:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={ckk} and kernel_size={kernel}")
    blocks = [_conv.conv_output_size(s, k, st, p, d) for s, k, st, p, d in zip(out_hw, kernel, stride, padding, dilation)]
    if blocks[0] * blocks[1] != length:
        raise RuntimeError(
            f"Given output_size={out_hw}, kernel_size={kernel}, dilation={dilation}, padding={padding}, "
            f"stride={stride}, expected size of input's dimension 2 to match the calculated number of sliding blocks "
            f"{blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got input.size(2)={length}."
        )
    cols = x.transpose(0, 1).reshape(ckk, n * length)
    out = _conv.Col2Im.apply(cols, (n, ckk // kk) + out_hw, kernel, stride, padding, dilation)
    return out.squeeze(0) if unbatched else out
