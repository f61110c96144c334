"""Chapter 01, a strided view over one storage: checks for the learner's view geometry -- `view_strides`
(01.9), `permute_strides` and `expand_strides` (01.10), `index_view` (01.11), `storage_positions` (01.12,
what `contiguous()` reads) -- each first on small exact
inputs that name the usual mistake, then on seeded random cases against the framework's own rule.
"""
import random

import numpy as np

from ... import seams
from ...shapes import contiguous_strides
from ..registry import exercise


def _ref(name):
    """The framework's own rule, never the learner's (which may be installed in the seam)."""
    return seams.reference(name)


def _moving(shape, strides):
    """The strides of the dims with more than one element (a size-1 dim's stride is never used)."""
    return tuple(s for n, s in zip(shape, strides) if n != 1) if strides is not None else None


def _as_tuple(value):
    return tuple(value) if isinstance(value, list) else value


_contiguous = contiguous_strides.__wrapped__  # the framework's rule itself, never a learner's installed one


# ---- 01.9 -------------------------------------------------------------------------------------------------
def _random_view_case(rng):
    """A non-contiguous (or contiguous) view of a small storage and a new shape with as many elements."""
    shape = [rng.choice([1, 2, 3, 4]) for _ in range(rng.randint(1, 4))]
    strides = list(_contiguous(shape))
    if len(shape) > 1 and rng.random() < 0.6:
        order = rng.sample(range(len(shape)), len(shape))
        shape, strides = [shape[d] for d in order], [strides[d] for d in order]
    if rng.random() < 0.3:
        strides = [s * 2 for s in strides]  # every other element: x[..., ::2] of a wider storage
    n = 1
    for size in shape:
        n *= size
    new, rest = [], n
    for _ in range(rng.randint(0, 3)):
        d = rng.choice([d for d in (1, 2, 3, 4, 6) if rest % d == 0])
        new.append(d)
        rest //= d
    new.append(rest)
    rng.shuffle(new)
    return tuple(shape), tuple(strides), tuple(new)


@exercise("01.9", title="view: a new shape over the same strides", points=3)
def view_strides_check(t, view_strides):
    cases = [
        ((2, 3, 4), (12, 4, 1), (6, 4), None),
        ((2, 3, 4), (12, 4, 1), (4, 3, 2), None),
        ((6,), (2,), (2, 3), "the input steps 2 elements at a time (strides (2,)): splitting its dim keeps that step, "
                             "so the new last dim steps by 2 and the first by 3 * 2"),
        ((2, 2, 4), (16, 4, 1), (2, 8), "dims 1 and 2 are contiguous with each other (4 == 4 * 1) and merge into "
                                        "one dim of 8 with stride 1, but dim 0 steps 16 elements, not 8: it keeps "
                                        "its stride"),
        ((4, 3), (1, 4), (12,), "this is a transposed tensor (strides (1, 4)): its elements are not in row-major order "
                                "in the storage, so no single stride walks them; return None"),
        ((3, 2, 4), (4, 12, 1), (3, 8), "dims 1 and 2 are not contiguous with each other (stride 12 is not 4 * 1), so "
                                        "they cannot merge into one dim of 8; return None"),
        ((3, 2, 4), (4, 12, 1), (3, 2, 2, 2), "splitting dim 2 (stride 1) into 2 x 2 gives strides 2 and 1; the other "
                                              "dims keep theirs"),
        ((2, 1, 3), (3, 3, 1), (1, 6), None),
    ]
    for shape, strides, new_shape, why in cases:
        call = f"view_strides({shape}, {strides}, {new_shape})"
        expected = _ref("view_strides")(shape, strides, new_shape)
        got = _as_tuple(view_strides(shape, strides, new_shape))
        if expected is None:
            t.true(got is None, f"{call} to return None: this view is impossible",
                   why=f"you returned {got!r}. {why}" if why else f"you returned {got!r}",
                   hint="group the input's dims into chunks whose elements are contiguous with each other (stride of "
                        "dim d == size of d+1 * stride of d+1); each chunk must be made of whole new dims")
            continue
        if got is None:
            t.fail(call, f"you returned None (no view), but strides {expected} show the input as {new_shape}"
                   + (f"\n  what went wrong: {why}" if why else ""),
                   hint="return None only when a chunk of contiguous input dims cannot be split exactly by new dims")
        t.true(isinstance(got, tuple) and len(got) == len(new_shape),
               f"{call} to return a tuple with one stride per new dim (got {got!r})",
               hint="one stride for each dim of new_shape, in its order")
        wrong_why = why
        if got == _contiguous(new_shape) and expected != got:
            wrong_why = ("these are the strides of a fresh contiguous tensor of the new shape: the input's strides "
                         f"{strides} were ignored")
        t.equal(_moving(new_shape, got), _moving(new_shape, expected),
                f"{call} (the strides of the dims larger than 1)", why=wrong_why,
                hint="walk the dims from the right: inside a chunk of contiguous input dims, the new dims step by the "
                     "chunk's smallest stride times the sizes of the new dims after them")
    rng = random.Random(9)
    for _ in range(300):
        shape, strides, new_shape = _random_view_case(rng)
        expected = _ref("view_strides")(shape, strides, new_shape)
        got = _as_tuple(view_strides(shape, strides, new_shape))
        if (got is None) != (expected is None) or _moving(new_shape, got) != _moving(new_shape, expected):
            t.fail(f"view_strides({shape}, {strides}, {new_shape})",
                   f"expected {expected}, got {got}" + (" (size-1 dims' strides are not compared)" if expected else ""))
    t.count += 1


