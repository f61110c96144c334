"""The arithmetic PyTorch's CPU kernels use to turn random bits into values, reproduced bit for bit in NumPy.

PyTorch's x86 build contracts `a * b + c` into one fused multiply-add (rounded once), and its float32
normal kernel evaluates log, sin and cos with the polynomials of `avx_mathfun.h` (Cephes, eight lanes at a
time). NumPy rounds every operation, so `fma32`/`fma64` round the exact `a * b + c` once, and
`standard_normals_f32` follows the AVX code step by step (with its fused steps fused) over whole blocks of
random words. `log_f64` returns the C library's `log` (NumPy's own vectorised log differs from it in the
last bit now and then)."""
from __future__ import annotations

import math
import threading

import numpy as np

_f = np.float32
_TIE = np.uint64(1 << 28)
_LOW29 = np.uint64((1 << 29) - 1)
_FMA_BLOCK = 1 << 15


def fma32(a, b, c):
    """float32 `a * b + c` rounded once: exact in float64 except for a float32 tie, which is then resolved.
    A large array times a number plus a number is done in blocks that stay in the cache."""
    a = np.asarray(a)
    if a.size <= _FMA_BLOCK or np.ndim(b) or np.ndim(c):
        return _fma32(a, b, c)
    flat = np.ascontiguousarray(a, np.float32).reshape(-1)
    out = np.empty(flat.size, np.float32)
    b64, c64 = np.float64(np.float32(b)), np.float64(np.float32(c))
    r, low = np.empty(_FMA_BLOCK), np.empty(_FMA_BLOCK, np.uint64)
    tie = np.empty(_FMA_BLOCK, bool)
    for i in range(0, flat.size, _FMA_BLOCK):
        part = flat[i:i + _FMA_BLOCK]
        m = part.size
        rm, tm = r[:m], tie[:m]
        np.copyto(rm, part)
        np.multiply(rm, b64, out=rm)
        np.add(rm, c64, out=rm)
        np.bitwise_and(rm.view(np.uint64), _LOW29, out=low[:m])
        if np.equal(low[:m], _TIE, out=tm).any():
            ties = np.flatnonzero(tm)
            _resolve_ties(rm, ties, part[ties] * b64, c64)
        np.copyto(out[i:i + m], rm, casting="unsafe")
    return out.reshape(a.shape)


def _fma32(a, b, c):
    r = np.multiply(a, b, dtype=np.float64)
    r += c
    tie = (r.view(np.uint64) & _LOW29) == _TIE
    if tie.any():
        ties = np.flatnonzero(tie)
        at = np.unravel_index(ties, r.shape)
        p = np.broadcast_to(a, r.shape)[at].astype(np.float64) * np.broadcast_to(b, r.shape)[at]
        _resolve_ties(r.reshape(-1), ties, p, np.broadcast_to(np.asarray(c, np.float64), r.shape)[at])
    return r.astype(np.float32)


def _resolve_ties(flat, ties, p, c):
    """Where the float64 sum `flat[ties]` of the exact products `p` and `c` sits exactly between two floats,
    move it off the tie by the sign of its rounding error, so that rounding to float32 goes the fused way."""
    s = flat[ties]
    bv = s - p
    err = (p - (s - bv)) + (c - bv)
    flat[ties] = np.where(err != 0, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)


def _split(a):
    t = a * 134217729.0
    hi = t - (t - a)
    return hi, a - hi


def fma64(a, b, c):
    """float64 `a * b + c` rounded once (an error-free product and sum, then one rounding)."""
    a, b, c = (np.asarray(v, np.float64) for v in (a, b, c))
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    bv = s - p
    t = (p - (s - bv)) + (c - bv)
    return s + (t + e)


def log_f64(x):
    """The C library's `log` of a float64 array: computed in extended precision, and by `math.log` for
    the rare values that lie so near a rounding boundary that the two roundings could differ."""
    x = np.asarray(x, np.float64)
    wide = np.log(x.astype(np.longdouble))
    out = wide.astype(np.float64)
    near = np.abs(wide - out.astype(np.longdouble)) > 0.45 * np.spacing(np.abs(out)).astype(np.longdouble)
    if near.any():
        out[near] = [math.log(v) for v in x[near].tolist()]
    return out


