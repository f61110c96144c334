"""DataLoader throughput with worker processes, for the benchmark suite.

A map-style dataset of 2048 float32 "images" (3x32x32) held as one NumPy array; `__getitem__` converts one
sample to the framework's tensor and normalises it (x - mean) / std, as a transform would. One step iterates a
whole epoch with `DataLoader(batch_size=64, shuffle=True, num_workers=2)` (workers started each epoch, the
default `persistent_workers=False`), so the figure includes worker start-up, index hand-out, collation and
the transfer of batches between processes.
"""
from __future__ import annotations

import numpy as np

SAMPLES, BATCH, WORKERS = 2048, 64, 2


class ImageSet:
    """Map-style dataset over `images` (N, 3, 32, 32) with integer labels, for framework `lib`."""

    def __init__(self, lib, images, labels):
        self.lib, self.images, self.labels = lib, images, labels

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        x = self.lib.from_numpy(self.images[i])
        return (x - 0.5) / 0.25, int(self.labels[i])


def make_loader(lib, tiny=False):
    """`step(i)` iterates one epoch and returns the number of samples seen."""
    n, workers = (8, 1) if tiny else (SAMPLES, WORKERS)
    rng = np.random.default_rng(0)
    data = ImageSet(lib, rng.random((n, 3, 32, 32), dtype=np.float32), rng.integers(0, 10, n))
    generator = lib.Generator().manual_seed(0)
    loader = lib.utils.data.DataLoader(data, batch_size=4 if tiny else BATCH, shuffle=True, num_workers=workers,
                                       generator=generator)

    def step(i):
        seen = 0
        for x, y in loader:
            seen += x.shape[0]
        assert seen == n
        return float(seen)

    return step
