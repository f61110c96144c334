"""2-D convolution as im2col + one matrix product, like PyTorch's `conv2d` on the CPU.

im2col: pad the input, take a `sliding_window_view` of every kernel-sized patch (a view, no copy),
and lay the patches out as the rows of one matrix of shape (N*OH*OW, C*kh*kw). The convolution is
then a single matrix product with the weight reshaped to (O, C*kh*kw). Its backward is two more
matrix products and a col2im, which adds the patch gradients back into the input with kh*kw
strided additions (no Python loop over the batch or the pixels).
"""
from __future__ import annotations

from ..autograd.engine import Op
from . import conv_runs
from .lowp import matmul_arrays
from .windows import conv_output_size, window_view
from .windows import pad_array as _pad_array


def im2col_array(xp, a, kernel, stride, padding, dilation):
    """The (C*kh*kw, N*OH*OW) patch matrix of a (N, C, H, W) array (one column per output pixel), and (OH, OW).

    Laid out channel-major so the one copy out of the window view runs along contiguous image rows.
    """
    win = window_view(xp, _pad_array(xp, a, *padding), kernel, stride, dilation)  # (N, C, OH, OW, kh, kw)
    n, c, oh, ow, kh, kw = win.shape
    cols = xp.ascontiguousarray(win.transpose(1, 4, 5, 0, 2, 3))  # (C, kh, kw, N, OH, OW)
    return cols.reshape(c * kh * kw, n * oh * ow), (oh, ow)


def col2im_array(xp, cols, input_shape, kernel, stride, padding, dilation):
    """Adjoint of `im2col_array`: add each patch column back into an (N, C, H, W) array (kh*kw strided adds)."""
    n, c, h, w = input_shape
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    oh = conv_output_size(h, kh, sh, ph, dh)
    ow = conv_output_size(w, kw, sw, pw, dw)
    patches = cols.reshape(c, kh, kw, n, oh, ow)
    # accumulate channel-major, the patches' own layout, so every strided add reads contiguous blocks;
    # one transposing copy at the end gives the (N, C, H, W) result
    out = xp.zeros((c, n, h + 2 * ph, w + 2 * pw), dtype=cols.dtype)
    for i in range(kh):
        for j in range(kw):
            r, q = i * dh, j * dw
            out[:, :, r:r + sh * (oh - 1) + 1:sh, q:q + sw * (ow - 1) + 1:sw] += patches[:, i, j]
    out = out.transpose(1, 0, 2, 3)
    return xp.ascontiguousarray(out[:, :, ph:ph + h, pw:pw + w] if ph or pw else out)


# With this many input channels or more, the forward multiplies offset by offset (a (O, C) x (C, N*OH*OW)
# product per kernel offset, summed) instead of building the whole (C*kh*kw, N*OH*OW) patch matrix: as fast
# for such C and kh*kw times less memory. With fewer channels the per-offset products are too thin for BLAS.
_MIN_CHANNELS_PER_OFFSET = 8


def _by_runs(groups, channels, stride):
    """Whether a convolution goes through `conv_runs` (stride 1, no groups, enough input channels: with
    one or a few channels the per-offset copies are too short to gain over im2col)."""
    return groups == 1 and channels >= _MIN_CHANNELS_PER_OFFSET and tuple(stride) == (1, 1)


def _input_block(xp, win, i, j):
    """The (C, N*OH*OW) input values that kernel offset (i, j) multiplies, as one contiguous block."""
    c = win.shape[1]
    return xp.ascontiguousarray(win[:, :, :, :, i, j].transpose(1, 0, 2, 3)).reshape(c, -1)


