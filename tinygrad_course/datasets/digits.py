"""`Digits`: the 1,797 handwritten digits scikit-learn ships (8x8, grey levels 0..16) — needs no network.

The default dataset for labs: small enough to train on a laptop CPU in seconds, real enough that an MLP
and a CNN behave as they do on MNIST. The data file (`data/digits.csv.gz`, 56 KB, the test set of the UCI
"Optical Recognition of Handwritten Digits" data, as scikit-learn distributes it) is package data, so the
course needs neither scikit-learn nor a network to load it.
"""
from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..factories import from_numpy
from .vision import VisionDataset


DATA_FILE = Path(__file__).resolve().parent / "data" / "digits.csv.gz"


@dataclass(frozen=True)
class DigitsArrays:
    """What `sklearn.datasets.load_digits()` returns, as plain arrays: `data` (1797, 64) float64,
    `images` (1797, 8, 8) float64 (a view of `data`), `target` (1797,) int."""

    data: np.ndarray
    images: np.ndarray
    target: np.ndarray


def load_digits() -> DigitsArrays:
    """The digits as `sklearn.datasets.load_digits()` gives them (same arrays, same order), read from the
    package's own copy of the data file."""
    with gzip.open(DATA_FILE, "rt") as file:
        table = np.loadtxt(file, delimiter=",")
    data = table[:, :-1]
    return DigitsArrays(data=data, images=data.reshape(-1, 8, 8), target=table[:, -1].astype(int))


class Digits(VisionDataset):
    """The 8x8 digits, split once into train (80%) and test (20%), stratified by class with a fixed seed.

    A sample is `(image, label)`: a float32 tensor of shape (1, 8, 8) scaled to [0, 1] and an int.
    `data` (N, 1, 8, 8) and `targets` (N,) hold the whole split as tensors (handy for a `TensorDataset`).
    """

    classes = [str(i) for i in range(10)]

    def __init__(self, root=None, train=True, transform=None, target_transform=None, download=False,
                 test_fraction=0.2, split_seed=0):
        bunch = load_digits()
        images = (bunch.images.astype(np.float32) / 16.0)[:, None, :, :]
        labels = bunch.target.astype(np.int64)
        rng = np.random.default_rng(split_seed)
        test_idx = []
        for c in range(10):
            members = np.flatnonzero(labels == c)
            rng.shuffle(members)
            test_idx.extend(members[: int(round(len(members) * test_fraction))].tolist())
        is_test = np.zeros(len(labels), dtype=bool)
        is_test[test_idx] = True
        keep = ~is_test if train else is_test
        self.train = train
        self.transform = transform
        self.target_transform = target_transform
        self.data = from_numpy(np.ascontiguousarray(images[keep]))
        self.targets = from_numpy(labels[keep])

    def _raw_item(self, index):
        return self.data[index], int(self.targets[index])

    def __len__(self):
        return len(self.targets)
