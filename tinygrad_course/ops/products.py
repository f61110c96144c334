"""Products: einsum (whose backward is itself an einsum) and the fused `beta * input + alpha * product` ops
addmm, addmv, baddbmm and addbmm.

Forwards compute on backend arrays; backwards use framework ops, so double backward works.
"""
from __future__ import annotations

import string

import numpy as np

from ..autograd.engine import Op
from ..factories import eye, ones
from ..dtypes import type_name
from ._util import check_same_device
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
        ctx.beta, ctx.alpha = beta, alpha
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
        gx = g * ctx.beta if need[0] else None
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