# ---- PyTorch's float32 normals: `normal_fill_16_AVX2` with `log256_ps` and `sincos256_ps` -------------------
#
# A float32 fused multiply-add `fma(a, b, c)` is emulated in float64: the product of two floats is exact there
# (24 + 24 bits), so the float64 sum rounds once, and rounding that to float32 gives the fused result unless
# the float64 rounding moved it onto a float32 tie. Each step below avoids that second rounding one of three
# ways, said at the step: the float64 sum is exact (so only the float32 rounding happens); or the step's
# result stays in one binade [2^a, 2^(a+1)) for every input, so adding `c + 1.5 * 2^(a+29)` rounds the sum
# straight onto the float32 grid of that binade (one rounding, ties to even) and subtracting `1.5 * 2^(a+29)`
# gives it back exactly; or the inputs are few enough (2^24 random words per half) that every one was checked
# (tests/core/test_random_math.py compares all of them with the step-by-step reference). An exact float64
# result is rounded to float32 where it is in one of two ways: converted to float32 (and back when the next
# step needs float64), or, in log's Horner steps, on its own bits (add half of the unit of the 29 bits a
# float32 lacks, then clear them: ties would round away from zero, and no input reaches one). Some steps are
# done in float32 where the fused and the unfused result agree on every input but a few, which are redone
# exactly (said at the step).
#
# Scaling a value by a power of two commutes with every rounding here (nothing comes near float32's
# smallest or largest numbers), so the kernel works on scaled copies of the AVX values wherever that saves a
# step: the log on x / 2 gives -log / 2 and the radius / 2, and sincos on 2 * theta gives 2 * cos and
# 2 * sin, whose product is the AVX product. Bit operations that never carry across 32 bits are done on
# 64-bit views (twice as many lanes per operation). All work is done on blocks small enough to stay in the
# cache, in arrays allocated once per thread from one pool aligned to 2 MiB (NumPy asks the kernel for huge
# pages for it, which spares most address translation misses), and the two halves of each block of 16 words
# are gathered apart and back by index.

_d = np.float64
_c = np.array  # the kernel's constants are 0-d arrays: NumPy would convert a scalar operand on every call
_V8 = np.dtype((np.void, 32))  # eight 32-bit lanes: half a block of 16 words, copied as one item
_ROWS = 4096                   # blocks of 16 words transformed at a time
_HUGE = 1 << 21                # huge page size; NumPy advises huge pages for arrays of 4 MiB and more
_LOG_P = tuple(_d(_f(c)) for c in (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1,
                                   1.4249322787E-1, -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1,
                                   3.3333331174E-1))
# the Horner polynomial in x / 2 times -512, -256, ..., -4 (step by step, so the product with x / 2 is
# -2 * (y * x) and each step's rounding is the AVX rounding scaled)
_LOG_P0, _LOG_P1 = _c(-1024 * _LOG_P[0]), _c(-512 * _LOG_P[1])
_LOG_PS = tuple(_c(-2.0 ** (9 - i) * c) for i, c in enumerate(_LOG_P[2:], 1))
_SQRTHF_BITS = int(np.array([0.707106781186547524], np.float32).view(np.int32)[0])
_ONE_BITS = 0x3F800000
_HALF_DROPPED, _KEEP_24 = _c(1 << 28, np.int64), _c(~((1 << 29) - 1), np.int64)  # a float64's low 29 bits
_LOG_Q1, _LOG_Q2 = _c(_f(-2.12194440e-4) / _f(-2), _f), _c(_f(0.693359375) / _f(-2), _f)  # times -1/2, as the log
_TWO_PI_ULP = _c(_f(2.0 * math.pi) * _f(2.0 ** -23), _f)  # 2pi (float32) times twice the uniforms' step, exactly
# times 4: the kernel multiplies them by j / 2 and works on 2 * theta
_DP1_4, _DP2_4 = _c(4 * -0.78515625, _f), _c(4 * -2.4187564849853515625e-4, _f)
_DP3_4 = _c(4 * _f(-3.77489497744594108e-8), _f)
_COS_P = tuple(_d(_f(c)) for c in (2.443315711809948E-005, -1.388731625493765E-003, 4.166664568298827E-002))
_SIN_P = tuple(_d(_f(c)) for c in (-1.9515295891E-4, 8.3321608736E-3, -1.6666654611E-1))


