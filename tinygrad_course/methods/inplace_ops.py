"""In-place Tensor methods (`add_`, `mul_`, `copy_`, `fill_`, `zero_`, random fills such as `normal_`) and the
generated twins (`cos_`, `ge_`, ...) of out-of-place methods. All go through `methods/inplace.py`."""
from __future__ import annotations

from ..factories import bernoulli as _bernoulli
from ..factories import multinomial as _multinomial
from ..factories import tensor
from ..generator import sampler
from ..ops import arithmetic as AR
from ..ops import indexing as IX
from ..ops import unary_math as UM
from ..ops._util import operand as _operand
from ..tensor_base import TensorBase, _wrap


class InplaceMethods:
    """Methods that modify the tensor they are called on and return it."""

    __slots__ = ()

    # ---- in-place versions ----------------------------------------------------------------------
    def add_(self, other, *, alpha=1):
        return self._inplace(AR.Add.apply, _operand(other), alpha=alpha)

    def sub_(self, other, *, alpha=1):
        return self._inplace(AR.Sub.apply, _operand(other), alpha=alpha)

    def mul_(self, other):
        return self._inplace(AR.Mul.apply, _operand(other))

    def div_(self, other):
        return self._inplace(AR.Div.apply, _operand(other))

    def pow_(self, exponent):
        return self._inplace(AR.Pow.apply, _operand(exponent))

    def neg_(self):
        return self._inplace(UM.Neg.apply)

    def abs_(self):
        return self._inplace(UM.Abs.apply)

    def exp_(self):
        return self._inplace(UM.Exp.apply)

    def log_(self):
        return self._inplace(UM.Log.apply)

    def sqrt_(self):
        return self._inplace(UM.Sqrt.apply)

    def relu_(self):
        return self._inplace(UM.Relu.apply)

    def sigmoid_(self):
        return self._inplace(UM.Sigmoid.apply)

    def tanh_(self):
        return self._inplace(UM.Tanh.apply)

    def clamp_(self, min=None, max=None):
        return self._inplace(lambda t, lo, hi: t.clamp(lo, hi), min, max)

    clip_ = clamp_

    def masked_fill_(self, mask, value):
        return self._inplace(IX.MaskedFill.apply, mask, value)

    def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
        return self._inplace(lambda t, s: t.scatter(dim, index, s, value=value, reduce=reduce), src)

    def scatter_add_(self, dim, index, src):
        return self._inplace(lambda t, s: t.scatter_add(dim, index, s), src)

    def copy_(self, src, non_blocking=False):
        """Copy `src`'s values (broadcast and converted) into this tensor."""
        if not isinstance(src, TensorBase):
            src = tensor(src)

        return self._inplace(IX.Overwrite.apply, src.to(dtype=self.dtype, device=self.device), "CopyBackwards")

    def fill_(self, value):
        """Set every element to `value`."""
        return self._inplace(IX.Overwrite.apply, value, "FillBackward0")

    def zero_(self):
        """Set every element to zero."""
        return self._inplace(IX.Overwrite.apply, 0, "ZeroBackward0")

    # random in-place initialisers (used by tc.nn.init under no_grad)
    def uniform_(self, a=0.0, b=1.0, *, generator=None):
        """Fill with samples from U(a, b)."""
        return self._random_fill(sampler(generator, self._device).uniform(a, b, self._data.shape, self._data.dtype))

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        """Fill with samples from N(mean, std^2)."""
        draw = sampler(generator, self._device)
        return self._random_fill(draw.normal(mean, std, self._data.shape, self._data.dtype,
                                             contiguous=self.is_contiguous()))

    def bernoulli_(self, p=0.5, *, generator=None):
        """Fill with 0/1 samples that are 1 with probability `p` (a number or a tensor of probabilities)."""
        if isinstance(p, TensorBase):
            p = self._xp.broadcast_to(p.detach()._data, self._data.shape)
        return self._random_fill(sampler(generator, self._device).bernoulli(p, self._data.shape))

    def exponential_(self, lambd=1.0, *, generator=None):
        """Fill with samples from the exponential distribution of rate `lambd`."""
        return self._random_fill(sampler(generator, self._device).exponential(lambd, self._data.shape,
                                                                              self._data.dtype))

    def random_(self, from_=None, to=None, *, generator=None):
        """Fill with integers: `random_(to)` from [0, to), `random_(from_, to)` from [from_, to), and
        `random_()` from [0, 2^mantissa] (floats) or [0, max] (integers)."""
        draw = sampler(generator, self._device)
        if from_ is None and to is None:
            return self._random_fill(draw.full_range(self._data.shape, self._data.dtype))
        low, high = (0, from_) if to is None else (from_ or 0, to)
        if low >= high:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
        return self._random_fill(draw.integers(low, high, self._data.shape))

    def bernoulli(self, p=None, *, generator=None):
        """0/1 samples, 1 with the probability in each element (or `p`), like `torch.bernoulli(self)`."""
        return _bernoulli(self, p, generator=generator)

    def multinomial(self, num_samples, replacement=False, *, generator=None):
        """Indices drawn from the row-wise (unnormalised) probabilities, like `torch.multinomial(self, ...)`."""
        return _multinomial(self, num_samples, replacement, generator=generator)

    def _random_fill(self, values):
        self._check_inplace()
        self._write(_wrap(self._xp.asarray(values).astype(self.dtype.np_dtype, copy=False)))
        return self


