"""Shapes and the rules every layer shares: `Size`, dim normalisation and broadcasting, with PyTorch's errors."""
from __future__ import annotations

from ._namespace import namespace
from .seams import component


class Size(tuple):
    """The shape of a tensor: a tuple that prints like PyTorch's `torch.Size` (`tc.Size([2, 3])`)."""

    def __repr__(self):
        return f"{namespace()}.Size([{', '.join(map(str, self))}])"

    __str__ = __repr__

    def numel(self) -> int:
        """Number of elements a tensor of this shape holds."""
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        r = tuple.__getitem__(self, item)
        return Size(r) if isinstance(item, slice) else r

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))


def normalize_dim(dim, ndim, wrap_scalar=True):
    """A non-negative dim index; raises PyTorch's IndexError when out of range."""
    n = max(ndim, 1) if wrap_scalar else ndim
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n if n else 0


def normalize_dims(dim, ndim):
    """A sorted tuple of non-negative dims from None (all), an int or a sequence."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        return (normalize_dim(dim, ndim),) if ndim else ()
    dims = tuple(sorted(normalize_dim(d, ndim) for d in dim)) if ndim else ()
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
    return dims


BROADCAST_HINT = "Hint: shapes are compared from the right; each pair of sizes must be equal or one of them 1."


def broadcast_shapes_checked(*shapes, hint=True):
    """The shape `shapes` broadcast to, or PyTorch's RuntimeError naming the right-most mismatch between the
    shapes broadcast so far ("tensor a") and the next one ("tensor b")."""
    acc = ()
    for shape in shapes:
        n = max(len(acc), len(shape))
        a, b = (1,) * (n - len(acc)) + tuple(acc), (1,) * (n - len(shape)) + tuple(shape)
        for i in reversed(range(n)):
            if a[i] != b[i] and a[i] != 1 and b[i] != 1:
                raise RuntimeError(f"The size of tensor a ({a[i]}) must match the size of tensor b ({b[i]}) at "
                                   f"non-singleton dimension {i}" + (f". {BROADCAST_HINT}" if hint else ""))
        acc = tuple(y if x == 1 else x for x, y in zip(a, b))
    return acc


@component("broadcast_shapes")
def broadcast_shapes(*shapes):
    """The shape that broadcasting `shapes` together gives (PyTorch's error if incompatible)."""
    acc = []
    for index, shape in enumerate(shapes):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        acc = [1] * (len(shape) - len(acc)) + acc
        for i in range(-1, -len(shape) - 1, -1):
            if shape[i] != acc[i] and shape[i] != 1 and acc[i] != 1:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {shape[i]} at {i}! Mismatching argument at index "
                    f"{index} had {shape}; but expected shape should be broadcastable to [{', '.join(map(str, acc))}]")
            if acc[i] == 1:
                acc[i] = shape[i]
    return Size(acc)


@component("contiguous_strides")
def contiguous_strides(shape):
    """Row-major strides, in elements, of a contiguous tensor of `shape` (PyTorch's `stride()` of a fresh
    tensor): the last dim has stride 1, each earlier one the product of the sizes after it."""
    strides, step = [], 1
    for size in reversed(tuple(shape)):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


@component("storage_index")
def storage_index(index, strides, offset):
    """Position in the flat storage of element `index` of a view with `strides` (in elements) and storage
    `offset`: offset + sum(index[d] * strides[d]). `as_strided` checks a view's last element with it."""
    return offset + sum(i * s for i, s in zip(index, strides))


def shape_from_args(args):
    """A shape given as varargs (`2, 3`), as one sequence (`(2, 3)`) or as a 1-D tensor of sizes, as a tuple
    (how `view`, `expand`, `new_zeros`, ... read their size arguments, as in PyTorch)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    if len(args) == 1 and hasattr(args[0], "_data") and args[0].ndim == 1:
        return tuple(args[0].tolist())
    return tuple(args)


def broadcast_error(shapes, error):
    """PyTorch's RuntimeError for operand shapes that do not broadcast, in place of NumPy's ValueError `error`
    (other errors are returned unchanged)."""
    if "broadcast" not in str(error):
        return error
    try:
        broadcast_shapes_checked(*shapes)
    except RuntimeError as mismatch:
        return mismatch
    return error
