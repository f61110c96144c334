"""`Digits`: scikit-learn's 1,797 handwritten digits (8x8, grey levels 0..16) — needs no network.

The default dataset for labs: small enough to train on a laptop CPU in seconds, real enough that an MLP
and a CNN behave as they do on MNIST.
"""
from __future__ import annotations

import numpy as np

from ..factories import from_numpy
from .vision import VisionDataset


class Digits(VisionDataset):
    """The 8x8 digits, split once into train (80%) and test (20%), stratified by class with a fixed seed.

    A sample is `(image, label)`: a float32 tensor of shape (1, 8, 8) scaled to [0, 1] and an int.
    `data` (N, 1, 8, 8) and `targets` (N,) hold the whole split as tensors (handy for a `TensorDataset`).
    """

    classes = [str(i) for i in range(10)]

    def __init__(self, root=None, train=True, transform=None, target_transform=None, download=False,
                 test_fraction=0.2, split_seed=0):
        from sklearn.datasets import load_digits

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