def _inplace_variant(name, zero_grad=False):
    """`Tensor.<name>_`: the out-of-place method `name` written into this tensor, like PyTorch's in-place twin.

    With `zero_grad` (comparisons, whose bool result has no gradient) the written values carry a zero gradient,
    as PyTorch's `GeBackward0`/... give; the logical ops keep the tensor's old history, as PyTorch's do."""

    def method(self, *args, **kwargs):
        def compute(t):
            out = getattr(t, name)(*args, **kwargs)
            if zero_grad and t.requires_grad:
                out = t.mul(0).add(out.to(t.dtype))
            return out

        return self._inplace(compute)

    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"In-place `{name}`: writes `self.{name}(...)` into this tensor and returns it."
    return method


class InplaceTwins:
    """`cos_`, `ge_`, ...: the in-place twins of out-of-place methods (listed after the families in `Tensor`'s
    bases, so a family that writes its own `name_` keeps it). Comparisons' twins carry a zero gradient."""

    __slots__ = ()

    absolute_ = _inplace_variant("absolute")
    bitwise_and_ = _inplace_variant("bitwise_and")
    bitwise_not_ = _inplace_variant("bitwise_not")
    bitwise_or_ = _inplace_variant("bitwise_or")
    bitwise_xor_ = _inplace_variant("bitwise_xor")
    ceil_ = _inplace_variant("ceil")
    clamp_max_ = _inplace_variant("clamp_max")
    clamp_min_ = _inplace_variant("clamp_min")
    cos_ = _inplace_variant("cos")
    cumsum_ = _inplace_variant("cumsum")
    divide_ = _inplace_variant("divide")
    expm1_ = _inplace_variant("expm1")
    floor_ = _inplace_variant("floor")
    floor_divide_ = _inplace_variant("floor_divide")
    log10_ = _inplace_variant("log10")
    log1p_ = _inplace_variant("log1p")
    log2_ = _inplace_variant("log2")
    multiply_ = _inplace_variant("multiply")
    negative_ = _inplace_variant("negative")
    reciprocal_ = _inplace_variant("reciprocal")
    remainder_ = _inplace_variant("remainder")
    round_ = _inplace_variant("round")
    rsqrt_ = _inplace_variant("rsqrt")
    sign_ = _inplace_variant("sign")
    sin_ = _inplace_variant("sin")
    square_ = _inplace_variant("square")
    subtract_ = _inplace_variant("subtract")
    tril_ = _inplace_variant("tril")
    triu_ = _inplace_variant("triu")
    true_divide_ = _inplace_variant("true_divide")
    trunc_ = _inplace_variant("trunc")
    logical_and_ = _inplace_variant("logical_and")
    logical_not_ = _inplace_variant("logical_not")
    logical_or_ = _inplace_variant("logical_or")
    logical_xor_ = _inplace_variant("logical_xor")
    eq_ = _inplace_variant("eq", zero_grad=True)
    ne_ = _inplace_variant("ne", zero_grad=True)
    lt_ = _inplace_variant("lt", zero_grad=True)
    le_ = _inplace_variant("le", zero_grad=True)
    gt_ = _inplace_variant("gt", zero_grad=True)
    ge_ = _inplace_variant("ge", zero_grad=True)
    greater_ = _inplace_variant("greater", zero_grad=True)
    greater_equal_ = _inplace_variant("greater_equal", zero_grad=True)
    less_ = _inplace_variant("less", zero_grad=True)
    less_equal_ = _inplace_variant("less_equal", zero_grad=True)
    not_equal_ = _inplace_variant("not_equal", zero_grad=True)
