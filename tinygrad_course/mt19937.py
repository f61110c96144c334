"""PyTorch's CPU random engine: a 32-bit Mersenne Twister (MT19937) seeded and laid out as `at::mt19937`.

`torch.manual_seed(s)` fills the 624-word state with Matsumoto and Nishimura's `init_genrand(s & 0xffffffff)`;
each draw returns the next tempered 32-bit word, twisting a new block of 624 words when one is used up, and
a 64-bit draw joins two 32-bit ones (the first gives the high half). The words come from NumPy's MT19937
bit generator (the same algorithm, run in C over whole blocks, and seeded by NumPy's legacy integer seeding,
which is `init_genrand` in C); this module seeds it, reads and writes its state in PyTorch's terms, and
packs the state as the bytes `torch.get_rng_state()` returns."""
from __future__ import annotations

import numpy as np

N = 624
_STATE_BYTES = 5056  # sizeof(at::detail::CPUGeneratorImplState)


def init_genrand(seed: int) -> np.ndarray:
    """The 624 state words `at::mt19937(seed)` starts from (only the low 32 bits of `seed` are used): the
    recurrence `MT19937.seed` runs in C."""
    key = np.empty(N, np.uint32)
    x = int(seed) & 0xFFFFFFFF
    key[0] = x
    for j in range(1, N):
        x = (1812433253 * (x ^ (x >> 30)) + j) & 0xFFFFFFFF
        key[j] = x
    return key


def _pairs_high_first() -> bool:
    """Whether NumPy's full-range 64-bit integers from MT19937 put the first of their two words high (C leaves
    the order of the two draws in `mt19937_next64` to the compiler)."""
    bits = np.random.MT19937(0)
    first = np.random.Generator(bits).integers(0, 1 << 64, 1, dtype=np.uint64)[0]
    return int(first) >> 32 == int(np.random.MT19937(0).random_raw())


PAIRS_HIGH_FIRST = _pairs_high_first()


class MT19937:
    """One engine: `random32(n)` / `random64(n)` draw as `generator->random()` / `random64()` do."""

    def __init__(self, seed: int = 5489):
        self._bits = np.random.MT19937()
        self._words = np.random.Generator(self._bits)  # its full-range uint32 integers are the raw words
        self._legacy = np.random.RandomState(self._bits)  # its integer seeding is init_genrand, in C
        self.seed(seed)

    def seed(self, seed: int):
        self.initial_seed = int(seed)
        self._legacy.seed(int(seed) & 0xFFFFFFFF)
        self._fresh = True

    def _set(self, key, pos):
        self._bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": int(pos)}}
        self._fresh = pos == N  # seeded and not drawn from: PyTorch records next = 0 rather than 624

    def random32(self, n: int) -> np.ndarray:
        """`n` 32-bit words (uint64 array)."""
        self._fresh = False
        return self._bits.random_raw(int(n))

    def words32(self, n: int) -> np.ndarray:
        """`n` 32-bit words as a uint32 array (the same draws as `random32`, in half the memory)."""
        self._fresh = False
        return self._words.integers(0, 1 << 32, int(n), dtype=np.uint32)

    def word_pairs(self, n: int) -> np.ndarray:
        """`n` 32-bit words (`n` even), drawn two at a time as NumPy's 64-bit integers (a third faster than
        one at a time): a uint64 array whose high halves are the first of each pair where NumPy joins them so
        (`PAIRS_HIGH_FIRST`), else the uint32 words in order."""
        self._fresh = False
        pairs = self._words.integers(0, 1 << 64, int(n) // 2, dtype=np.uint64)
        return pairs if PAIRS_HIGH_FIRST else pairs.view(np.uint32)

    def random64(self, n: int) -> np.ndarray:
        """`n` 64-bit words: each from two 32-bit draws, the first one high."""
        r = self.random32(2 * int(n))
        return (r[0::2] << np.uint64(32)) | r[1::2]

    # ---- state in PyTorch's byte layout ---------------------------------------------------------------
    def to_bytes(self, next_double, next_float) -> np.ndarray:
        """The state as `torch.get_rng_state()`'s 5056 bytes, with the cached Box-Muller values."""
        st = self._bits.state["state"]
        pos = int(st["pos"])
        buf = np.zeros(_STATE_BYTES, np.uint8)
        head = np.array([self.initial_seed & 0xFFFFFFFFFFFFFFFF], np.uint64).view(np.uint8)
        buf[0:8] = head
        buf[8:12] = np.array([N + 1 - pos], np.int32).view(np.uint8)      # left
        buf[12:16] = np.array([1], np.int32).view(np.uint8)               # seeded
        buf[16:24] = np.array([0 if self._fresh else pos], np.uint64).view(np.uint8)  # next
        buf[24:24 + 8 * N] = np.asarray(st["key"], np.uint64).view(np.uint8)
        off = 24 + 8 * N                                                  # normal_x, normal_y, normal_rho
        if next_double is not None:
            buf[off + 8:off + 16] = np.array([next_double], np.float64).view(np.uint8)
            buf[off + 24:off + 28] = np.array([1], np.int32).view(np.uint8)
        if next_float is not None:
            buf[off + 32:off + 36] = np.array([next_float], np.float32).view(np.uint8)
            buf[off + 36] = 1
        return buf

    def from_bytes(self, buf: np.ndarray):
        """Restore from `torch.get_rng_state()`-style bytes; returns the cached (double, float) normals."""
        buf = np.ascontiguousarray(buf, np.uint8)
        if buf.size != _STATE_BYTES:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE_BYTES} but found the input "
                               f"RNG state size to be {buf.size}")
        left = int(buf[8:12].view(np.int32)[0])
        seeded = int(buf[12:16].view(np.int32)[0])
        nxt = int(buf[16:24].view(np.uint64)[0])
        if not (seeded and 0 < left <= N and nxt <= N):
            raise RuntimeError("Invalid mt19937 state")
        self.initial_seed = int(buf[0:8].view(np.uint64)[0])
        self._set(buf[24:24 + 8 * N].view(np.uint64).astype(np.uint32), N + 1 - left)
        self._fresh = nxt == 0 and left == 1
        off = 24 + 8 * N
        double = float(buf[off + 8:off + 16].view(np.float64)[0]) if buf[off + 24:off + 28].view(np.int32)[0] else None
        single = float(buf[off + 32:off + 36].view(np.float32)[0]) if buf[off + 36] else None
        return double, single
