"""Datasets, samplers and the DataLoader, mirroring `torch.utils.data`."""
from ._worker import WorkerInfo, get_worker_info
from .collate import default_collate, default_convert
from .dataloader import DataLoader
from .dataset import ChainDataset, ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split
from .distributed import DistributedSampler
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)

__all__ = [
    "Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset", "ChainDataset", "random_split",
    "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler",
    "DistributedSampler", "DataLoader", "default_collate", "default_convert", "get_worker_info", "WorkerInfo",
]
