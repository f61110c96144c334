"""Chapter 04, where a shuffle comes from: checks for the learner's `Generator` methods `uniform`, `normal` and
`permutation`, which turn the Mersenne Twister's 32-bit words (`self._engine`) into values the way PyTorch's CPU
kernels do. Every expectation is the framework's own method on a generator seeded alike (it equals PyTorch's
numbers bit for bit, held to torch by tests/core); `uniform` and `permutation` must match exactly, `normal`
within a tolerance for the last bits of log, sin and cos (PyTorch's float32 kernel evaluates them with its own
vectorised polynomials, which NumPy's functions do not reproduce bit for bit).

The tolerance, measured: with NumPy's float32 `log`, `cos` and `sin` the largest difference from PyTorch's
`torch.randn` over 4,000,007 draws is 7.2e-7 (3 float32 steps at 1.0); computed in float64 and rounded, 1.9e-6.
The check allows `1e-5 * (std + |mean|)` for float32 (five times that) and `1e-12 * (std + |mean|)` for
float64, while every wrong layout (sine and cosine swapped, the pairs interleaved, `log(u)` for `log(1 - u)`, a
missing `sqrt(-2 log)`, the last block not drawn again) moves values by more than 0.01."""
import math

import numpy as np

from ... import seams
from ...generator import Generator as _Framework
from ..registry import exercise

_FORBIDDEN = ["tinygrad_course._random_math.fisher_yates", "tinygrad_course._random_math.standard_normals_f32",
              "tinygrad_course._random_math.fma32", "tinygrad_course._random_math.fma64",
              "numpy.random.permutation", "numpy.random.shuffle", "numpy.random.normal", "numpy.random.uniform"]
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def _reference(attr, seed, *args, **kwargs):
    """The framework's own method `attr` on a generator seeded with `seed` (whatever is installed)."""
    return seams.reference(f"Generator.{attr}")(_Framework().manual_seed(seed), *args, **kwargs)


def _words(seed, n):
    return _Framework().manual_seed(seed)._engine.words32(n)


def _array(t, got, what, shape, dtype):
    t.true(isinstance(got, np.ndarray), f"{what} to return a NumPy array (got {type(got).__name__})",
           hint="return the NumPy array of values; the framework wraps it in a tensor")
    t.equal(tuple(got.shape), tuple(shape), f"the shape of {what}", hint="reshape the flat values to `shape`")
    t.equal(str(got.dtype), str(np.dtype(dtype)), f"the dtype of {what}",
            hint="float32 values for dtype float32, float64 values for float64 (astype(dtype) at the end)")


def _values(t, got, want, what, *, tolerance=0.0, why=None, hint=None, allowance="for log, sin and cos's last bits"):
    """Fail with the first element of `got` that differs from `want` (by more than `tolerance`, the `allowance`)."""
    got, want = np.asarray(got, np.float64).reshape(-1), np.asarray(want, np.float64).reshape(-1)
    bad = np.flatnonzero(~(np.abs(got - want) <= tolerance))
    if bad.size:
        i = int(bad[0])
        allowed = f" (more than the {tolerance:.2g} allowed {allowance})" if tolerance else ""
        wrong = f"\n  what went wrong: {why}" if why else ""
        t.fail(what, f"element {i} (flat) is {float(got[i])!r}, PyTorch's is {float(want[i])!r}{allowed}; "
                     f"{bad.size} of {want.size} values are not PyTorch's{wrong}", hint=hint)


# ---- wrong answers the check recognises (computed from the same words) ----------------------------------
def _uniform_mistake(got, seed, a, b, n, dtype):
    """What a float32 `uniform` that differs from PyTorch's did, judged from its values."""
    if dtype != _F32 or got.size != n:
        return None
    words = _words(seed, n)
    flat = np.asarray(got, np.float64).reshape(-1)
    lo, hi = np.float32(a), np.float32(b)
    span = np.float64(hi - lo)
    candidates = {
        "the top 24 bits of each word (word >> 8): PyTorch keeps the low 24 bits (word & 0xFFFFFF)":
            (words >> np.uint32(8)).astype(np.float64) * 2.0 ** -24,
        "all 32 bits of each word scaled by 2^-32: a float32 holds 24 bits, and PyTorch keeps the low 24 (word & "
        "0xFFFFFF) times 2^-24": words.astype(np.float64) * 2.0 ** -32,
    }
    for why, x in candidates.items():
        if np.allclose(flat, (x * span + np.float64(lo)).astype(np.float32), rtol=0, atol=1e-6 * (1 + abs(a) + abs(b))):
            return why
    x = (words & np.uint32(0xFFFFFF)).astype(np.float32) * np.float32(2.0 ** -24)
    unfused = x * (hi - lo) + lo
    unfused[unfused == hi] = lo
    if np.array_equal(flat, unfused.astype(np.float64)):
        return ("x * (b - a) + a was rounded twice (the product, then the sum, each in float32): PyTorch's compiled "
                "kernel rounds it once (a fused multiply-add)")
    return None


