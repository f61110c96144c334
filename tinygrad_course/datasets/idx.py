"""Reading IDX files (the MNIST file format), gzip-compressed or raw.

Layout: two zero bytes, a type code, the number of dimensions, then one big-endian uint32 per dimension,
then the values in big-endian row-major order.
"""
from __future__ import annotations

import gzip

import numpy as np

_TYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path) -> np.ndarray:
    """The array stored in IDX file `path` (`.gz` files are decompressed), in native byte order."""
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rb") as f:
        data = f.read()
    return parse_idx(data, str(path))


def parse_idx(data: bytes, name: str = "IDX data") -> np.ndarray:
    """Parse the bytes of an IDX file."""
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] not in _TYPES:
        raise RuntimeError(f"{name} is not an IDX file (bad magic number {data[:4].hex()}).")
    ndim = data[3]
    header = 4 + 4 * ndim
    shape = tuple(int(d) for d in np.frombuffer(data, dtype=">u4", count=ndim, offset=4))
    dtype = np.dtype(_TYPES[data[2]])
    expected = header + int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(data) != expected:
        raise RuntimeError(f"{name} is truncated or corrupted: expected {expected} bytes, found {len(data)}.")
    arr = np.frombuffer(data, dtype=dtype, offset=header).reshape(shape)
    return arr.astype(dtype.newbyteorder("="))


def write_idx(path, array: np.ndarray, compress: bool = False):
    """Write `array` as an IDX file (used by tests and to make small sample files)."""
    code = {np.dtype(v).newbyteorder("=").str: k for k, v in _TYPES.items()}[np.dtype(array.dtype).str]
    big = np.asarray(array).astype(np.dtype(_TYPES[code]))
    data = bytes([0, 0, code, array.ndim]) + np.asarray(array.shape, ">u4").tobytes() + big.tobytes()
    with (gzip.open if compress else open)(path, "wb") as f:
        f.write(data)