def _forward_by_offset(xp, x, weight, stride, padding, dilation):
    """The convolution (groups=1) as (O, N*OH*OW): the sum over kernel offsets of weight[:, :, i, j] times
    that offset's input block; and (OH, OW)."""
    o, c, kh, kw = weight.shape
    win = window_view(xp, _pad_array(xp, x, *padding), (kh, kw), stride, dilation)  # (N, C, OH, OW, kh, kw)
    w_t = xp.ascontiguousarray(weight.transpose(2, 3, 0, 1))  # (kh, kw, O, C)
    out = None
    for i in range(kh):
        for j in range(kw):
            part = matmul_arrays(xp, w_t[i, j], _input_block(xp, win, i, j))
            if out is None:
                out = part
            else:
                out += part
    return out, win.shape[2:4]


def _input_grad_array(xp, w, g_cols_out, input_shape, kernel, stride, padding, dilation):
    """The convolution's input gradient (groups=1) as arrays: for each kernel offset, the weight slice's
    transpose times the output gradient, added into the input positions that offset read (col2im without
    materialising the whole (C*kh*kw, N*OH*OW) patch-gradient matrix: the same sums, a ninth of the memory)."""
    n, c, h, w_in = input_shape
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    oh = conv_output_size(h, kh, sh, ph, dh)
    ow = conv_output_size(w_in, kw, sw, pw, dw)
    w_t = xp.ascontiguousarray(w.transpose(2, 3, 1, 0))  # (kh, kw, C, O)
    out = xp.zeros((c, n, h + 2 * ph, w_in + 2 * pw), dtype=g_cols_out.dtype)
    for i in range(kh):
        for j in range(kw):
            r, q = i * dh, j * dw
            part = matmul_arrays(xp, w_t[i, j], g_cols_out).reshape(c, n, oh, ow)
            out[:, :, r:r + sh * (oh - 1) + 1:sh, q:q + sw * (ow - 1) + 1:sw] += part
    out = out.transpose(1, 0, 2, 3)
    return xp.ascontiguousarray(out[:, :, ph:ph + h, pw:pw + w_in] if ph or pw else out)


def _weight_grad_array(xp, x, g_cols_out, weight_shape, kernel, stride, padding, dilation):
    """The convolution's weight gradient (groups=1) as arrays, offset by offset: the output gradient times
    the input window at that offset (the patch matrix's rows for that offset, one block at a time)."""
    o, c, kh, kw = weight_shape
    win = window_view(xp, _pad_array(xp, x, *padding), kernel, stride, dilation)  # (N, C, OH, OW, kh, kw)
    gw = xp.empty((kh, kw, o, c), dtype=g_cols_out.dtype)
    for i in range(kh):
        for j in range(kw):
            gw[i, j] = matmul_arrays(xp, g_cols_out, _input_block(xp, win, i, j).T)
    return xp.ascontiguousarray(gw.transpose(2, 3, 0, 1))


class Im2Col(Op):
    """(N, C, H, W) -> (C*kh*kw, N*OH*OW) patch matrix (differentiable; backward is col2im)."""

    node_name = "Im2ColBackward0"

    @staticmethod
    def forward(ctx, x, kernel, stride, padding, dilation):
        ctx.args = (tuple(x.shape), kernel, stride, padding, dilation)
        return im2col_array(x._xp, x._data, kernel, stride, padding, dilation)[0]

    @staticmethod
    def backward(ctx, g):
        return Col2Im.apply(g, *ctx.args)


class Col2Im(Op):
    """(C*kh*kw, N*OH*OW) patch gradients -> (N, C, H, W), summing overlaps (backward is im2col)."""

    node_name = "Col2ImBackward0"

    @staticmethod
    def forward(ctx, cols, input_shape, kernel, stride, padding, dilation):
        ctx.args = (kernel, stride, padding, dilation)
        return col2im_array(cols._xp, cols._data, input_shape, kernel, stride, padding, dilation)

    @staticmethod
    def backward(ctx, g):
        return Im2Col.apply(g, *ctx.args)


