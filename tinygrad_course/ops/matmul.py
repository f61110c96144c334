"""Matrix products: `matmul`/`@` (with batch broadcasting), `mm`, `bmm`, `mv`, `dot`, `addmm`."""
from __future__ import annotations

import numpy as np

from .. import seams
from ..autograd.autocast_state import autocast_state as _autocast
from ..autograd.engine import Op, profilers
from ..dtypes import type_name
from ..shapes import broadcast_shapes_checked
from ._util import check_same_device
from .lowp import matmul_arrays


_F32 = np.dtype(np.float32)
_FLOAT_NAMES = ("float32", "float64")
_ndarray = np.ndarray


def _shape_str(shape):
    return "x".join(map(str, shape))


def _check_matmul(a, b):
    check_same_device(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and {b.ndim}D"
        )
    if a.dtype is not b.dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {_dt_name(a.dtype)} != {_dt_name(b.dtype)}"
        )
    if a.ndim > 2 or b.ndim > 2:
        _check_batch_dims(a._data.shape[:-2] if a.ndim > 1 else (), b._data.shape[:-2] if b.ndim > 1 else ())
    ka = a._data.shape[-1]
    kb = b._data.shape[-2] if b.ndim > 1 else b._data.shape[0]
    if ka != kb:
        if a.ndim == 1 and b.ndim == 1:
            raise RuntimeError(
                f"inconsistent tensor size, expected tensor [{ka}] and src [{kb}] to have the same number of elements, but got {ka} and {kb} elements respectively"
            )
        if a.ndim == 2 and b.ndim == 1:
            raise RuntimeError(f"size mismatch, got input ({a._data.shape[0]}), mat ({_shape_str(a._data.shape)}), vec ({kb})")
        sa = a._data.shape if a.ndim > 1 else (1,) + a._data.shape
        sa = (int(_prod(sa[:-1])), sa[-1]) if len(sa) > 2 and b.ndim <= 2 else sa[-2:]
        sb = b._data.shape[-2:] if b.ndim > 1 else b._data.shape + (1,)
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({_shape_str(sa)} and {_shape_str(sb)}). "
            "Hint: the last dimension of the first operand must equal the second-to-last of the second; "
            "for a Linear layer, x @ W.T needs x.shape[-1] == in_features."
        )


def _check_batch_dims(sa, sb):
    """PyTorch's broadcasting error for the batch dimensions of a matmul."""
    broadcast_shapes_checked(sa, sb, hint=False)


def _prod(xs):
    r = 1
    for x in xs:
        r *= x
    return r


def _dt_name(d):
    return type_name(d)


def _transposed(t) -> bool:
    """True for a 2-D tensor laid out column-major (a transposed view such as Linear's weight.T)."""
    flags = t._data.flags
    return t.ndim == 2 and flags.f_contiguous and not flags.c_contiguous


def _grad_mat1(g, mat2, mat1):
    """g @ mat2.T, computed in mat1's layout (as PyTorch does) so that a transposed operand's gradient comes
    back row-major through its transpose, and the leaf keeps it without a copy."""
    return (mat2 @ g.mT).mT if _transposed(mat1) else g @ mat2.mT


def _grad_mat2(mat1, g, mat2):
    """mat1.T @ g, computed in mat2's layout (see `_grad_mat1`)."""
    return (g.mT @ mat1).mT if _transposed(mat2) else mat1.mT @ g


def _fused_products(g, a, b):
    """Whether a product's gradients may be computed on arrays (`fused_backward`): the gradient and both operands
    share a float32/float64 dtype, so the array products are those the ops would compute. Under the profiler
    the products stay ops, so a table shows them (aten::mm) inside their backward node, as PyTorch's does."""
    return g.dtype is a.dtype is b.dtype and g.dtype.name in ("float32", "float64") and not profilers


def _mat_grads(g, a, b, need_a, need_b):
    """(g @ b^T, a^T @ g) of 2-D operands as arrays, each in its operand's layout (see `_grad_mat1`)."""
    xp, gd, ad, bd = g._xp, g._data, a._data, b._data
    ga = gb = None
    if need_a:
        ga = matmul_arrays(xp, bd, gd.T).T if _transposed(a) else matmul_arrays(xp, gd, bd.T)
    if need_b:
        gb = matmul_arrays(xp, gd.T, ad).T if _transposed(b) else matmul_arrays(xp, ad.T, gd)
    return ga, gb


