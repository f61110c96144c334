"""`tc.linalg`: norms, cross, det, inv and solve (like `torch.linalg`).

det/inv/solve compute with the backend's `linalg` module; their backwards are written with framework ops,
so higher derivatives work.
"""
from __future__ import annotations

from ._unsupported import missing as _missing
from .autograd.engine import Op
from .ops import cross_distance as _L
from .ops import reduce as _R
from .dtypes import type_name
from .ops.out_arg import supports_out

__all__ = ["norm", "vector_norm", "matrix_norm", "cross", "det", "inv", "solve", "LinAlgError"]


class LinAlgError(RuntimeError):
    """Raised for singular matrices, like `torch.linalg.LinAlgError` (a RuntimeError)."""


def _check_square(A, name):
    if A.dtype.category != 2:
        raise RuntimeError(f"linalg.{name}: Expected a floating point or complex tensor as input. "
                           f"Got {type_name(A.dtype)}")
    if A.ndim < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.{name}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")


def _backend_linalg(A, name, fn):
    try:
        return fn(A._xp.linalg)
    except A._xp.linalg.LinAlgError:
        raise LinAlgError(f"linalg.{name}: The input matrix is singular, so it has no inverse. Hint: check for "
                          "linearly dependent rows or columns.") from None


class Inv(Op):
    node_name = "LinalgInvExBackward0"
    save_output = True

    @staticmethod
    def forward(ctx, A):
        _check_square(A, "inv")
        return _backend_linalg(A, "inv", lambda la: la.inv(A._data))

    @staticmethod
    def backward(ctx, g):
        inv_t = ctx.saved_output.mT
        return -(inv_t @ g @ inv_t)


class Det(Op):
    node_name = "LinalgDetBackward0"
    save_output = True

    @staticmethod
    def forward(ctx, A):
        _check_square(A, "det")
        ctx.save_for_backward(A)
        return A._xp.asarray(A._xp.linalg.det(A._data)).astype(A._data.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        (A,) = ctx.saved_tensors
        d = ctx.saved_output
        return (g * d).unsqueeze(-1).unsqueeze(-1) * Inv.apply(A).mT


class Solve(Op):
    """X with A @ X = B (B a batch of matrices, or of vectors when B.ndim == A.ndim - 1)."""

    node_name = "LinalgSolveExBackward0"
    save_output = True

    @staticmethod
    def forward(ctx, A, B):
        _check_square(A, "solve")
        if A.dtype is not B.dtype:
            raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                               f"{type_name(A.dtype)} and B of type {type_name(B.dtype)} instead")
        vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
        n = A.shape[-1]
        rows = B.shape[-1] if vector else B.shape[-2]
        if rows != n:
            cols = 1 if vector else B.shape[-1]
            raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                               f"({n}x{n} and {rows}x{cols})")
        ctx.vector = vector
        ctx.save_for_backward(A)
        b = B._data[..., None] if vector else B._data
        if A.ndim > 2:  # B shared by a batch of matrices
            b = A._xp.broadcast_to(b, A._data.shape[:-2] + b.shape[-2:])
        out = _backend_linalg(A, "solve", lambda la: la.solve(A._data, b))
        return out[..., 0] if vector else out

    @staticmethod
    def backward(ctx, g):
        (A,) = ctx.saved_tensors
        X = ctx.saved_output
        gB = Solve.apply(A.mT, g)
        gv, Xv = (gB.unsqueeze(-1), X.unsqueeze(-1)) if ctx.vector else (gB, X)
        gA = -(gv @ Xv.mT) if ctx.needs_input_grad[0] else None
        need_b = ctx.needs_input_grad[1]
        return gA, gB if need_b else None


def inv(A):
    """The inverse of a (batch of) square matrices, like `torch.linalg.inv`."""
    return Inv.apply(A)


def det(A):
    """The determinant of a (batch of) square matrices, like `torch.linalg.det`."""
    return Det.apply(A)


def solve(A, B, *, left=True):
    """The solution X of A @ X = B, like `torch.linalg.solve`."""
    if not left:
        raise NotImplementedError("linalg.solve with left=False is not supported; solve A.mT X.mT = B.mT instead.")
    return Solve.apply(A, B)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The vector ord-norm over `dim` (all elements by default), like `torch.linalg.vector_norm`."""
    if dtype is not None:
        x = x.to(dtype)
    return _R.Norm.apply(x, float(ord), dim, keepdim)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """The Frobenius norm over the two dims `dim`, like `torch.linalg.matrix_norm` (only ord='fro')."""
    if ord != "fro":
        raise NotImplementedError(f"linalg.matrix_norm supports ord='fro' only (got {ord!r}).")
    if A.ndim < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    return vector_norm(A, 2, dim, keepdim, dtype=dtype)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector norm (ord a number or None) or the Frobenius matrix norm (ord='fro'), like `torch.linalg.norm`."""
    if ord is not None and dim is None and A.ndim not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                           f"Got {A.ndim}D.")
    if ord == "fro":
        return matrix_norm(A, "fro", (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    if isinstance(ord, str):
        raise NotImplementedError(f"linalg.norm supports ord='fro' or a number (got {ord!r}).")
    if ord is not None and dim is None and A.ndim == 2:
        raise NotImplementedError("linalg.norm of a matrix with a numeric ord (a matrix norm) is not supported; "
                                  "pass dim for vector norms or use ord='fro'.")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def cross(input, other, *, dim=-1):
    """Cross product of 3-vectors along `dim` (default last), with broadcasting, like `torch.linalg.cross`."""
    return _L.Cross.apply(input, other, dim)


# `out=` as in torch.linalg (the result dtype must match out's exactly)
for _name in ("inv", "det", "solve", "vector_norm", "matrix_norm", "norm", "cross"):
    globals()[_name] = supports_out("linalg." + _name, globals()[_name])
del _name


def __getattr__(name):
    raise _missing("tc.linalg", name, f"module '{__name__}' has no attribute '{name}'")
