"""Shape rules shared by every layer: dim normalisation and broadcasting, with PyTorch's errors."""
from __future__ import annotations


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
