"""Samplers decide the order in which a DataLoader visits dataset indices (like `torch.utils.data.sampler`)."""
from __future__ import annotations

import numbers

import numpy as np

from ...dtypes import int64
from ...factories import empty, multinomial, randint, randperm, tensor
from ...generator import Generator, default_generator
from ...seams import component
from ...tensor import Tensor


class Sampler:
    """Base class: an iterable over dataset indices (or over lists of indices, for batch samplers)."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """Indices 0, 1, ..., len(data_source) - 1 in order."""

    @component("SequentialSampler.__init__")
    def __init__(self, data_source):
        self.data_source = data_source

    @component("SequentialSampler.__iter__")
    def __iter__(self):
        return iter(range(len(self.data_source)))

    @component("SequentialSampler.__len__")
    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """Indices in random order (a new permutation every epoch), or drawn with replacement."""

    @component("RandomSampler.__init__")
    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        """Keep the options; `replacement` must be a bool and `num_samples` (the dataset's size unless given) a
        positive int, checked at once as PyTorch does."""
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    @component("RandomSampler.num_samples")
    def num_samples(self) -> int:
        """How many indices one pass yields (the dataset size unless given)."""
        return len(self.data_source) if self._num_samples is None else self._num_samples

    @component("RandomSampler.__iter__")
    def __iter__(self):
        n = len(self.data_source)
        if self.generator is None:  # a fresh generator seeded from the default one, so tc.manual_seed decides
            seed = int(empty((), dtype=int64).random_().item())
            generator = Generator()
            generator.manual_seed(seed)
        else:
            generator = self.generator
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from randint(high=n, size=(32,), dtype=int64, generator=generator).tolist()
            yield from randint(high=n, size=(self.num_samples % 32,), dtype=int64, generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from randperm(n, generator=generator).tolist()
            yield from randperm(n, generator=generator).tolist()[: self.num_samples % n]

    @component("RandomSampler.__len__")
    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices, in a random order each epoch."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        g = self.generator if self.generator is not None else default_generator
        for i in g.permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """`num_samples` indices drawn with probability proportional to `weights` (e.g. to balance classes)."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, numbers.Integral) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        w = weights.detach().cpu()._data if isinstance(weights, Tensor) else np.asarray(weights)
        w = np.asarray(w, dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}")
        self.weights = tensor(w)
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        return iter(multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator).tolist())

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of another sampler into lists of `batch_size` (the last one shorter unless `drop_last`)."""

    @component("BatchSampler.__init__")
    def __init__(self, sampler, batch_size, drop_last):
        """Keep the sampler and the options; `batch_size` must be a positive int (not a bool) and `drop_last` a
        bool, as PyTorch checks them."""
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    @component("BatchSampler.__iter__")
    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    @component("BatchSampler.__len__")
    def __len__(self):
        """How many batches one pass makes (the optimizer steps of an epoch): ceil(n / batch_size), or floor
        with `drop_last`."""
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
