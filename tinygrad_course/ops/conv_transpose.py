"""Transposed 2-D convolution (PyTorch's `conv_transpose2d`): the adjoint of `conv2d` with respect to its input.

Forward: one matrix product turns every input pixel into a kernel-sized patch of output contributions
(the columns of the patch matrix), then col2im adds the overlapping patches into the output image.
Backward: the input gradient is an ordinary convolution of the output gradient with the same weight,
and the weight gradient pairs the input with the im2col patches of the output gradient; both are
written with differentiable framework ops, so second derivatives work.
"""
from __future__ import annotations

from ..autograd.engine import Op
from .conv import Conv2d, Im2Col
from .windows import conv_output_size
from .lowp import matmul_arrays


def conv_transpose_output_size(size, kernel, stride, padding, output_padding, dilation):
    """Output length along one spatial dim of a transposed convolution (PyTorch's formula)."""
    return (size - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1


class ConvTranspose2d(Op):
    """(N, Cin, H, W) input, (Cin, Cout/groups, kh, kw) weight -> (N, Cout, OH, OW), plus bias."""

    node_name = "ConvolutionBackward0"

    @staticmethod
    def forward(ctx, x, weight, bias, stride, padding, output_padding, dilation, groups):
        xp, a, w = x._xp, x._data, weight._data
        n, cin, h, wd = a.shape
        _, cout_g, kh, kw = w.shape
        cout = cout_g * groups
        (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
        oh = conv_transpose_output_size(h, kh, sh, ph, output_padding[0], dh)
        ow = conv_transpose_output_size(wd, kw, sw, pw, output_padding[1], dw)
        x_cols = a.transpose(1, 0, 2, 3).reshape(groups, cin // groups, n * h * wd)
        w_g = w.reshape(groups, cin // groups, cout_g * kh * kw).transpose(0, 2, 1)
        patches = matmul_arrays(xp, w_g, x_cols).reshape(cout, kh, kw, n, h, wd)
        out = xp.zeros((n, cout, oh + 2 * ph, ow + 2 * pw), dtype=patches.dtype)
        for i in range(kh):
            for j in range(kw):
                r, q = i * dh, j * dw
                out[:, :, r:r + sh * (h - 1) + 1:sh, q:q + sw * (wd - 1) + 1:sw] += patches[:, i, j].transpose(1, 0, 2, 3)
        out = out[:, :, ph:ph + oh, pw:pw + ow]
        if bias is not None:
            out += bias._data[:, None, None]
        ctx.args = ((kh, kw), stride, padding, dilation, groups)
        ctx.in_hw = (h, wd)
        ctx.save_for_backward(x, weight)
        return xp.ascontiguousarray(out)

    @staticmethod
    def backward(ctx, g):
        x, weight = ctx.saved_tensors
        need = ctx.needs_input_grad
        kernel, stride, padding, dilation, groups = ctx.args
        h, w = ctx.in_hw
        gx = gw = gb = None
        if need[0]:
            gx = Conv2d.apply(g, weight, None, stride, padding, dilation, groups)
            if tuple(gx.shape[2:]) != (h, w):  # output_padding >= stride (allowed when below the dilation)
                gx = gx[:, :, :h, :w]
        if need[1]:
            n, cin = x.shape[:2]
            g_cols = Im2Col.apply(g, kernel, stride, padding, dilation)  # (Cout*kh*kw, N*h'*w')
            if g_cols.shape[1] != n * h * w:  # the output_padding case above: drop the patches past the input
                h2, w2 = (conv_output_size(s, k, st, p, d) for s, k, st, p, d in
                          zip(g.shape[2:], kernel, stride, padding, dilation))
                g_cols = g_cols.reshape(g_cols.shape[0], n, h2, w2)
                g_cols = g_cols[:, :, :h, :w].reshape(g_cols.shape[0], -1)
            x_cols = x.transpose(0, 1).reshape(groups, cin // groups, -1)
            gw = (x_cols @ g_cols.reshape(groups, -1, g_cols.shape[1]).mT).reshape(weight.shape)
        if len(need) > 2 and need[2]:
            gb = g.sum((0, 2, 3))
        return gx, gw, gb