# ---- 01.10 ------------------------------------------------------------------------------------------------
@exercise("01.10", title="permute and expand move strides", points=2)
def permute_expand_check(t, permute_strides, expand_strides):
    got = permute_strides((2, 3, 4), (12, 4, 1), (2, 0, 1))
    got = tuple(_as_tuple(g) for g in got) if isinstance(got, (tuple, list)) and len(got) == 2 else got
    why = None
    if got == ((3, 4, 2), (4, 1, 12)):
        why = "input dim i went to position dims[i]: that is the inverse permutation; result dim i is input dim dims[i]"
    elif isinstance(got, tuple) and len(got) == 2 and got[1] == (12, 4, 1):
        why = "the sizes moved but the strides stayed in the input's order: each dim takes its stride along"
    t.equal(got, ((4, 2, 3), (1, 12, 4)), "permute_strides((2, 3, 4), (12, 4, 1), dims=(2, 0, 1))", why=why,
            hint="dim i of the result is dim dims[i] of the input: its size and its stride")
    t.equal(tuple(_as_tuple(g) for g in permute_strides((3, 4), (4, 1), (1, 0))), ((4, 3), (1, 4)),
            "permute_strides((3, 4), (4, 1), dims=(1, 0)) (a transpose)")
    t.equal(tuple(_as_tuple(g) for g in permute_strides((5, 2, 3), (1, 15, 5), (1, 2, 0))), ((2, 3, 5), (15, 5, 1)),
            "permute_strides((5, 2, 3), (1, 15, 5), dims=(1, 2, 0)) (back to row-major)")

    got = _as_tuple(expand_strides((3, 1), (1, 1), (3, 4)))
    t.equal(got, (1, 0), "expand_strides((3, 1), (1, 1), (3, 4))",
            why="the stretched dim kept its stride: index j along it would walk on to other elements, while every j "
                "must read the same one" if got == (1, 1) else None,
            hint="a size-1 dim stretched to a larger size gets stride 0")
    got = _as_tuple(expand_strides((3,), (1,), (2, 3)))
    t.equal(got, (0, 1), "expand_strides((3,), (1,), (2, 3)) (a new leading dim)",
            why="the new dim was added on the right: new dims are added on the LEFT (shapes align from the right)"
            if got == (1, 0) else "the input's dim (size 3) got stride 0: shapes line up from the right, so it meets "
            "the new size 3 and keeps its stride; only the new dim, on the LEFT, gets 0" if got == (0, 0) else None,
            hint="a new leading dim reads the same elements for each of its indices: stride 0")
    got = _as_tuple(expand_strides((2, 3), (3, 1), (2, 3)))
    t.equal(got, (3, 1), "expand_strides((2, 3), (3, 1), (2, 3)) (nothing stretched)",
            why="a dim whose size does not change keeps its stride" if got != (3, 1) else None)
    t.equal(_as_tuple(expand_strides((3, 1), (1, 3), (2, 3, 5))), (0, 1, 0),
            "expand_strides((3, 1), (1, 3), (2, 3, 5)) (a transposed input)")
    rng = random.Random(10)
    for _ in range(200):
        shape = tuple(rng.choice([1, 1, 2, 3]) for _ in range(rng.randint(0, 3)))
        strides = tuple(rng.randint(1, 12) for _ in shape)
        new = tuple(rng.randint(1, 4) for _ in range(rng.randint(0, 2))) + tuple(
            rng.randint(2, 4) if n == 1 and rng.random() < 0.6 else n for n in shape)
        expected = _ref("expand_strides")(shape, strides, new)
        got = _as_tuple(expand_strides(shape, strides, new))
        if got != expected:
            t.fail(f"expand_strides({shape}, {strides}, {new})", f"expected {expected}, got {got}")
        dims = tuple(rng.sample(range(len(shape)), len(shape)))
        expected = _ref("permute_strides")(shape, strides, dims)
        got = permute_strides(shape, strides, dims)
        if tuple(map(_as_tuple, got)) != expected:
            t.fail(f"permute_strides({shape}, {strides}, {dims})", f"expected {expected}, got {got}")
    t.count += 1