def _block_normals(u, swapped=False, interleaved=False, plain_u=False, no_radius=False):
    """Box-Muller on rows of 16 uniforms (float64 maths), with one of the layout mistakes."""
    u = np.asarray(u, np.float64).reshape(-1, 16)
    u1, u2 = (u[:, 0::2], u[:, 1::2]) if interleaved else (u[:, :8], u[:, 8:])
    with np.errstate(divide="ignore", invalid="ignore"):
        radius = np.ones_like(u1) if no_radius else np.sqrt(-2 * np.log(u1 if plain_u else 1 - u1))
    first, second = radius * np.cos(2 * np.pi * u2), radius * np.sin(2 * np.pi * u2)
    if swapped:
        first, second = second, first
    if interleaved:
        return np.stack([first, second], axis=2).reshape(-1)
    return np.concatenate([first, second], axis=1).reshape(-1)


def _normal_mistake(got, seed, n, mean, std):
    """What a float32 `normal` of n >= 16 elements that differs from PyTorch's did, judged from its values."""
    if got.size != n or n < 16:
        return None
    words = _words(seed, n + 16)
    u = (words & np.uint32(0xFFFFFF)).astype(np.float64) * 2.0 ** -24
    flat = (np.asarray(got, np.float64).reshape(-1) - mean) / std
    k = n // 16 * 16
    m = n - 16 if n % 16 else n  # the values of the full blocks that the last 16 do not overwrite
    mistakes = {
        "sine and cosine are swapped: PyTorch puts radius * cos(theta) in the first 8 of each block of 16 and "
        "radius * sin(theta) in the last 8": dict(swapped=True),
        "the pairs are interleaved (u1, u2 from neighbouring uniforms, results cos, sin, cos, sin, ...): PyTorch "
        "takes u1 from the first 8 uniforms of a block of 16 and u2 from the next 8, cos to the first half": dict(
            interleaved=True),
        "the radius uses log(u): PyTorch uses u1 = 1 - u, in (0, 1], so that log never sees 0": dict(plain_u=True),
        "the radius sqrt(-2 log(u1)) is missing: cos and sin alone lie in [-1, 1]": dict(no_radius=True),
    }
    for why, kind in mistakes.items():
        if np.allclose(flat[:m], _block_normals(u[:k], **kind)[:m], rtol=0, atol=1e-4):
            return why
    if n % 16 and np.allclose(flat[:m], _block_normals(u[:k])[:m], rtol=0, atol=1e-4):
        again = _block_normals(u[n - 16:n])
        if np.allclose(flat[n - 16:], again, rtol=0, atol=1e-4):
            return ("the last 16 values come from the last 16 of the n uniforms: PyTorch draws 16 new uniforms "
                    "for them after the n it drew first")
        early = _block_normals(u[k:k + 16])
        if np.allclose(flat[n - 16:], early, rtol=0, atol=1e-4):
            return ("the last 16 values were drawn right after the full blocks: PyTorch first draws all n uniforms, "
                    "then 16 more for the last 16 values")
        return ("the full blocks are right, the last n % 16 values are not: PyTorch recomputes the last 16 from 16 "
                "new uniforms")
    return None


def _cosines_only(seed, n):
    """The scalar path's first `n` values when every value draws a new pair (the cached sine never used)."""
    u = (_Framework().manual_seed(seed)._engine.random64(2 * n) & np.uint64(2 ** 53 - 1)) * 2.0 ** -53
    return np.sqrt(-2.0 * np.log1p(-u[1::2])) * np.cos(2.0 * np.pi * u[0::2])


