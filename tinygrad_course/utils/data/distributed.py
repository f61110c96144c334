"""`DistributedSampler`: each of `num_replicas` processes gets its own shard of the dataset."""
from __future__ import annotations

import math

from ...distributed.process_group import get_rank, get_world_size, is_available, is_initialized
from ...generator import Generator
from ...seams import component
from .sampler import Sampler


def _world():
    """(world_size, rank) from `tc.distributed` when a process group is initialised."""
    if not is_available() or not is_initialized():
        raise RuntimeError(
            "Requires distributed package to be available. Hint: pass num_replicas= and rank= explicitly, or "
            "initialise a process group first."
        )
    return get_world_size(), get_rank()


@component("shard")
def shard_indices(indices, rank, num_replicas):
    """Rank `rank`'s part of `indices`: the list padded by repeating it from the start up to a multiple of
    `num_replicas`, then every `num_replicas`-th entry from position `rank` (a build-mode component)."""
    indices = list(indices)
    total = math.ceil(len(indices) / num_replicas) * num_replicas
    padding = total - len(indices)
    if padding <= len(indices):
        indices += indices[:padding]
    else:
        indices += (indices * math.ceil(padding / len(indices)))[:padding]
    return indices[rank:total:num_replicas]


class DistributedSampler(Sampler):
    """Indices for process `rank` out of `num_replicas`: the (optionally shuffled) index list, padded to a
    multiple of `num_replicas` (or truncated with `drop_last`), then every `num_replicas`-th entry.

    Call `set_epoch(epoch)` at the start of each epoch so the shuffle changes (all ranks use seed + epoch).
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None or rank is None:
            world, my_rank = _world()
            num_replicas = world if num_replicas is None else num_replicas
            rank = my_rank if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(self.dataset) % self.num_replicas != 0:
            self.num_samples = math.ceil((len(self.dataset) - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(len(self.dataset) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        if self.shuffle:
            indices = Generator().manual_seed(self.seed + self.epoch).permutation(len(self.dataset)).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if not self.drop_last:
            indices = list(shard_indices(indices, self.rank, self.num_replicas))
        else:
            indices = indices[: self.total_size][self.rank: self.total_size: self.num_replicas]
        if len(indices) != self.num_samples:
            raise RuntimeError(f"DistributedSampler: rank {self.rank} got {len(indices)} indices, expected "
                               f"{self.num_samples}")
        return iter(indices)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch: int):
        """Set the epoch used to seed the shuffle (call before each epoch's iteration)."""
        self.epoch = epoch
