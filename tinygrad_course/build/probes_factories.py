"""Probe of chapter 01's tensor creation (exercise 01.1): tensors the framework makes through `tensor`, `zeros`,
`ones`, `full`, `empty`, the `*_like` factories and `arange` -- made directly, by a layer (`nn.Linear` allocates its weight
with `empty`), by `default_collate` (a batch of labels) -- their dtypes, shapes, values and `requires_grad`, a
gradient through a leaf made by `tensor`, and PyTorch's errors, as plain numbers."""
from __future__ import annotations

import zlib

import numpy as np

from .. import factories as F
from .. import nn
from ..dtypes import bool_, float32, float64, int32, int64
from ..generator import manual_seed
from ..utils.data.collate import default_collate

_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64")


def _numbers(t) -> list:
    """dtype, shape, requires_grad and values of tensor `t` as floats."""
    return [float(_DTYPES.index(t.dtype.name)), float(t.ndim), *map(float, t.shape), float(t.requires_grad),
            *t.detach().numpy().astype(np.float64).reshape(-1).tolist()]


def _error(make) -> float:
    """A number for the error `make()` raises (its type and message), -1 when it raises none."""
    try:
        make()
    except Exception as error:  # compared with the reference's error
        return float(zlib.crc32(f"{type(error).__name__}: {str(error).split('. Hint')[0]}".encode()))
    return -1.0


def factories_probe():
    """tensors from data, sizes and other tensors, as the framework makes them (see the module docstring)."""
    array = np.arange(6, dtype=np.int32).reshape(2, 3)
    made = [F.tensor([[1, 2], [3, 4]]), F.tensor([1, 2.5]), F.tensor([True, False]), F.tensor([True, 2]),
            F.tensor(3.5), F.tensor([]), F.tensor([[], []]), F.tensor([1.7, -1.7], dtype=int64),
            F.tensor([[1, 2, 3]], dtype=float64), F.tensor(array), F.tensor(np.linspace(0, 1, 5), dtype=float32),
            F.zeros(2, 3), F.zeros((2, 3)), F.zeros([4], dtype=int64), F.zeros(()), F.ones(3, dtype=bool_),
            F.ones((2, 1)), F.full((2, 2), 7), F.full((3,), 2.5), F.full([2], True), F.full((2,), 1, dtype=float64),
            F.empty(2, 3), F.empty((4,), dtype=int32), F.zeros(2, requires_grad=True)]
    labels, weights = F.tensor([3, 0, 2]), F.tensor([[0.5, -1.0], [2.0, 0.0]], dtype=float64)
    made += [F.zeros_like(labels), F.zeros_like(weights), F.ones_like(weights), F.ones_like(labels, dtype=float32),
             F.full_like(labels, 2.7), F.full_like(weights, 3), F.zeros_like(weights, requires_grad=True)]
    made += [F.arange(5), F.arange(2, 6), F.arange(10, 0, -3), F.arange(0, 1, 0.1), F.arange(0.5, 3),
             F.arange(4, dtype=float64), F.arange(3, dtype=float32, requires_grad=True), F.arange(3, 3)]
    array[0, 0] = 100  # the tensor made from it is a copy
    made.append(F.tensor(array[:1]))
    manual_seed(0)
    layer = nn.Linear(3, 2)
    made += [layer.weight, layer.bias, default_collate([1, 0, 2]), default_collate([0.5, 1.5])]
    leaf = F.tensor([1.0, 2.0, -3.0], requires_grad=True)
    (leaf * leaf).sum().backward()
    errors = [_error(lambda: F.tensor([[1, 2, 3], [4, 5]])), _error(lambda: F.tensor([[1, 2], 3])),
              _error(lambda: F.tensor([1, 2], requires_grad=True)), _error(lambda: F.zeros(2, -3)),
              _error(lambda: F.ones(2, -3)), _error(lambda: F.full((2, -1), 1.0)), _error(lambda: F.empty(-1, -5)),
              _error(lambda: F.arange(0, 5, 0)), _error(lambda: F.arange(0, 5, -1))]
    exact = [float(F.tensor([0.1], dtype=float64).item() == 0.1), float(made[9][0, 0].item())]
    return {"made": np.array([x for t in made for x in _numbers(t)]), "grad": leaf.grad.numpy().astype(np.float64),
            "errors": np.array(errors), "exact": np.array(exact)}


PROBES = {name: factories_probe for name in ("tensor", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
                                             "full_like", "arange")}