def _permutation_mistake(got, seed, n):
    words = [int(w) for w in _Framework().manual_seed(seed)._engine.random32(max(n - 1, 0))]
    variants = {}
    perm = list(range(n))
    for i, w in enumerate(words):
        z = w % (n - i)
        perm[i], perm[z] = perm[z], perm[i]
    variants["the swap partner is random() % (n - i) counted from 0: PyTorch counts it from i (swap i with "
             "i + z)"] = perm
    perm = list(range(n))
    for i, w in enumerate(words):
        z = i + w % n
        if z < n:
            perm[i], perm[z] = perm[z], perm[i]
    variants["each swap drew random() % n: PyTorch draws random() % (n - i), a position from i on"] = perm
    perm = list(range(n))
    for i, w in zip(range(n - 1, 0, -1), words):
        z = w % (i + 1)
        perm[i], perm[z] = perm[z], perm[i]
    variants["the swaps run from the end (Knuth's order): PyTorch's run from position 0 up, swapping i with a "
             "position from i on"] = perm
    for why, variant in variants.items():
        if list(got) == variant:
            return why
    return None


class _Delegated(Exception):
    """Raised in place of the framework's own draw while the check runs the learner's methods."""


def _refusing(attr):
    def refuse(self, *args, **kwargs):
        raise _Delegated(attr)
    return refuse


@exercise("04.10", title="where a shuffle comes from: PyTorch's uniform, normal and randperm draws", points=4,
          forbidden=_FORBIDDEN)
def generator_check(t, Generator):
    t.true(isinstance(Generator, type) and issubclass(Generator, _Framework),
           "Generator to be a class that subclasses tc.Generator", hint="class Generator(tc.Generator): ...")
    for attr in ("uniform", "normal", "permutation"):
        own = [klass for klass in Generator.__mro__ if not klass.__module__.startswith("tinygrad_course")]
        t.true(any(attr in vars(klass) for klass in own), f"your Generator to define {attr} itself",
               hint=f"write def {attr}(self, ...) in the class body")
    # the framework's own draws refuse while the learner's methods run: they are what the learner replaces
    try:
        with seams.replaced({f"Generator.{attr}": _refusing(attr) for attr in ("uniform", "normal", "permutation")}):
            _draws(t, Generator)
    except _Delegated as error:
        t.fail("your Generator's draws", f"they call the framework's own Generator.{error} (through super(), "
                                          "tc.rand, tc.randn or tc.randperm), which build mode replaces with yours",
               hint="make every value from the words of self._engine (words32, random32, random64)")