def _batched_grads(g, a, b, need_a, need_b):
    """The gradients of a batched product whose operands need no unbroadcasting (equal batch dims, or a batch
    times a matrix) as arrays; NotImplemented when this case does not apply."""
    xp, gd, ad, bd = g._xp, g._data, a._data, b._data
    if ad.ndim < 2 or bd.ndim < 2 or (bd.ndim > 2 and ad.shape[:-2] != bd.shape[:-2]):
        return NotImplemented
    ga = matmul_arrays(xp, gd, xp.swapaxes(bd, -1, -2)) if need_a else None
    gb = None
    if need_b:
        if bd.ndim == 2:  # a batch of rows times one matrix: the batch folds into the rows
            k, n = ad.shape[-1], gd.shape[-1]
            gb = matmul_arrays(xp, ad.reshape(-1, k).T, gd.reshape(-1, n))
        else:
            gb = matmul_arrays(xp, xp.swapaxes(ad, -1, -2), gd)
    return ga, gb


class Matmul(Op):
    node_name = "UnsafeViewBackward0"
    component = "Matmul"  # build mode: a learner's Matmul computes mm, bmm and batched products alike

    @staticmethod
    def forward(ctx, a, b):
        _check_matmul(a, b)
        ctx.save_for_backward(a, b)
        return matmul_arrays(a._xp, a._data, b._data)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        if a.ndim == 1 and b.ndim == 1:  # dot product: g is a scalar
            return (g * b if need[0] else None), (g * a if need[1] else None)
        if a.ndim == 2 and b.ndim == 2:
            return (_grad_mat1(g, b, a) if need[0] else None), (_grad_mat2(a, g, b) if need[1] else None)
        if a.ndim > 2 and b.ndim == 2:  # a batch of rows times one matrix: the batch folds into the rows
            ga = g @ b.mT if need[0] else None
            gb = a.reshape(-1, a.shape[-1]).mT @ g.reshape(-1, g.shape[-1]) if need[1] else None
            return ga, gb
        a2 = a.unsqueeze(0) if a.ndim == 1 else a
        b2 = b.unsqueeze(-1) if b.ndim == 1 else b
        g2 = g
        if a.ndim == 1:
            g2 = g2.unsqueeze(-2)
        if b.ndim == 1:
            g2 = g2.unsqueeze(-1)
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = (g2 @ b2.mT).squeeze(-2) if a.ndim == 1 else g2 @ b2.mT
        if ctx.needs_input_grad[1]:
            gb = (a2.mT @ g2).squeeze(-1) if b.ndim == 1 else a2.mT @ g2
        return ga, gb

    @staticmethod
    def fused_backward(ctx, g):
        """The same products on arrays (matrices and batches that need no unbroadcasting)."""
        a, b = ctx.saved_tensors
        if not _fused_products(g, a, b) or a.ndim == 1 or b.ndim == 1:
            return NotImplemented
        need = ctx.needs_input_grad
        if a.ndim == 2 and b.ndim == 2:
            return _mat_grads(g, a, b, need[0], need[1])
        return _batched_grads(g, a, b, need[0], need[1])


class Mm(Matmul):
    node_name = "MmBackward0"


class Mv(Matmul):
    node_name = "MvBackward0"


class Dot(Matmul):
    node_name = "DotBackward0"


class Bmm(Matmul):
    node_name = "BmmBackward0"


def matmul(a, b):
    """Matrix product with PyTorch's rules for 1-D operands and batch broadcasting (`a @ b`)."""
    na, nb = a.ndim, b.ndim
    if na == 2 and nb == 2:
        return Mm.apply(a, b)
    if na == 1 and nb == 1:
        return Dot.apply(a, b)
    if na == 2 and nb == 1:
        return Mv.apply(a, b)
    return Matmul.apply(a, b)


def mm(a, b):
    """Product of two matrices (2-D only), like `torch.mm`."""
    if a.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    return Mm.apply(a, b)


