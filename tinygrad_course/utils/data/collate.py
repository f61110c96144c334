"""`default_collate` (a list of samples -> one batch) and `default_convert`, as in PyTorch.

Tensors are stacked along a new first dimension, NumPy arrays become tensors and are stacked, Python
floats become a float64 tensor and ints an int64 tensor, strings stay a list, and tuples, lists,
named tuples and dicts are collated field by field (a batch of `(x, y)` tuples becomes `[xs, ys]`).
"""
from __future__ import annotations

import collections.abc
import re

import numpy as np

from ...dtypes import float64
from ...factories import as_tensor, tensor
from ...ops.concat import stack
from ...seams import component
from ...tensor import Tensor

_ERR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
_NP_STR = re.compile(r"[SaUO]")


@component("default_collate")
def default_collate(batch):
    """Merge a list of samples into a batch (see the module docstring for the rules)."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    if type(elem).__module__ == "numpy" and not isinstance(elem, (np.str_, np.bytes_)):
        if isinstance(elem, np.ndarray) or isinstance(elem, np.memmap):
            if _NP_STR.search(elem.dtype.str) is not None:
                raise TypeError(_ERR.format(elem.dtype))
            return stack([as_tensor(b) for b in batch], 0)
        if elem.shape == ():
            return as_tensor(np.asarray(batch))
    if isinstance(elem, bool):
        return tensor(batch)
    if isinstance(elem, float):
        return tensor(batch, dtype=float64)
    if isinstance(elem, int):
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(collated)
        except TypeError:
            return collated
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(samples)) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(list(samples)) for samples in transposed]
        try:
            return type(elem)([default_collate(list(samples)) for samples in transposed])
        except TypeError:
            return [default_collate(list(samples)) for samples in transposed]
    raise TypeError(_ERR.format(type(elem)))


def default_convert(data):
    """Turn NumPy arrays (also inside dicts, tuples, lists) into tensors; used when batching is off."""
    if isinstance(data, Tensor):
        return data
    if type(data).__module__ == "numpy" and not isinstance(data, (np.str_, np.bytes_)):
        if isinstance(data, np.ndarray) and _NP_STR.search(data.dtype.str) is not None:
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            return type(data)({k: default_convert(v) for k, v in data.items()})
        except TypeError:
            return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data
