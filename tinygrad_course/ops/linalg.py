"""Products and matrix functions: einsum, trace, diagonal/diag_embed, cross, cdist, addmm-style fused
products, block_diag.

Forwards compute on backend arrays; backwards use framework ops (einsum's backward is itself an einsum), so
double backward works.
"""
from __future__ import annotations

import math
import string

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Op
from ._util import check_same_device, normalize_dim, type_name
from .elementwise import _grad_like, sum_to_shape
from .lowp import matmul_arrays

_LETTERS = string.ascii_uppercase + string.ascii_lowercase


def _in_float32(xp, fn, *arrays):
    """`fn(*arrays)`, computed in float32 for 16-bit floats (NumPy has no fast 16-bit kernels)."""
    if arrays and arrays[0].dtype.itemsize == 2 and arrays[0].dtype.kind in "fV":
        dt = arrays[0].dtype
        return fn(*(a.astype(np.float32) for a in arrays)).astype(dt)
    return fn(*arrays)


def _same_dtype(tensors, message):
    first = tensors[0].dtype
    for t in tensors[1:]:
        check_same_device(tensors[0], t)
        if t.dtype is not first:
            raise RuntimeError(message(first, t.dtype))


# ---- einsum ---------------------------------------------------------------------------------------------

def parse_einsum(equation, shapes):
    """Explicit per-operand subscripts (ellipses replaced by letters) and output subscripts of `equation`,
    with PyTorch's errors for malformed equations."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(shapes):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    used = set(c for c in eq if c.isalpha())
    for c in eq:
        if not (c.isalpha() or c in ",.->"):
            raise RuntimeError(f"einsum(): invalid subscript given at index {eq.index(c)} in the equation string, "
                               "subscripts must be in [a-zA-Z]")
    free = [c for c in _LETTERS if c not in used]
    ell_ndim = max((len(s) - len(t.replace("...", "")) for t, s in zip(terms, shapes) if "..." in t), default=0)
    ell = "".join(free[:ell_ndim])
    subs = []
    for i, (t, s) in enumerate(zip(terms, shapes)):
        named = t.replace("...", "")
        if "..." in t:
            k = len(s) - len(named)
            if k < 0:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(named)}) is more than "
                                   f"the number of dimensions ({len(s)}) for operand {i}")
            t = t.replace("...", ell[ell_ndim - k:] if k else "")
        elif len(t) != len(s):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(t)}) does not match the "
                               f"number of dimensions ({len(s)}) for operand {i} and no ellipsis was given")
        subs.append(t)
    if arrow:
        out = rhs.replace("...", ell)
        for c in rhs.replace("...", ""):
            if rhs.count(c) > 1:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
            if c not in lhs:
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input "
                                   "operand")
    else:
        counts = {}
        for c in lhs:
            if c.isalpha():
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted((c for c, n in counts.items() if n == 1), key=_LETTERS.index))
    return subs, out


def letter_sizes(subs, shapes):
    """The size of each letter (size-1 dims broadcast), with PyTorch's errors for mismatches."""
    sizes = {}
    for i, (t, s) in enumerate(zip(subs, shapes)):
        seen = {}
        for c, n in zip(t, s):
            if c in seen and seen[c] != n:
                raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {i} but the sizes don't match, "
                                   f"{n} != {seen[c]}")
            seen[c] = n
            if sizes.get(c, 1) == 1:
                sizes[c] = n
            elif n != 1 and n != sizes[c]:
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {i} which does not broadcast "
                                   f"with previously seen size {sizes[c]}")
    return sizes


class Einsum(Op):
    """Einstein summation over explicit subscripts whose sizes already agree (`tc.einsum` prepares them)."""

    node_name = "EinsumBackward0"

    @staticmethod
    def forward(ctx, *operands, subs=(), out=""):
        ctx.subs, ctx.out = subs, out
        if ctx.needs_input_grad:
            ctx.save_for_backward(*operands)
        eq = ",".join(subs) + "->" + out
        xp = operands[0]._xp
        # optimize=True lets two or more operands go through tensordot (BLAS) instead of a plain loop
        return _in_float32(xp, lambda *a: xp.einsum(eq, *a, optimize=len(a) > 1), *(o._data for o in operands))

    @staticmethod
    def backward(ctx, g):
        operands = ctx.saved_tensors
        return tuple(_einsum_grad(ctx, g, operands, i) if need else None
                     for i, need in enumerate(ctx.needs_input_grad))