# ---- 01.11 ------------------------------------------------------------------------------------------------
def _random_index(rng, shape):
    index = []
    for size in shape[:rng.randint(1, len(shape))]:
        if rng.random() < 0.35:
            index.append(rng.randint(-size, size - 1))
        else:
            index.append(slice(rng.choice([None, -7, -2, 0, 1, 3, 9]), rng.choice([None, -7, -1, 0, 2, 4, 9]),
                               rng.choice([None, 1, 2, 3])))
    return tuple(index)


@exercise("01.11", title="indexing is stride arithmetic", points=3)
def index_view_check(t, index_view):
    def run(shape, strides, offset, index):
        got = index_view(shape, strides, offset, index)
        if isinstance(got, (tuple, list)) and len(got) == 3:
            return _as_tuple(got[0]), _as_tuple(got[1]), got[2]
        return got

    call = "index_view((3, 4), (4, 1), 0, (1,))"
    got = run((3, 4), (4, 1), 0, (1,))
    t.equal(got, ((4,), (1,), 4), call,
            why="the int index did not move the offset: row 1 starts 1 * 4 elements into the storage"
            if isinstance(got, tuple) and len(got) == 3 and got[2] == 0 else
            "the indexed dim is still there: an int index removes its dim" if isinstance(got, tuple) and len(got) == 3
            and got[0] == (1, 4) else None,
            hint="an int index i moves the offset by i * stride of its dim and drops the dim")
    call = "index_view((3, 4), (4, 1), 0, (slice(None), slice(1, None, 2)))  # x[:, 1::2]"
    got = run((3, 4), (4, 1), 0, (slice(None), slice(1, None, 2)))
    why = None
    if isinstance(got, tuple) and len(got) == 3:
        if got[1] == (4, 1):
            why = "the step was not multiplied into the stride: the slice skips every other element"
        elif got[0] == (3, 3):
            why = "the slice keeps every 2nd element from 1: 2 elements (1 and 3), not stop - start"
        elif got[2] == 0:
            why = "the slice's start did not move the offset: its first element is 1 element in"
    t.equal(got, ((3, 2), (4, 2), 1), call, why=why,
            hint="a slice start:stop:step moves the offset by start * stride, keeps len(range(start, stop, step)) "
                 "elements and multiplies the stride by step")
    got = run((3, 4), (4, 1), 2, (-1, 2))
    t.equal(got, ((), (), 12), "index_view((3, 4), (4, 1), 2, (-1, 2))  # x[-1, 2] of a view starting at 2",
            why="a negative index counts from the end: -1 is index 2 of a dim of size 3"
            if isinstance(got, tuple) and len(got) == 3 and got[2] in (-2, 2, 6) else
            "the view's own offset (2) was not kept as the start" if isinstance(got, tuple) and len(got) == 3
            and got[2] == 10 else None,
            hint="start from the given offset; a negative index i means i + size")
    t.equal(run((5,), (3,), 0, (slice(2, 10),)), ((3,), (3,), 6), "index_view((5,), (3,), 0, (slice(2, 10),))",
            why="a slice's stop beyond the end is cut at the size (as in Python): elements 2, 3, 4",
            hint="slice.indices(size) gives start, stop and step clamped to the dim as Python (and PyTorch) do")
    t.equal(run((4, 3), (1, 4), 0, (slice(1, 3), 2)), ((2,), (1,), 9),
            "index_view((4, 3), (1, 4), 0, (slice(1, 3), 2))  # a transposed view")
    rng = random.Random(11)
    for _ in range(300):
        shape = tuple(rng.randint(1, 5) for _ in range(rng.randint(1, 3)))
        strides = tuple(rng.randint(1, 20) for _ in shape)
        offset, index = rng.randint(0, 5), _random_index(rng, shape)
        expected = _ref("index_view")(shape, strides, offset, index)
        got = run(shape, strides, offset, index)
        ok = isinstance(got, tuple) and len(got) == 3 and got[0] == expected[0] and \
            _moving(got[0], got[1]) == _moving(expected[0], expected[1]) and (0 in expected[0] or got[2] == expected[2])
        if not ok:
            t.fail(f"index_view({shape}, {strides}, {offset}, {index})", f"expected {expected}, got {got}")
    t.count += 1



