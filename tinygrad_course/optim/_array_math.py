"""In-place array updates written in the operand order of PyTorch's CPU kernels, so float32 results round
the same way (`addcmul_` computes self + (value * a) * b; `addcdiv_` computes self + (value * a) / b)."""
from __future__ import annotations


def addcmul_(xp, acc, a, b, value, tmp=None):
    """acc += value * a * b in place (`tmp`, an array like `acc`, is reused when given)."""
    tmp = xp.multiply(a, value) if tmp is None else xp.multiply(a, value, out=tmp)
    tmp *= b
    acc += tmp


def addcdiv_(xp, acc, a, b, value, tmp=None):
    """acc += value * a / b in place (`tmp`, an array like `acc`, is reused when given)."""
    tmp = xp.multiply(a, value) if tmp is None else xp.multiply(a, value, out=tmp)
    tmp /= b
    acc += tmp