def _einsum_grad(ctx, g, operands, i):
    """Gradient for operand i: an einsum of the output gradient with the other operands; ones vectors stand
    for letters summed away in operand i alone, identity matrices rebuild repeated letters (diagonals)."""
    from ..factories import eye, ones

    subs = ctx.subs
    terms, args = [ctx.out], [g]
    for j, (t, op) in enumerate(zip(subs, operands)):
        if j != i:
            terms.append(t)
            args.append(op)
    present = set("".join(terms))
    sizes = dict(zip(subs[i], operands[i].shape))
    free = [c for c in _LETTERS if c not in set("".join(subs) + ctx.out)]
    target = ""
    for c in subs[i]:
        if c in target:  # repeated letter: a fresh one tied to it by an identity matrix
            f = free.pop()
            terms.append(c + f)
            args.append(eye(sizes[c], dtype=g.dtype, device=g.device))
            target += f
        else:
            if c not in present:
                terms.append(c)
                args.append(ones(sizes[c], dtype=g.dtype, device=g.device))
                present.add(c)
            target += c
    return Einsum.apply(*args, subs=tuple(terms), out=target)


def einsum(equation, *operands):
    """Einstein summation, like `torch.einsum` (operands as arguments or one list; ellipsis; implicit
    output; size-1 dimensions broadcast)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    _same_dtype(operands, lambda a, b: f"expected scalar type {type_name(a)} but found {type_name(b)}")
    shapes = [tuple(o.shape) for o in operands]
    subs, out = parse_einsum(equation, shapes)
    sizes = letter_sizes(subs, shapes)
    prepared = []
    for t, o in zip(subs, operands):
        full = tuple(sizes[c] for c in t)
        prepared.append(o.expand(full) if full != tuple(o.shape) else o)
    return Einsum.apply(*prepared, subs=tuple(subs), out=out)


# ---- trace, diagonal, diag_embed ------------------------------------------------------------------------

class Trace(Op):
    """Sum of the main diagonal of a matrix."""

    node_name = "TraceBackward0"

    @staticmethod
    def forward(ctx, x):
        if x.ndim != 2:
            raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.ndim}")
        ctx.shape, ctx.in_dtype = x._data.shape, x.dtype
        od = _dt.int64 if x.dtype.category < 2 else x.dtype
        return x._xp.trace(x._data, dtype=od.np_dtype)

    @staticmethod
    def backward(ctx, g):
        from ..factories import eye

        return eye(*ctx.shape, dtype=g.dtype, device=g.device) * g


def _diag_dims(ndim, dim1, dim2):
    d1, d2 = normalize_dim(dim1, ndim), normalize_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


def diagonal_view(xp, a, offset, d1, d2):
    """A writable strided view of the diagonal of `a` over dims d1, d2 (other dims first, diagonal last)."""
    start = [slice(None)] * a.ndim
    n1, n2 = a.shape[d1], a.shape[d2]
    if offset >= 0:
        start[d2] = slice(min(offset, n2), None)
    else:
        start[d1] = slice(min(-offset, n1), None)
    base = a[tuple(start)]
    length = max(0, min(n1 - max(0, -offset), n2 - max(0, offset)))
    keep = [d for d in range(a.ndim) if d not in (d1, d2)]
    shape = tuple(a.shape[d] for d in keep) + (length,)
    strides = tuple(base.strides[d] for d in keep) + (base.strides[d1] + base.strides[d2],)
    return xp.lib.stride_tricks.as_strided(base, shape, strides)


class Diagonal(Op):
    """The diagonal over dims (dim1, dim2) with `offset`, as a view (like `Tensor.diagonal`)."""

    node_name = "DiagonalBackward0"
    view = True

    @staticmethod
    def forward(ctx, x, offset=0, dim1=0, dim2=1):
        if x.ndim < 2:
            raise RuntimeError(f"diagonal dimensions requires ndim larger than 1, but got ndim {x.ndim}")
        d1, d2 = _diag_dims(x.ndim, dim1, dim2)
        ctx.args = (x._data.shape, offset, d1, d2)
        out = diagonal_view(x._xp, x._data, offset, d1, d2)
        return out if ctx._fn.view else out.copy()

    @staticmethod
    def backward(ctx, g):
        return DiagonalBackward.apply(g, *ctx.args)


class DiagonalCopy(Diagonal):
    """`diag` of a matrix: the diagonal as a new tensor."""

    node_name = "DiagonalBackward0_copy"
    view = False


class DiagonalBackward(Op):
    """Zeros of `shape` with `x` written on the diagonal (dim1, dim2, offset): the backward of `diagonal`."""

    node_name = "DiagonalBackwardBackward0"

    @staticmethod
    def forward(ctx, x, shape, offset, d1, d2):
        ctx.args = (offset, d1, d2)
        out = x._xp.zeros(shape, dtype=x._data.dtype)
        diagonal_view(x._xp, out, offset, d1, d2)[...] = x._data
        return out

    @staticmethod
    def backward(ctx, g):
        return Diagonal.apply(g, *ctx.args)


class DiagEmbed(DiagonalBackward):
    """A tensor whose diagonals over (dim1, dim2) hold the last dimension of `x` (like `torch.diag_embed`)."""

    node_name = "DiagEmbedBackward0"

    @staticmethod
    def forward(ctx, x, offset=0, dim1=-2, dim2=-1):
        nd = x.ndim + 1
        d1, d2 = _diag_dims(nd, dim1, dim2)
        n = (x._data.shape[-1] if x.ndim else 1) + abs(offset)
        rest = iter(x._data.shape[:-1])
        shape = tuple(n if d in (d1, d2) else next(rest) for d in range(nd))
        return DiagonalBackward.forward(ctx, x, shape, offset, d1, d2)


# ---- cross product, distances ---------------------------------------------------------------------------

def _cross_arrays(xp, a, b, dim):
    def take(v, i):
        return xp.take(v, i, axis=dim)

    a0, a1, a2 = take(a, 0), take(a, 1), take(a, 2)
    b0, b1, b2 = take(b, 0), take(b, 1), take(b, 2)
    return xp.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=dim)


class Cross(Op):
    """Cross product of 3-vectors along `dim`, with broadcasting (like `torch.linalg.cross`)."""

    node_name = "LinalgCrossBackward0"

    @staticmethod
    def forward(ctx, a, b, dim=-1):
        _same_dtype((a, b), lambda x, y: f"expected scalar type {type_name(x)} but found {type_name(y)}")
        shape = np.broadcast_shapes(a._data.shape, b._data.shape)
        d = normalize_dim(dim, len(shape))
        if a.ndim != b.ndim:
            raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions.")
        if a._data.shape[d] != 3 or b._data.shape[d] != 3:
            raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. "
                               f"Got {a._data.shape[d]} and {b._data.shape[d]}")
        ctx.dim, ctx.shapes = d, (a._data.shape, b._data.shape)
        ctx.save_for_backward(a, b)
        xp = a._xp
        return _cross_arrays(xp, xp.broadcast_to(a._data, shape), xp.broadcast_to(b._data, shape), d)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        ga = _grad_like(Cross.apply(b.expand(g.shape), g, ctx.dim), ctx.shapes[0], a.dtype) if need[0] else None
        gb = _grad_like(Cross.apply(g, a.expand(g.shape), ctx.dim), ctx.shapes[1], b.dtype) if need[1] else None
        return ga, gb


def _pnorm_arrays(xp, d, p, axis):
    a = xp.abs(d)
    if p == 0:
        return (a != 0).sum(axis=axis).astype(d.dtype)
    if p == 1:
        return a.sum(axis=axis)
    if p == 2:
        return xp.sqrt((a * a).sum(axis=axis))
    if p == math.inf:
        return a.max(axis=axis) if a.shape[axis] else a.sum(axis=axis)
    return (a ** p).sum(axis=axis) ** (1.0 / p)


class Cdist(Op):
    """p-norm distances between the rows of x1 (.., P, M) and x2 (.., R, M): (.., P, R)."""

    node_name = "CdistBackward0"

    @staticmethod
    def forward(ctx, x1, x2, p=2.0):
        for name, x in (("X1", x1), ("X2", x2)):
            if x.ndim < 2:
                raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
            if x.dtype.category != 2:
                raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {type_name(x.dtype)}")
        check_same_device(x1, x2)
        if x1._data.shape[-1] != x2._data.shape[-1]:
            raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1._data.shape[-1]} "
                               f"X2: {x2._data.shape[-1]}")
        if p < 0:
            raise RuntimeError("cdist only supports non-negative p values")
        _same_dtype((x1, x2), lambda a, b: f"expected scalar type {type_name(a)} but found {type_name(b)}")
        ctx.p = p
        ctx.save_for_backward(x1, x2)
        ctx.save_output = True
        diff = x1._data[..., :, None, :] - x2._data[..., None, :, :]
        return _in_float32(x1._xp, lambda d: _pnorm_arrays(x1._xp, d, p, -1), diff)

    @staticmethod
    def backward(ctx, g):
        x1, x2 = ctx.saved_tensors
        p, dist = ctx.p, ctx.saved_output.unsqueeze(-1)
        diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
        if p == 0:
            coeff = diff * 0
        elif p == 1:
            coeff = diff.sign()
        elif p == 2:
            coeff = (diff / dist).masked_fill(dist == 0, 0.0)
        elif p == math.inf:
            mask = (diff.abs() == dist).to(diff.dtype)
            coeff = diff.sign() * mask / mask.sum(-1, keepdim=True)
        else:
            coeff = (diff.sign() * diff.abs() ** (p - 1) / dist ** (p - 1)).masked_fill(dist == 0, 0.0)
        weighted = g.unsqueeze(-1) * coeff
        need = ctx.needs_input_grad
        g1 = _grad_like(weighted.sum(-2), x1.shape, x1.dtype) if need[0] else None
        g2 = _grad_like(-weighted.sum(-3), x2.shape, x2.dtype) if need[1] else None
        return g1, g2


# ---- input * beta + alpha * (product) -----------------------------------------------------------------

_PRODUCT_CHECKS = {
    "mm": ((2, 2), "mat1", "mat2"),
    "mv": ((2, 1), "mat", "vec"),
    "bmm": ((3, 3), "batch1", "batch2"),
    "addbmm": ((3, 3), "batch1", "batch2"),
}


class AddProduct(Op):
    """beta * input + alpha * (m1 @ m2), one node (addmm, addmv, baddbmm; addbmm sums over the batch)."""

    node_name = "AddmmBackward0"
    kind = "mm"

    @staticmethod
    def forward(ctx, x, m1, m2, beta=1, alpha=1):
        kind = ctx._fn.kind
        (nd1, nd2), n1, n2 = _PRODUCT_CHECKS[kind]
        if m1.ndim != nd1:
            raise RuntimeError(f"{n1} must be a {'matrix' if nd1 == 2 else f'{nd1}D tensor'}, got {m1.ndim}-D tensor")
        if m2.ndim != nd2:
            raise RuntimeError(f"{n2} must be a {dict([(1, 'vector'), (2, 'matrix')]).get(nd2, f'{nd2}D tensor')}, "
                               f"got {m2.ndim}-D tensor")
        _same_dtype((x, m1, m2), lambda a, b: f"self and mat2 must have the same dtype, but got {type_name(a)} and "
                                              f"{type_name(b)}")
        s1, s2 = m1._data.shape, m2._data.shape
        inner1 = s1[-1]
        inner2 = s2[-2] if nd2 > 1 else s2[0]
        if inner1 != inner2 or (nd1 == 3 and s1[0] != s2[0]):
            raise RuntimeError(f"{n1} and {n2} shapes cannot be multiplied ({'x'.join(map(str, s1))} and "
                               f"{'x'.join(map(str, s2))})")
        xp = m1._xp
        prod = matmul_arrays(xp, m1._data, m2._data)
        if kind == "addbmm":
            prod = prod.sum(axis=0)
        try:
            base = xp.broadcast_to(x._data, prod.shape)
        except ValueError:
            raise RuntimeError(f"The expanded size of the tensor ({prod.shape[-1]}) must match the existing size "
                               f"({x._data.shape[-1]}) at non-singleton dimension {x.ndim - 1}.  Target sizes: "
                               f"{list(prod.shape)}.  Tensor sizes: {list(x._data.shape)}") from None
        ctx.beta, ctx.alpha, ctx.in_shape = beta, alpha, x._data.shape
        ctx.save_for_backward(m1 if ctx.needs_input_grad and ctx.needs_input_grad[2] else None,
                              m2 if ctx.needs_input_grad and ctx.needs_input_grad[1] else None)
        out = prod if alpha == 1 else prod * alpha
        if beta != 0:
            out = out + (base if beta == 1 else base * beta)
        return out.astype(x._data.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        m1, m2 = ctx.saved_tensors
        need, kind = ctx.needs_input_grad, ctx._fn.kind
        gx = sum_to_shape(g * ctx.beta, ctx.in_shape) if need[0] else None
        ga = g if ctx.alpha == 1 else g * ctx.alpha
        g1 = g2 = None
        if kind == "mv":
            g1 = ga.unsqueeze(-1) * m2 if need[1] else None
            g2 = m1.mT @ ga if need[2] else None
        else:
            if kind == "addbmm":
                ga = ga.unsqueeze(0)
            g1 = ga @ m2.mT if need[1] else None
            g2 = m1.mT @ ga if need[2] else None
        return gx, g1, g2


class Addmv(AddProduct):
    node_name = "AddmvBackward0"
    kind = "mv"


class Baddbmm(AddProduct):
    node_name = "BaddbmmBackward0"
    kind = "bmm"


class Addbmm(AddProduct):
    node_name = "AddbmmBackward0"
    kind = "addbmm"


# ---- block_diag -----------------------------------------------------------------------------------------

class BlockDiag(Op):
    """The tensors (0-, 1- or 2-D) placed along the diagonal of a zero matrix (like `torch.block_diag`)."""

    node_name = "BlockDiagBackward0"

    @staticmethod
    def forward(ctx, *tensors):
        for i, t in enumerate(tensors):
            if t.ndim > 2:
                raise RuntimeError(f"tc.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                                   f"{t.ndim} dimensions")
            check_same_device(tensors[0], t)
        rd = _dt.result_type(*tensors) if tensors else _dt.get_default_dtype()
        blocks = [t._data.reshape((1, -1) if t.ndim < 2 else t._data.shape) if t.ndim < 2 else t._data
                  for t in tensors]
        blocks = [b.reshape(1, 1) if t.ndim == 0 else b for b, t in zip(blocks, tensors)]
        rows, cols = sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)
        xp = tensors[0]._xp if tensors else np
        out = xp.zeros((rows, cols), dtype=rd.np_dtype)
        r = c = 0
        ctx.places = []
        for b, t in zip(blocks, tensors):
            out[r:r + b.shape[0], c:c + b.shape[1]] = b
            ctx.places.append((r, c, b.shape, t._data.shape, t.dtype))
            r, c = r + b.shape[0], c + b.shape[1]
        return out

    @staticmethod
    def backward(ctx, g):
        grads = []
        for need, (r, c, shape, in_shape, dtype) in zip(ctx.needs_input_grad, ctx.places):
            if not need:
                grads.append(None)
                continue
            piece = g[r:r + shape[0], c:c + shape[1]].reshape(in_shape)
            grads.append(piece if piece.dtype is dtype else piece.to(dtype))
        return tuple(grads)