class Conv2d(Op):
    """Cross-correlation of (N, C, H, W) input with (O, C/groups, kh, kw) weight, plus bias."""

    node_name = "ConvolutionBackward0"

    @staticmethod
    def forward(ctx, x, weight, bias, stride, padding, dilation, groups):
        xp = x._xp
        o, cg, kh, kw = weight._data.shape
        n = x._data.shape[0]
        ctx.args = ((kh, kw), stride, padding, dilation)
        ctx.groups = groups
        ctx.x_shape = x._data.shape
        ctx.save_for_backward(x, weight)
        ctx.by_runs = _by_runs(groups, cg, stride)
        if ctx.by_runs:
            return conv_runs.conv_forward(xp, x._data, weight._data, None if bias is None else bias._data, padding,
                                          dilation)
        if groups == 1 and cg >= _MIN_CHANNELS_PER_OFFSET:
            out, (oh, ow) = _forward_by_offset(xp, x._data, weight._data, stride, padding, dilation)
        elif groups == 1:
            cols, (oh, ow) = im2col_array(xp, x._data, (kh, kw), stride, padding, dilation)
            out = matmul_arrays(xp, weight._data.reshape(o, -1), cols)  # (O, N*OH*OW): the whole convolution in one matmul
        else:
            cols, (oh, ow) = im2col_array(xp, x._data, (kh, kw), stride, padding, dilation)
            w_g = weight._data.reshape(groups, o // groups, -1)
            out = matmul_arrays(xp, w_g, cols.reshape(groups, -1, cols.shape[1])).reshape(o, -1)
        if bias is not None:
            out += bias._data[:, None]
        return xp.ascontiguousarray(out.reshape(o, n, oh, ow).transpose(1, 0, 2, 3))

    @staticmethod
    def backward(ctx, g):
        """The input and weight gradients through the patch matrix, as recorded ops (Col2Im / Im2Col)."""
        x, weight = ctx.saved_tensors
        need = ctx.needs_input_grad
        groups, o = ctx.groups, weight.shape[0]
        g_cols_out = g.transpose(0, 1).reshape(o, -1)  # (O, N*OH*OW), columns match the patch matrix
        gx = gw = None
        if need[0]:
            if groups == 1:
                g_cols = weight.reshape(o, -1).mT @ g_cols_out
            else:
                w_g = weight.reshape(groups, o // groups, -1)
                g_cols = (w_g.mT @ g_cols_out.reshape(groups, o // groups, -1)).reshape(-1, g_cols_out.shape[1])
            gx = Col2Im.apply(g_cols, ctx.x_shape, *ctx.args)
        if need[1]:
            cols = Im2Col.apply(x, *ctx.args)
            if groups == 1:
                gw = (g_cols_out @ cols.mT).reshape(weight.shape)
            else:
                cols_g = cols.reshape(groups, -1, cols.shape[1])
                gw = (g_cols_out.reshape(groups, o // groups, -1) @ cols_g.mT).reshape(weight.shape)
        gb = g.sum((0, 2, 3)) if len(need) > 2 and need[2] else None
        return gx, gw, gb

    @staticmethod
    def fused_backward(ctx, g):
        """The same gradients on arrays: by contiguous row runs (stride 1, many channels), else offset by offset
        without materialising the whole patch-gradient matrix."""
        if ctx.groups != 1:
            return NotImplemented
        x, weight = ctx.saved_tensors
        need = ctx.needs_input_grad
        xp = x._xp
        if ctx.by_runs:
            gx, gw = conv_runs.conv_backward(xp, x._data, weight._data, g._data, need[0], need[1], ctx.args[2],
                                             ctx.args[3])
        else:
            o = weight._data.shape[0]
            g_cols_out = g._data.transpose(1, 0, 2, 3).reshape(o, -1)
            gx = _input_grad_array(xp, weight._data, g_cols_out, ctx.x_shape, *ctx.args) if need[0] else None
            gw = _weight_grad_array(xp, x._data, g_cols_out, weight._data.shape, *ctx.args) if need[1] else None
        gb = g._data.sum(axis=(0, 2, 3)) if len(need) > 2 and need[2] else None
        return gx, gw, gb
