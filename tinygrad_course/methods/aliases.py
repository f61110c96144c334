"""PyTorch names that are another name for, or a one-line composition of, existing ops: ravel, vdot, addr,
diagflat, split_with_sizes, fix, det, inverse, hardshrink, prelu, and the `tc.<op>_` in-place functions."""
from __future__ import annotations

from .. import linalg
from ..ops.activation import hardshrink, prelu  # noqa: F401  (tc.prelu)
from .numpy_names import numpy_arg_names

# `tc.cos_(x)` is `x.cos_()`, as `torch.cos_` is `Tensor.cos_`.
INPLACE_FUNCTIONS = tuple(
    "abs_ acos_ acosh_ addmv_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ asinh_ atan_ atanh_ ceil_ "
    "clamp_ clamp_max_ clamp_min_ clip_ cos_ cosh_ detach_ erf_ erfc_ exp2_ exp_ expm1_ fill_ fix_ floor_ frac_ "
    "log10_ log1p_ log2_ log_ logit_ nan_to_num_ neg_ negative_ reciprocal_ relu_ round_ rsqrt_ sigmoid_ sin_ sinc_ "
    "sinh_ sqrt_ square_ tan_ tanh_ trunc_ xlogy_ zero_".split())
METHOD_FUNCTIONS: tuple[str, ...] = ("ravel", "vdot", "addr", "diagflat", "split_with_sizes", "fix", "det", "inverse",
                                     "hardshrink", "adjoint") + INPLACE_FUNCTIONS
__all__: list[str] = ["prelu"]


@numpy_arg_names
class AliasMethods:
    """Mixin with PyTorch's alias and one-line methods of `Tensor`."""

    __slots__ = ()

    def ravel(self):
        """The elements as a 1-D tensor (a view when possible), like `torch.ravel`."""
        return self.reshape(-1)

    def vdot(self, other):
        """Dot product of two 1-D tensors (no conjugation needed for real numbers), like `torch.vdot`."""
        if self.ndim != 1 or other.ndim != 1:
            raise RuntimeError(f"1D tensors expected, but got {self.ndim}D and {other.ndim}D tensors")
        return self.dot(other)

    def addr(self, vec1, vec2, *, beta=1, alpha=1):
        """beta * self + alpha * outer(vec1, vec2), like `torch.addr`."""
        outer = vec1.outer(vec2)
        return (self if beta == 1 else self * beta) + (outer if alpha == 1 else outer * alpha)

    def diagflat(self, offset=0):
        """A matrix with the flattened input on its `offset` diagonal, like `torch.diagflat`."""
        return self.reshape(-1).diag(offset)

    def split_with_sizes(self, split_sizes, dim=0):
        """Pieces of the given sizes along `dim`, like `torch.split_with_sizes`."""
        return self.split(list(split_sizes), dim)

    def fix(self):
        """Round towards zero (the same as `trunc`), like `torch.fix`."""
        return self.trunc()

    def fix_(self):
        """In-place `fix`."""
        return self.trunc_()

    def det(self):
        """Determinant of a (batch of) square matrices, like `torch.det` (see `tc.linalg.det`)."""
        return linalg.det(self)

    def inverse(self):
        """Inverse of a (batch of) square matrices, like `torch.inverse` (see `tc.linalg.inv`)."""
        return linalg.inv(self)

    def hardshrink(self, lambd=0.5):
        """x where |x| > lambd, else 0, like `torch.hardshrink` (see `tc.nn.functional.hardshrink`)."""
        return hardshrink(self, lambd)
