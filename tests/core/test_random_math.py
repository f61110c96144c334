"""The float32 normal kernel of `_random_math` against a step-by-step reference of PyTorch's AVX code.

`reference_log_ps` / `reference_sincos_ps` follow `log256_ps` / `sincos256_ps` of PyTorch's `avx_mathfun.h`
one operation at a time (each fused multiply-add rounded once by `fma32`, which resolves float32 ties
exactly). The kernel reorganises that arithmetic for speed (float64 steps, rounding by constants, values
scaled by powers of two: it gives radius / 2, 2 * cos and 2 * sin); since
its inputs are the low 24 bits of a random word, the slow test compares it with the reference on every one of
the 2^24 inputs of each half, which proves the two equal. The fast test samples them."""
import math

import numpy as np
import pytest

from tinygrad_course import _random_math as rm
from tinygrad_course.mt19937 import MT19937, init_genrand

_f = np.float32
_MIN_NORM = np.array([0x00800000], np.int32).view(np.float32)[0]
_HALF_BITS = np.int32(0x3F000000)
_LOG_P = (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1,
          -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1)


def reference_log_ps(x):
    """`log256_ps` of PyTorch's `avx_mathfun.h` for positive float32 `x` (Cephes `logf`)."""
    x = np.maximum(np.asarray(x, np.float32), _MIN_NORM)
    bits = x.view(np.int32)
    e = ((bits >> 23) - 0x7F).astype(np.float32) + _f(1)
    x = ((bits & np.int32(~0x7F800000)) | _HALF_BITS).view(np.float32)
    small = x < _f(0.707106781186547524)
    x = (x - _f(1)) + np.where(small, x, _f(0))
    e = e - small.astype(np.float32)
    z = x * x
    y = np.full_like(x, _f(_LOG_P[0]))
    for coef in _LOG_P[1:]:
        y = rm.fma32(y, x, _f(coef))
    y = y * x
    y = rm.fma32(y, z, e * _f(-2.12194440e-4))
    y = y - z * _f(0.5)  # the products here are exact (a power of two; a small integer times 355/512), so
    return (x + y) + e * _f(0.693359375)  # fusing them changes nothing


def reference_sincos_ps(x):
    """`sincos256_ps` of PyTorch's `avx_mathfun.h`: (sin, cos) of float32 `x` (Cephes `sinf`/`cosf`)."""
    x = np.asarray(x, np.float32)
    sign_sin = x.view(np.int32) & np.int32(-0x80000000)
    x = np.abs(x)
    j = (x * _f(1.27323954473516)).astype(np.int32)
    j = (j + 1) & ~1
    y = j.astype(np.float32)
    sign_sin = sign_sin ^ ((j & 4) << 29)
    sign_cos = ((~(j - 2)) & 4) << 29
    use_sin_poly = (j & 2) == 0
    x = x + y * _f(-0.78515625)  # exact products: j < 16 times constants of 8 and 12 bits
    x = x + y * _f(-2.4187564849853515625e-4)
    x = rm.fma32(y, _f(-3.77489497744594108e-8), x)
    z = x * x
    yc = rm.fma32(np.full_like(z, _f(2.443315711809948E-005)), z, _f(-1.388731625493765E-003))
    yc = rm.fma32(yc, z, _f(4.166664568298827E-002)) * z
    yc = rm.fma32(yc, z, -(z * _f(0.5))) + _f(1)
    ys = rm.fma32(np.full_like(z, _f(-1.9515295891E-4)), z, _f(8.3321608736E-3))
    ys = rm.fma32(ys, z, _f(-1.6666654611E-1)) * z
    ys = rm.fma32(ys, x, x)
    s = np.where(use_sin_poly, ys, yc)
    c = np.where(use_sin_poly, yc, ys)
    return (s.view(np.int32) ^ sign_sin).view(np.float32), (c.view(np.int32) ^ sign_cos).view(np.float32)


def _reference(k):
    """(radius, sin, cos) of the reference for 24-bit integers `k`, both halves of `normal_fill_16`."""
    u = k.astype(np.float32) * np.float32(2.0 ** -24)
    radius = np.sqrt(np.float32(-2.0) * reference_log_ps(np.float32(1.0) - u))
    s, c = reference_sincos_ps(np.float32(2.0 * math.pi) * u)
    return radius, s, c