def bmm(a, b):
    """Batched product of 3-D tensors with equal batch size, like `torch.bmm`."""
    if a.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor")
    if b.ndim != 3:
        raise RuntimeError(f"batch2 must be a 3D tensor")
    if a._data.shape[0] != b._data.shape[0]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{a._data.shape[0]}, {a._data.shape[2]}] "
            f"but got: [{b._data.shape[0]}, {b._data.shape[1]}]."
        )
    return Bmm.apply(a, b)


def mv(a, v):
    """Matrix-vector product, like `torch.mv`."""
    if a.ndim != 2 or v.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {a.ndim}, {v.ndim}, 1")
    return Mv.apply(a, v)


def dot(a, b):
    """Inner product of two 1-D tensors, like `torch.dot`."""
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    return Dot.apply(a, b)


def _linear_array(xp, x, w_t, bias):
    """x @ w_t (+ bias) as a row-major array, for a (B, K) input and a weight's transpose w_t = W.T (a view).

    With a few rows and many output features, OpenBLAS computes W @ x.T (then transposed into the row-major
    result, the bias added on the way) much faster than x @ W.T, whose transposed operand it packs slowly:
    0.55x the time at batch 8, 0.86-0.93x at batch 64 on the benchmark machine, slower from batch 128 on.
    Below 8 rows (a token at a time) the plain product wins: its extra steps cost more than they save.
    """
    if (xp is np and x.dtype == _F32 and w_t.dtype == _F32 and x.ndim == 2 and 8 <= x.shape[0] <= 64
            and w_t.shape[1] >= 128 and x.flags.c_contiguous and w_t.flags.f_contiguous):
        out = np.empty((x.shape[0], w_t.shape[1]), dtype=_F32)
        product_t = np.matmul(w_t.T, x.T)
        if bias is None:
            np.copyto(out, product_t.T)
        else:
            np.add(product_t.T, bias, out=out)
        return out
    out = matmul_arrays(xp, x, w_t)
    if bias is not None:
        out += bias
    return out


def linear_unrecorded(x, weight, bias):
    """`F.linear(x, weight, bias)`'s array for a call that records no graph (grad mode off, or no input
    requiring grad: the caller checks, so that a recorded call pays no extra call) while nothing intercepts
    ops (no profiler, autocast or build-mode component), for NumPy float32/float64 operands of one dtype and
    matching sizes; None for every other case, which the ops handle (and diagnose).

    The result is what the recorded path's view -> t -> addmm -> view computes, in one step: a token at a
    time through a small model, those four ops' bookkeeping costs more than the product itself."""
    if profilers or _autocast.active or seams.ACTIVE:
        return None
    xd, wd, dtype = x._data, weight._data, x.dtype
    if (weight.dtype is not dtype or dtype.name not in _FLOAT_NAMES or type(xd) is not _ndarray
            or type(wd) is not _ndarray or wd.ndim != 2 or xd.ndim == 0 or xd.shape[-1] != wd.shape[1]):
        return None
    bd = None
    if bias is not None:
        bd = bias._data
        if bias.dtype is not dtype or type(bd) is not _ndarray or bd.shape != wd.shape[:1]:
            return None
    if xd.ndim == 2:
        return _linear_array(np, xd, wd.T, bd)
    out = _linear_array(np, xd.reshape(-1, wd.shape[1]), wd.T, bd)
    return out.reshape(xd.shape[:-1] + wd.shape[:1])


class Addmm(Op):
    """bias + x @ w.T in one step (the fused core of `nn.Linear`), like PyTorch's AddmmBackward0."""

    node_name = "AddmmBackward0"

    @staticmethod
    def forward(ctx, bias, x, w):
        _check_matmul(x, w)
        ctx.save_for_backward(x, w)
        return _linear_array(x._xp, x._data, w._data, None if bias is None else bias._data)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        gb = g if need[0] else None
        gx = _grad_mat1(g, w, x) if need[1] else None
        gw = _grad_mat2(x, g, w) if need[2] else None
        return gb, gx, gw

    @staticmethod
    def fused_backward(ctx, g):
        """The same products on arrays; the bias's gradient is the output's (the engine sums it to the bias)."""
        x, w = ctx.saved_tensors
        if not _fused_products(g, x, w):
            return NotImplemented
        need = ctx.needs_input_grad
        return (g._data if need[0] else None,) + _mat_grads(g, x, w, need[1], need[2])