# ---- 01.12 ------------------------------------------------------------------------------------------------
def _array(value):
    """A learner's positions (a tensor, an array or nested lists) as an integer NumPy array, or None."""
    try:
        return np.asarray(value.numpy() if hasattr(value, "numpy") else value)
    except (TypeError, ValueError, RuntimeError):
        return None


@exercise("01.12", title="contiguous: every element's storage position", points=2)
def storage_positions_check(t, storage_positions):
    cases = [
        ((2, 3), (3, 1), 0, None),
        ((3, 2), (1, 3), 0, "the positions came out in the wrong order: element (i, j) must be at "
                            "positions[i, j], with dim 0 the first (outer) dim of the result"),
        ((2, 2), (4, 2), 5, None),
        ((2, 3, 2), (0, 1, 6), 1, "a stride of 0 (an expanded dim) reads the same positions for every index along it"),
    ]
    for shape, strides, offset, why in cases:
        call = f"storage_positions({shape}, {strides}, {offset})"
        expected = seams.reference("storage_positions")(shape, strides, offset)
        got = _array(storage_positions(shape, strides, offset))
        t.true(got is not None and got.shape == expected.shape,
               f"{call} to have the view's shape {shape} (got {'nothing' if got is None else got.shape})",
               why="the dims came out in reverse order: each new dim must go on the right (the first dim of the view "
                   "is the outer one)" if got is not None and got.shape == expected.shape[::-1] else None,
               hint="one position per element of the view: a tensor of the view's shape")
        t.true(got.dtype.kind in "iu", f"{call} to hold integers (got dtype {got.dtype})",
               hint="positions index the storage: build them from integer aranges")
        wrong = why
        if np.array_equal(got, expected - offset) and offset:
            wrong = "the view's storage offset was not added: its element (0, ..., 0) is at the offset"
        elif got.ndim == 2 and np.array_equal(got, expected.T.reshape(got.shape)):
            wrong = ("the dims were combined in the wrong order: the first dim of the view must be the outer one "
                     "(each new dim goes on the right)")
        t.equal(got.tolist(), expected.tolist(), call, why=wrong,
                hint="element index is at offset + sum(index[d] * strides[d]): one arange per dim, times its stride, "
                     "each broadcast along its own dim, added up")
    # contiguous() for real: the copy of a view is the storage read at its positions
    base = np.arange(24.0).reshape(2, 3, 4)
    for name, view in {"x.transpose(0, 2)": np.swapaxes(base, 0, 2), "x[1, :, ::2]": base[1, :, ::2],
                       "x.permute(1, 2, 0)[1:]": base.transpose(1, 2, 0)[1:]}.items():
        strides = tuple(s // 8 for s in view.strides)
        offset = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // 8
        got = _array(storage_positions(view.shape, strides, offset))
        if got is None or got.shape != view.shape or not np.array_equal(base.reshape(-1)[got], view):
            t.fail(f"{name}.contiguous() read at your positions",
                   f"gives {None if got is None else base.reshape(-1)[got].tolist()}, expected {view.tolist()}")
    t.count += 1