def _kernel(k):
    block = rm._Block(len(k) // 8)
    block._use(len(k) // 8)
    radius = block._radius(k.copy()) * np.float32(2)   # the kernel gives radius / 2, 2 * cos and 2 * sin
    c, s = block._sincos(k.copy()) / np.float32(2)
    return radius, s, c


def _assert_same(k):
    for ours, ref, what in zip(_kernel(k), _reference(k), ("radius", "sin", "cos")):
        bad = np.flatnonzero(ours.view(np.int32) != ref.view(np.int32))
        assert bad.size == 0, f"{what} differs for k = {k[bad[:5]].tolist()}"


def test_the_kernel_matches_the_reference_on_sampled_and_edge_inputs():
    edges = [0, 1, 2, 3, (1 << 24) - 1, (1 << 24) - 2]
    edges += [(1 << 24) - (1 << p) + d for p in range(24) for d in (-1, 0, 1)]   # 1 - u near powers of two
    edges += [round(q * (1 << 21)) + d for q in range(8) for d in (-2, -1, 0, 1, 2)]  # theta near octants
    k = np.array(edges + list(np.random.default_rng(0).integers(0, 1 << 24, 1 << 15)), np.int64)
    k = np.clip(k, 0, (1 << 24) - 1).astype(np.uint32)
    _assert_same(k[:len(k) // 8 * 8])


@pytest.mark.slow
def test_the_kernel_matches_the_reference_on_every_input():
    step = 1 << 18
    for start in range(0, 1 << 24, step):
        _assert_same(np.arange(start, start + step, dtype=np.uint32))



def test_seeding_in_c_is_init_genrand_and_the_uint32_words_are_the_raw_words():
    for seed in (0, 1, 5489, 2 ** 32 - 1, 2 ** 40 + 3):
        engine = MT19937(seed)
        state = engine._bits.state["state"]
        assert np.array_equal(state["key"], init_genrand(seed)) and state["pos"] == 624
        words = engine.words32(1000)
        engine.seed(seed)
        assert words.dtype == np.uint32 and np.array_equal(words, engine.random32(1000))


def test_word_pairs_are_the_raw_words_two_at_a_time_and_the_kernel_takes_either_form():
    engine = MT19937(7)
    words = engine.random32(1000)
    engine.seed(7)
    pairs = engine.word_pairs(1000)
    after = engine.random32(3)
    if pairs.dtype == np.uint64:  # NumPy joins each pair with its first word high
        assert np.array_equal(pairs >> np.uint64(32), words[0::2]) and np.array_equal(pairs & 0xFFFFFFFF, words[1::2])
    else:
        assert np.array_equal(pairs, words)
    engine.seed(7)
    engine.random32(1000)
    assert np.array_equal(after, engine.random32(3))  # the state moved on by 1000 words either way
    paired, single = np.empty(992, np.float32), np.empty(992, np.float32)
    engine.seed(7)
    rm.standard_normals_f32(engine.word_pairs, paired)
    engine.seed(7)
    rm.standard_normals_f32(engine.words32, single)
    assert np.array_equal(paired.view(np.int32), single.view(np.int32))


def _swaps_one_by_one(offsets):
    perm = list(range(len(offsets) + 1))
    for i, k in enumerate(offsets.tolist()):
        perm[i], perm[i + k] = perm[i + k], perm[i]
    return np.array(perm, np.int64)


def test_fisher_yates_runs_of_swaps_equal_the_swaps_one_by_one():
    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 17, 1025, 3000, 40_001):
        room = np.arange(n - 1, 0, -1)  # offset i may reach the last position, n - 1 - i
        uniform = rng.integers(0, 2 ** 32, n - 1) % (room + 1)
        short = np.minimum(rng.integers(0, 3, n - 1), room)   # many self-swaps and neighbours
        for offsets in (uniform, short, np.zeros(n - 1, np.int64), room):
            assert np.array_equal(rm.fisher_yates(offsets), _swaps_one_by_one(offsets)), n