def _snap(binade):
    """The constant whose addition rounds a float64 in [2^binade, 2^(binade+1)) to float32's grid there."""
    return 1.5 * 2.0 ** (binade + 29)


# the cos and sin polynomials in z' = (2x)^2 = 4z as columns, scaled step by step so that cos's ends as
# 2 * cos and sin's product with 2x as 2 * sin (cos's steps times 1/32, 1/8, 1/2; sin's times 1/16, 1/4, 1),
# and the constant that rounds their first step (in binade 2^-10 for cos and 2^-7 for sin unscaled, for
# every z)
_POLY0 = np.array([[_COS_P[0] / 128], [_SIN_P[0] / 64]])
_POLY_SNAP = np.array([[_snap(-15)], [_snap(-11)]])
_POLY1_SNAP = np.array([[_COS_P[1] / 32], [_SIN_P[1] / 16]]) + _POLY_SNAP
_POLY2 = np.array([[_COS_P[2] / 8], [_SIN_P[2] / 4]])
_SIGNS = _c(0x8000000080000000, np.uint64)      # the sign bits of two float32 lanes
_QUARTER_TURN = _c(0x4000000040000000, np.uint64)
_MASK24 = _c(0x00FFFFFF00FFFFFF, np.uint64)
_MANTISSA = _c(0x007FFFFF007FFFFF, np.uint64)
_HALF_SQRTHF = _c((_SQRTHF_BITS - (1 << 23)) * 0x100000001, np.uint64)  # sqrt(1/2) / 2 in both lanes
_N_ONE = _c(1 << 24, np.uint32)
_E_CARRY = _c(_ONE_BITS - _SQRTHF_BITS - (151 << 23), np.int32)
_I23, _I31, _U21, _U22 = _c(23, np.int32), _c(31, np.int32), _c(1 << 21, np.uint32), _c(22, np.uint32)
_L30, _L1, _L32 = _c(30, np.uint64), _c(1, np.uint64), _c(32, np.uint64)
_F_HALF, _F_TWO, _QUARTER = _c(0.5, _f), _c(2, _f), _c(0.25)
_blocks = threading.local()


