"""Course datasets: `Digits` (no network), `MNIST`, `FashionMNIST`, synthetic 2-D sets and
`shakespeare()` (chapter 10's text)."""
from .digits import Digits, load_digits
from .idx import read_idx, write_idx
from .mnist import MNIST, FashionMNIST
from .synthetic import make_blobs, make_moons, make_spirals
from .text import shakespeare

__all__ = ["Digits", "load_digits", "MNIST", "FashionMNIST", "make_moons", "make_spirals", "make_blobs", "read_idx",
           "write_idx", "shakespeare"]
