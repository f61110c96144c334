"""Looking up integer indices in `tc.nn.functional`: embedding (rows of a weight matrix) and one_hot."""
from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ...dtypes import int64
from ...ops.embedding import Embedding as _Embedding
from ...tensor_base import _wrap


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    """Rows of `weight` picked by the integer tensor `input` (output shape input.shape + (dim,))."""
    if input.dtype.is_floating_point:
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; "
            f"but got {input.type()} instead (while checking arguments for embedding)"
        )
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    if max_norm is not None:
        with no_grad():
            rows = weight._data[input._data.reshape(-1)]
            norms = (abs(rows) ** norm_type).sum(-1) ** (1.0 / norm_type)
            scale = weight._xp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
            weight._data[input._data.reshape(-1)] = rows * scale[:, None]
    return _Embedding.apply(weight, input, padding_idx)


def one_hot(tensor, num_classes=-1):
    """Int64 tensor with a 1 at each index along a new last dim of size num_classes."""
    if tensor.dtype is not int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    xp, idx = tensor._xp, tensor._data
    if num_classes == -1:
        if idx.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(idx.max()) + 1
    if idx.size and idx.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if idx.size and idx.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = (idx[..., None] == xp.arange(num_classes)).astype(xp.int64)
    return _wrap(out)