class _Block:
    """Buffers for up to `rows` blocks of 16 words, and the two halves of the AVX kernel on them."""

    def __init__(self, rows):
        lanes = rows * 8
        self.capacity, self.rows = rows, None
        # (name, count, dtype) carved in order from one pool
        layout = [("_k", 2 * lanes, np.uint32),      # the words' low 24 bits: u1 half, u2 half
                  ("_o", 2 * lanes, np.float32),     # 2 * cos results, 2 * sin results
                  ("_poly", 2 * lanes, np.float64)]
        layout += [(f"_f{n}", lanes, np.float32) for n in range(6)]
        layout += [(f"_d{n}", lanes, np.float64) for n in range(3)]
        layout += [(f"_i{n}", lanes, np.int32) for n in range(3)]
        size = sum(count * np.dtype(dtype).itemsize for _, count, dtype in layout)
        self._pool = np.empty(size + _HUGE if size >= _HUGE // 2 else size, np.uint8)
        at = -self._pool.ctypes.data % _HUGE if size >= _HUGE // 2 else 0
        for name, count, dtype in layout:
            nbytes = count * np.dtype(dtype).itemsize
            setattr(self, name, self._pool[at:at + nbytes].view(dtype))
            at += nbytes
        self._f = [getattr(self, f"_f{n}") for n in range(6)]
        self._d = [getattr(self, f"_d{n}") for n in range(3)]
        self._i = [getattr(self, f"_i{n}") for n in range(3)]
        self._orders = {}

    def _use(self, rows):
        """Work on the first `rows` blocks of the buffers (their views made here once, not per block)."""
        lanes = rows * 8
        self.rows = rows
        # a block's two halves of eight words apart and back: gathers of 32-byte items by index (NumPy's
        # take is faster than a copy through a transposed view)
        if rows not in self._orders:
            self._orders[rows] = (np.arange(2 * rows).reshape(rows, 2).T.reshape(-1),
                                  np.arange(2 * rows).reshape(2, rows).T.reshape(-1))
        self.split, self.join = self._orders[rows]
        self.k = self._k[:2 * lanes].reshape(2, rows, 8)
        self.k_items, self.k64 = self.k.view(_V8).reshape(-1), self.k.reshape(-1).view(np.uint64)
        self.k_radius, self.k_sincos = self.k[0].reshape(-1), self.k[1].reshape(-1)
        self.o_items = self._o[:2 * lanes].view(_V8)
        self.f, self.d, self.i = ([a[:lanes] for a in group] for group in (self._f, self._d, self._i))
        self.f_bits = [a.view(np.int32) for a in self.f]
        self.f_bits64 = [a.view(np.uint64) for a in self.f]
        self.d_bits64 = [a.view(np.int64) for a in self.d]
        self.high = self.d[0].view(np.uint64)             # scratch for the swap of the words' halves
        self.i_bits64 = [a.view(np.uint64) for a in self.i]
        # the sincos results are made where the normals go, and multiplied by the radius in place
        self.poly, self.poly32 = self._poly[:2 * lanes].reshape(2, lanes), self._o[:2 * lanes].reshape(2, lanes)
        self.poly_rows, self.poly32_rows = tuple(self.poly), tuple(self.poly32)
        self.poly32_bits64 = tuple(a.view(np.uint64) for a in self.poly32)

    def fill(self, words, out, swapped=False):
        """Standard normals for `words` ((rows, 16) uint32) into `out` ((rows, 16) float32), as
        `normal_fill_16`: u1 = 1 - u[:8], u2 = u[8:], radius * cos first, then radius * sin. `swapped`:
        the words come in pairs swapped (the second of each pair first)."""
        if self.rows != len(words):
            self._use(len(words))
        k64 = self.k64
        words.view(_V8).reshape(-1).take(self.split, out=self.k_items, mode="clip")
        if swapped:  # swap the 32-bit halves of each 64 bits back
            high = self.high
            np.right_shift(k64, _L32, high)
            np.left_shift(k64, _L32, k64)
            np.bitwise_or(k64, high, k64)
        np.bitwise_and(k64, _MASK24, k64)
        half_r = self._radius(self.k_radius)
        two_sincos = self._sincos(self.k_sincos)
        np.multiply(two_sincos, half_r, two_sincos)
        self.o_items.take(self.join, out=out.view(_V8).reshape(-1), mode="clip")

    def _radius(self, k):
        """sqrt(-2 * log256_ps(1 - k * 2^-24)) / 2 for 24-bit integers `k` (uint32), in float32."""
        nf, y32, z32, e32, q32, _ = self.f  # the result stays in f[1]
        x, y, _ = self.d
        e = self.i[0]
        np.subtract(_N_ONE, k, k)
        np.copyto(nf, k.view(np.int32), casting="unsafe")  # n = 2^24 * (1 - u), exact
        # log256_ps splits 1 - u into e and a mantissa m in [0.5, 1), then where m < sqrt(1/2) doubles m and
        # lowers e by one. Adding 1.0's bits minus sqrt(1/2)'s to n's bits carries into the exponent exactly
        # where m >= sqrt(1/2), so one shift gives the final e (less the bias 127 and the 24 of
        # 1 - u = n * 2^-24, taken off the exponent field first) and the low bits give the final mantissa
        bits = self.f_bits[0]
        np.add(bits, _E_CARRY, bits)
        np.right_shift(bits, _I23, e)
        bits64 = self.f_bits64[0]
        np.bitwise_and(bits64, _MANTISSA, bits64)
        np.add(bits64, _HALF_SQRTHF, bits64)             # m / 2, m in [sqrt(1/2), sqrt(2))
        x32 = nf
        np.subtract(x32, _F_HALF, x32)                   # x / 2 = (m - 1) / 2, exact: a multiple of 2^-25
        np.copyto(x, x32)
        # Horner steps: |y| >= 2^-4 and |x| < 2^-1 throughout (unscaled), so y * x + c is a multiple of 2^-51
        # below 2^-1 (at most 50 bits): the float64 sum is exact
        np.multiply(x, _LOG_P0, y)
        np.add(y, _LOG_P1, y)
        bits64 = self.d_bits64[1]
        for c in _LOG_PS:
            # round y to float32's 24 bits in place: add half of the dropped bits' unit and drop them (a tie
            # rounds away from zero, not to even: no input reaches a tie, checked for every input)
            np.add(bits64, _HALF_DROPPED, bits64)
            np.bitwise_and(bits64, _KEEP_24, bits64)
            np.multiply(y, x, y)
            np.add(y, c, y)
        np.copyto(y32, y, casting="unsafe")
        t = x                                            # float64 x is done with
        np.multiply(y32, x32, y32)                       # y = y * x, times -2
        np.multiply(x32, x32, z32)                       # z = x * x, times 1/4
        np.copyto(e32, e, casting="unsafe")
        np.multiply(e32, _LOG_Q1, q32)
        np.copyto(y, y32)                                # y = fma(y, z, e * q1), times -1/2: checked
        np.copyto(t, z32)
        np.multiply(y, t, y)
        np.copyto(t, q32)
        np.add(y, t, y)
        np.copyto(y32, y, casting="unsafe")
        np.add(y32, z32, y32)                            # y - z * 0.5, times -1/2 (z * 0.5 is exact)
        np.subtract(x32, y32, y32)                       # x + y, times +1/2
        np.multiply(e32, _LOG_Q2, e32)                   # a small integer times 355/1024: exact
        # log256_ps(1 - u) times -1/2 as e * q2 - (x + y), which is -0 for 1 - u = 1 as AVX's -2 * log is
        np.subtract(e32, y32, y32)
        return np.sqrt(y32, y32)

    def _sincos(self, k):
        """2 * sincos256_ps(2pi * k * 2^-24) for 24-bit integers `k`: float32 cos (row 0) and sin (row 1)."""
        th, _, x32, a32, yj, z32 = self.f  # f[1] holds the radius
        x, z, _ = self.d
        mask = self.i[1]
        np.copyto(th, k.view(np.int32), casting="unsafe")
        np.multiply(th, _TWO_PI_ULP, th)                 # 2 * theta = 4pi * u, one float32 rounding
        # j = (int(theta * 4/pi) + 1) & ~1 in {0, 2, 4, 6, 8}; int(theta * 4/pi) steps up exactly at the
        # multiples of 2^21 (checked for every input), so j / 2 = (k + 2^21) >> 22, kept as j/2 here
        np.add(k, _U21, k)
        np.right_shift(k, _U22, k)
        np.copyto(yj, k.view(np.int32), casting="unsafe")
        np.multiply(yj, _DP1_4, a32)                     # the first two products are exact
        np.add(th, a32, x32)
        np.multiply(yj, _DP2_4, a32)
        np.add(x32, a32, x32)
        # x = fma(j, DP3, x): the float32 product is exact but for j = 6, and rounding the float32 sum gives
        # the fused result on every input but three, where |x| < 1e-6 (checked for every input); wherever
        # x is that small (22 of the 2^24 inputs), the sum is redone exactly
        np.multiply(yj, _DP3_4, a32)
        np.add(x32, a32, x32)                            # 2x
        np.multiply(x32, x32, z32)                       # 4z
        if z32.min() < 4e-12:
            tiny = np.flatnonzero(z32 < 4e-12)
            xt, jt = th[tiny] + yj[tiny] * _DP1_4 + yj[tiny] * _DP2_4, yj[tiny].astype(np.float64)
            x32[tiny] = jt * _d(_DP3_4) + xt
            z32[tiny] = x32[tiny] * x32[tiny]
        np.copyto(x, x32)
        np.copyto(z, z32)
        # the cos and sin polynomials side by side (row 0 cos, row 1 sin); their first step stays in one
        # binade for every z, so adding the constant rounds it; the second step's float64 sum is rounded to
        # float32 as it is converted, which gives the fused result on every input (checked)
        poly, poly32 = self.poly, self.poly32
        np.multiply(z, _POLY0, poly)
        np.add(poly, _POLY1_SNAP, poly)
        np.subtract(poly, _POLY_SNAP, poly)
        np.multiply(poly, z, poly)
        np.add(poly, _POLY2, poly)
        np.copyto(poly32, poly, casting="unsafe")
        np.multiply(poly32, z32, poly32)
        np.copyto(poly, poly32)
        yc, ys = self.poly_rows
        np.subtract(yc, _QUARTER, yc)
        np.multiply(yc, z, yc)                           # cos: fma(y, z, -(z * 0.5)) as (y - 0.5) * z: checked
        np.multiply(ys, x, ys)
        np.add(ys, x, ys)                                # sin: fma(y, x, x): checked for every input
        np.copyto(poly32, poly, casting="unsafe")
        np.add(self.poly32_rows[0], _F_TWO, self.poly32_rows[0])
        # octant: swap the polynomials where j & 2, negate sin where j & 4, cos where (j + 2) & 4
        yc, ys = self.poly32_bits64
        octant, mask64, sign = k.view(np.uint64), self.i_bits64[1], self.i_bits64[2]
        # j's bits 1 and 2 on top of each 32-bit lane (a lane's j = 8 spills into the next lane's bit 0,
        # which nothing below reads)
        np.left_shift(octant, _L30, octant)
        np.left_shift(octant, _L1, mask64)
        np.right_shift(mask, _I31, mask)                 # all ones where j & 2 (32-bit lanes)
        np.bitwise_xor(ys, yc, sign)
        np.bitwise_and(sign, mask64, sign)
        np.bitwise_xor(ys, sign, ys)
        np.bitwise_xor(yc, sign, yc)
        np.bitwise_and(octant, _SIGNS, sign)
        np.bitwise_xor(ys, sign, ys)
        np.add(octant, _QUARTER_TURN, octant)            # a carry out of a lane's sign bit lands in bit 0
        np.bitwise_and(octant, _SIGNS, octant)
        np.bitwise_xor(yc, octant, yc)
        return poly32


def standard_normals_f32(draw, out):
    """Fill `out` (a contiguous float32 array whose size is a multiple of 16) with PyTorch's float32 N(0, 1)
    values: each block of 16 random 32-bit words, taken in order from `draw(count)`, gives 16 normals by
    Box-Muller on the words' low 24 bits, as the AVX2 `normal_fill_16` does. `draw` returns the words as a
    uint32 array, or as a uint64 array of pairs with the first word of each pair in the high half. The words
    are drawn a block at a time, so they are still in the cache when used."""
    out = out.reshape(-1, 16)
    block = getattr(_blocks, "block", None)
    if block is None or block.capacity < min(len(out), _ROWS):  # buffers per thread, kept between calls
        block = _blocks.block = _Block(min(len(out), _ROWS))
    for i in range(0, len(out), _ROWS):
        part = out[i:i + _ROWS]
        words = draw(part.size)
        block.fill(words.view(np.uint32).reshape(-1, 16), part, words.dtype == np.uint64)
    return out.reshape(-1)


# ---- PyTorch's randperm: Fisher-Yates swaps ------------------------------------------------------------
_SWAPS_ONE_BY_ONE = 1024  # the last swaps (on few positions, where runs of independent swaps are short)


def fisher_yates(offsets):
    """The permutation of 0..n-1 (n = len(offsets) + 1) that `torch.randperm` builds: for i = 0, 1, ...,
    swap positions i and i + offsets[i]. A run of consecutive swaps that touch no position twice is a set of
    disjoint transpositions, so the run is done at once with NumPy; a run ends at the first swap that
    touches a position an earlier swap of the run touched."""
    steps = len(offsets)
    perm = np.arange(steps + 1, dtype=np.int64)
    targets = np.arange(steps, dtype=np.int64) + np.asarray(offsets, np.int64)
    a = 0
    while steps - a > _SWAPS_ONE_BY_ONE:
        size = min(steps - a, math.isqrt(steps - a))  # runs are about this long before a repeat
        j = targets[a:a + size]
        order = np.argsort(j, kind="stable")
        ends = [size]
        repeats = order[1:][j[order[1:]] == j[order[:-1]]]   # later swaps to a position already swapped to
        if repeats.size:
            ends.append(int(repeats.min()))
        rel = j - a
        inside = rel[(rel > np.arange(size)) & (rel < size)]  # positions that later swaps of the run start at
        if inside.size:
            ends.append(int(inside.min()))
        run = min(ends)
        i, j = np.arange(a, a + run), j[:run]
        perm[i], perm[j] = perm[j], perm[i]
        a += run
    rest = perm[a:].tolist()  # the remaining swaps only touch positions from a on
    for i, k in enumerate(targets[a:].tolist()):
        rest[i], rest[k - a] = rest[k - a], rest[i]
    perm[a:] = rest
    return perm