def _draws(t, Generator):
    """The learner's three draws on fixed seeds, each compared with the framework's own on a generator seeded alike."""
    # uniform: 24 bits per float32, 53 per float64, scaled as PyTorch's fused kernel does
    for seed, a, b, shape, dtype in ((0, 0, 1, (6,), _F32), (1, -0.5, 2.0, (3, 400), _F32),
                                     (2, -0.25, 0.25, (1000,), _F32), (3, 0, 1, (2, 5), _F64)):
        call = f"Generator().manual_seed({seed}).uniform({a}, {b}, {shape}, np.{dtype.name})"
        got = Generator().manual_seed(seed).uniform(a, b, shape, dtype)
        _array(t, got, call, shape, dtype)
        _values(t, got, _reference("uniform", seed, a, b, shape, dtype), call,
                why=_uniform_mistake(got, seed, a, b, math.prod(shape), dtype),
                hint="float32: (word & 0xFFFFFF) * 2^-24 from self._engine.words32(n), then x * (b - a) + a computed "
                     "in float64 and rounded to float32 once; float64: (self._engine.random64(n) & (2^53 - 1)) * 2^-53")
    call = "Generator().manual_seed(4).uniform(-0.5, 2.0, (300,), np.float64)"
    got = Generator().manual_seed(4).uniform(-0.5, 2.0, (300,), _F64)
    _array(t, got, call, (300,), _F64)
    want = _reference("uniform", 4, -0.5, 2.0, (300,), _F64)
    _values(t, got, want, call, tolerance=2.0 ** -50, allowance="for the last bit of a float64 x * (b - a) + a",
            hint="53 bits of a 64-bit draw: (self._engine.random64(n) & (2**53 - 1)) * 2.0**-53, then x * (b - a) + a")
    call = "Generator().manual_seed(5).uniform(1000000.0, 1000001.0, (400,), np.float32)"
    got = Generator().manual_seed(5).uniform(1e6, 1e6 + 1, (400,), _F32)
    top = int(np.count_nonzero(np.asarray(got) == np.float32(1e6 + 1)))
    if top:
        t.fail(call, f"{top} values equal b = 1000001.0: near b, x * (b - a) + a rounds up to b, and PyTorch "
                     "returns values in [a, b)", hint="where the result equals b, put a instead (out[out == b] = a)")
    _values(t, got, _reference("uniform", 5, 1e6, 1e6 + 1, (400,), _F32), call)

    # normal: blocks of 16 (float32 and float64), the tail drawn again, the scalar path with its cached value
    for seed, mean, std, shape, dtype in ((6, 0.0, 1.0, (1000,), _F32), (7, 3.0, 0.5, (2, 16), _F32),
                                          (8, -1.0, 2.0, (40,), _F64), (9, 0.0, 1.0, (37,), _F32)):
        call = f"Generator().manual_seed({seed}).normal({mean}, {std}, {shape}, np.{dtype.name})"
        got = Generator().manual_seed(seed).normal(mean, std, shape, dtype)
        _array(t, got, call, shape, dtype)
        scale = 1e-5 if dtype == _F32 else 1e-12
        _values(t, got, _reference("normal", seed, mean, std, shape, dtype), call,
                tolerance=scale * (std + abs(mean)),
                why=_normal_mistake(got, seed, math.prod(shape), mean, std) if dtype == _F32 else None,
                hint="draw n uniforms first; each block of 16: u1 = 1 - u[:8], u2 = u[8:], radius = sqrt(-2 log u1), "
                     "theta = 2 pi u2, cos values then sin values; if n % 16, draw 16 more and redo the last 16")
    g, reference = Generator().manual_seed(10), _Framework().manual_seed(10)
    normal = seams.reference("Generator.normal")
    for k, n in enumerate((5, 3, 1, 2)):
        got, want = g.normal(0.0, 1.0, (n,), _F64), normal(reference, 0.0, 1.0, (n,), _F64)
        call = (f"g.normal(0.0, 1.0, ({n},), np.float64), call {k + 1} of normal with (5,), (3,), (1,), (2,) on "
                f"g = Generator().manual_seed(10)")
        _array(t, got, call, (n,), _F64)
        _values(t, got, want, call, tolerance=1e-12,
                why=(("each value drew a new pair: PyTorch returns the pair's sine value, kept in self._next_double, "
                      "as the next value" if k == 0 and np.allclose(got, _cosines_only(10, n), rtol=0, atol=1e-9) else
                      "fewer than 16 values take PyTorch's one-at-a-time path, not the blocks of 16: float64 pairs "
                      "from two 53-bit uniforms each, the cosine value returned and the sine value kept in "
                      "self._next_double for the next value") if k == 0 else
                     "a value kept in self._next_double by the last call comes first (and is then cleared)"),
                hint="with n < 16 (or not contiguous), for each value: self._next_double if it is not None (then set "
                     "it to None), else u1, u2 = two 53-bit uniforms, r = sqrt(-2 log1p(-u2)), theta = 2 pi u1: return "
                     "r cos(theta) and keep r sin(theta) in self._next_double")
    call = "Generator().manual_seed(11).normal(0.5, 2.0, (20,), np.float32, contiguous=False)"
    got = Generator().manual_seed(11).normal(0.5, 2.0, (20,), _F32, contiguous=False)
    _array(t, got, call, (20,), _F32)
    _values(t, got, _reference("normal", 11, 0.5, 2.0, (20,), _F32, contiguous=False), call, tolerance=1e-5 * 2.5,
            why="a tensor that is not contiguous takes the scalar path whatever its size",
            hint="use the blocks of 16 only when n >= 16 and contiguous")

    # permutation: randperm's Fisher-Yates with PyTorch's draws
    for seed, n in ((12, 10), (13, 1), (14, 0), (15, 500)):
        call = f"Generator().manual_seed({seed}).permutation({n})"
        got = Generator().manual_seed(seed).permutation(n)
        t.true(isinstance(got, np.ndarray), f"{call} to return a NumPy array (got {type(got).__name__})",
               hint="np.array(perm, dtype=np.int64)")
        t.equal(str(got.dtype), "int64", f"the dtype of {call}", hint="np.array(perm, dtype=np.int64)")
        want = _reference("permutation", seed, n)
        t.equal(sorted(got.tolist()), list(range(n)), f"the sorted values of {call}",
                hint="start from 0, 1, ..., n-1 and only swap")
        t.equal(got.tolist(), want.tolist(), f"{call}", why=_permutation_mistake(got.tolist(), seed, n),
                hint="words = self._engine.random32(n - 1); for i in range(n - 1): z = words[i] % (n - i), then swap "
                     "positions i and i + z")
    g = Generator().manual_seed(16)
    g.permutation(30)
    got = g.permutation(30)
    reference = _Framework().manual_seed(16)
    seams.reference("Generator.permutation")(reference, 30)
    t.equal(got.tolist(), seams.reference("Generator.permutation")(reference, 30).tolist(),
            "the second permutation(30) of Generator().manual_seed(16)",
            hint="draw n - 1 words per permutation, no more: the next epoch starts where this one stopped")
