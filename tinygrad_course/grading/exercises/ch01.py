"""Chapter 01 (tensors): checks for dtypes, strides, broadcasting, keepdim and gather.

Each check compares against a reference computed here, names the usual mistake when it sees one, and
where the exercise mirrors a framework piece (strides, broadcasting) runs the learner's version against
real tensors.
"""
import itertools

import numpy as np

import tinygrad_course as tc

from .. import mistakes
from ..registry import exercise
from . import ch01_factories  # noqa: F401  (registers 01.1: tensor and the factory functions)
from . import ch01_views  # noqa: F401  (registers 01.9-01.11: view, permute/expand and indexing as strides)


def _is_tensor(value) -> bool:
    return isinstance(value, tc.Tensor)


def _expect_tensor(t, value, what):
    t.true(_is_tensor(value), f"{what} to be a tc.Tensor (got {type(value).__name__})",
           hint="build the result with tc.tensor / tc.from_numpy or tensor operations")


# ---- 01.2 -------------------------------------------------------------------------------------------------
def _minmax_reference(rows):
    x = np.asarray(rows, dtype=np.float64)
    lo, hi = x.min(axis=0), x.max(axis=0)
    return ((x - lo) / (hi - lo)).astype(np.float32)


def _truncated(got, expected):
    return np.allclose(got, np.trunc(expected)) and not np.allclose(expected, np.trunc(expected))


@exercise("01.2", title="integer features", points=2)
def features_check(t, features_to_tensor):
    rows = [[23, 48000, 1], [41, 72000, 3], [35, 61000, 2], [58, 39000, 4]]
    result = features_to_tensor(rows)
    _expect_tensor(t, result, "features_to_tensor(rows)")
    if result.dtype in (tc.int64, tc.int32):
        t.fail("features_to_tensor(rows)",
               f"the result has dtype {result.dtype}: the integer rows became an integer tensor and the "
               "arithmetic kept whole numbers (floor division //, or values written into an integer tensor)\n"
               "  hint: ask for floats when you create it: tc.tensor(rows, dtype=tc.float32)")
    if result.dtype == tc.float64:
        t.fail("features_to_tensor(rows)",
               "the result has dtype tc.float64 (NumPy's default float), but models work in float32\n"
               "  hint: pass dtype=tc.float32 when creating the tensor")
    t.close(result, _minmax_reference(rows), "features_to_tensor(rows)", check_dtype=True, given={"rows": rows},
            mistakes=[
                mistakes.custom(_truncated, "values were truncated to whole numbers: some arithmetic ran on integers",
                                "convert to float32 before any arithmetic (assigning floats into an integer tensor "
                                "truncates them)"),
                mistakes.custom(lambda g, e: np.allclose(g.min(axis=0), 0) and not np.allclose(g.max(axis=0), 1),
                                "the minimum of each column is 0 but the maximum is not 1",
                                "after subtracting the minimum, divide by the column's range (max - min)"),
                mistakes.custom(lambda g, e: np.allclose(g.max(axis=0), 1) and not np.allclose(g.min(axis=0), 0),
                                "the maximum of each column is 1 but the minimum is not 0",
                                "subtract each column's minimum before dividing by its range"),
            ])
    # the features go straight into a float32 layer: this only works with a float32 tensor
    weight = tc.ones(3, 2)
    t.close(result @ weight, _minmax_reference(rows) @ np.ones((3, 2), np.float32), "your features @ a float32 weight")
    # the same rows as an int64 NumPy array (what a data frame's .to_numpy() gives) must give float32 too
    array = np.array(rows, dtype=np.int64)
    from_array = features_to_tensor(array)
    if getattr(from_array, "dtype", None) in (tc.float64, tc.int64):
        t.fail("features_to_tensor(an int64 NumPy array)",
               f"dtype mismatch: expected float32, got {str(from_array.dtype).replace('tc.', '')}: the dtype came "
               "from the NumPy array (or NumPy's float64 arithmetic), not from your choice\n"
               "  hint: ask for float32 whatever the input: tc.tensor(rows, dtype=tc.float32) accepts arrays too")
    t.close(from_array, _minmax_reference(rows), "features_to_tensor(an int64 NumPy array)",
            check_dtype=True, given={"rows": "np.array(rows, dtype=np.int64)"},
            mistakes=[mistakes.custom(_truncated, "values were truncated to whole numbers: some arithmetic ran on integers",
                                      "convert to float32 before any arithmetic")])


# ---- 01.3 -------------------------------------------------------------------------------------------------
@exercise("01.3", title="strides of a contiguous tensor", points=1)
def strides_check(t, contiguous_strides):
    for shape in [(2, 3, 4), (5,), (3, 1, 2), (2, 2, 2, 3), ()]:
        got = contiguous_strides(shape)
        expected = tc.zeros(shape).stride()
        why, hint = None, "the last dimension moves by 1 element; each dimension before it moves by the sizes after it"
        if got is not None and len(got) == len(shape) and tuple(got) == tuple(reversed(expected)):
            why = "the strides are in reverse order"
            hint = "the LAST dimension moves by 1 element; work from the right"
        elif got is not None and len(got) == len(shape) and tuple(got) == tuple(
                int(np.prod(shape[i:])) for i in range(len(shape))):
            why = "each stride includes its own dimension's size (every stride is one dimension too large)"
            hint = "a dimension's stride is the product of the sizes AFTER it, not including its own size"
        t.equal(tuple(got) if isinstance(got, list) else got, tuple(expected),
                f"contiguous_strides({shape})", why=why, hint=hint)


# ---- 01.4 -------------------------------------------------------------------------------------------------
@exercise("01.4", title="index to storage offset", points=2)
def storage_index_check(t, storage_index):
    got = storage_index((1, 2), (4, 1), 0)
    t.equal(got, 6, "storage_index((1, 2), strides=(4, 1), offset=0)",
            why={9: "each index was multiplied by the other dimension's stride", 3: "the strides were ignored "
                 "(the indices were just added)", 8: "the indices were multiplied together with the strides"}.get(got)
            if isinstance(got, int) else None, hint="multiply each index by its stride and add them up")
    got = storage_index((1, 2), (4, 1), 5)
    t.equal(got, 11, "storage_index((1, 2), strides=(4, 1), offset=5)",
            why="the storage offset was not added" if got == 6 else None,
            hint="a view may start in the middle of the storage: the offset is where its element (0, ..., 0) is")
    t.equal(storage_index((), (), 3), 3, "storage_index((), (), offset=3) (a 0-d view)",
            hint="with no dimensions the element sits at the offset itself")
    # the learner's formula, run against real views of one storage
    base = tc.arange(24.0).view(2, 3, 4)
    storage = base.numpy().reshape(-1)
    views = {"x.transpose(0, 2)": base.transpose(0, 2), "x[1, :, ::2]": base[1, :, ::2],
             "x.permute(2, 0, 1)": base.permute(2, 0, 1), "x[:, 1:, 1:3]": base[:, 1:, 1:3]}
    for name, view in views.items():
        for index in itertools.product(*(range(n) for n in view.shape)):
            position = storage_index(index, view.stride(), view.storage_offset())
            if not isinstance(position, (int, np.integer)) or not 0 <= position < storage.size \
                    or storage[position] != view[index].item():
                t.fail(f"{name} at index {index}",
                       f"your storage_index gave {position!r}, which holds "
                       f"{storage[position] if isinstance(position, (int, np.integer)) and 0 <= position < storage.size else 'nothing'}"
                       f", but the view's element is {view[index].item():g} "
                       f"(strides {view.stride()}, offset {view.storage_offset()})")
    t.count += 1


# ---- 01.5 -------------------------------------------------------------------------------------------------
def _left_aligned(a, b):
    n = max(len(a), len(b))
    a, b = tuple(a) + (1,) * (n - len(a)), tuple(b) + (1,) * (n - len(b))
    return tuple(max(x, y) for x, y in zip(a, b))


@exercise("01.5", title="the broadcast shape rule", points=2,
          forbidden=["tinygrad_course.broadcast_shapes", "tinygrad_course.broadcast_tensors",
                     "numpy.broadcast_shapes", "numpy.broadcast", "numpy.broadcast_to"])
def broadcast_shape_check(t, broadcast_shape):
    t.equal(broadcast_shape((3, 1), (1, 4)), (3, 4), "broadcast_shape((3, 1), (1, 4))",
            hint="a size-1 dimension stretches to the other size, on both sides")
    got = broadcast_shape((5, 3), (3,))
    left = got is not None and _left_aligned((5, 3), (3,)) == tuple(got)
    t.equal(got, (5, 3), "broadcast_shape((5, 3), (3,))",
            why="the shapes were aligned from the left (their first dimensions met)" if left else None,
            hint="align the shapes from the right (the last dimensions meet); a missing leading dimension counts "
                 "as size 1")
    got = broadcast_shape((4,), (2, 3, 4))
    t.equal(got, (2, 3, 4), "broadcast_shape((4,), (2, 3, 4))",
            why="the shorter shape was aligned from the left" if got is not None and
            _left_aligned((4,), (2, 3, 4)) == tuple(got) else None,
            hint="the shorter shape may be either argument: pad it with 1s on the left")
    t.raises(ValueError, broadcast_shape, (2, 3), (4,), what="broadcast_shape((2, 3), (4,))",
             hint="sizes 3 and 4 differ and neither is 1: raise ValueError")
    # the learner's rule against what real tensor arithmetic does
    for a, b in [((2, 1, 3), (4, 1)), ((1,), (3, 2)), ((6, 1, 1), (1, 5, 1))]:
        actual = tuple((tc.zeros(a) + tc.zeros(b)).shape)
        t.equal(broadcast_shape(a, b), actual, f"broadcast_shape({a}, {b}) vs the shape of tc.zeros{a} + tc.zeros{b}")


# ---- 01.6 -------------------------------------------------------------------------------------------------
@exercise("01.6", title="normalize rows with keepdim", points=1)
def normalize_rows_check(t, normalize_rows):
    x = tc.tensor([[1.0, 2.0, 1.0], [3.0, 3.0, 4.0], [0.5, 0.25, 0.25]])
    xs = x.numpy()
    row_sums = xs.sum(axis=1)
    got = normalize_rows(x)
    _expect_tensor(t, got, "normalize_rows(x)")
    t.close(got, xs / row_sums[:, None], "normalize_rows(x) for a 3x3 x", given={"x": x}, mistakes=[
        mistakes.custom(lambda g, e: np.allclose(g, xs / row_sums[None, :]),
                        "column j was divided by the sum of ROW j: the row sums of shape (3,) broadcast as a row",
                        "keep the summed dimension (keepdim=True) so the sums have shape (3, 1) and broadcast "
                        "down the columns"),
        mistakes.custom(lambda g, e: np.allclose(g, xs / xs.sum(axis=0, keepdims=True)),
                        "each COLUMN of your result sums to 1: the sums were taken down the columns (dim=0)",
                        "rows are dim=1: sum over dim=1"),
    ])
    wide = tc.arange(1.0, 9.0).view(2, 4)
    t.close(normalize_rows(wide), wide.numpy() / wide.numpy().sum(axis=1, keepdims=True), "normalize_rows of a 2x4 x",
            given={"x": wide})
    t.close(normalize_rows(x).sum(dim=1), np.ones(3), "row sums of your result", given={"x": x})
    # used for real: normalizing exponentials is a softmax
    logits = tc.tensor([[2.0, 1.0, 0.1]])
    e = np.exp(logits.numpy())
    t.close(normalize_rows(logits.exp()), e / e.sum(), "normalize_rows(logits.exp()) (a softmax)",
            given={"logits": logits})


# ---- 01.7 -------------------------------------------------------------------------------------------------
@exercise("01.7", title="pick the label scores (gather)", points=1)
def pick_check(t, pick):
    scores = tc.tensor([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2], [0.25, 0.25, 0.5], [0.6, 0.1, 0.3]])
    labels = tc.tensor([1, 0, 2, 0])
    expected = scores.numpy()[np.arange(4), labels.numpy()]
    got = pick(scores, labels)
    _expect_tensor(t, got, "pick(scores, labels)")
    given = {"scores": scores, "labels": labels}
    if tuple(got.shape) == (4, 1):
        t.fail("pick(scores, labels)", "shape (4, 1) instead of (4,): the picked dimension is still there\n  hint: "
                                       "gather keeps the dimension it picked along: .squeeze(1) it away", given=given)
    if tuple(got.shape) == (4, 3):
        t.fail("pick(scores, labels)", "shape (4, 3) instead of (4,): whole rows were picked (scores[labels])\n  "
                                       "hint: you need one element per row: row i, column labels[i]", given=given)
    t.close(got, expected, "pick(scores, labels)", given=given, mistakes=[
        mistakes.custom(lambda g, e: np.allclose(g, scores.numpy()[labels.numpy(), np.arange(4)]),
                        "you picked scores[labels[i], i]: the labels indexed the rows",
                        "gather along dim=1 (the columns), not dim=0"),
    ])
    # used for real: the negative log-likelihood of the labels
    log_probs = (scores / scores.sum(dim=1, keepdim=True)).log()
    t.close(-pick(log_probs, labels).mean(), -np.log(expected).mean(), "-pick(log_probs, labels).mean() (the NLL loss)")


# ---- 01.8 -------------------------------------------------------------------------------------------------
@exercise("01.8", title="boolean masks", points=2)
def boolean_masks_check(t, select_class, zero_outliers):
    features = tc.arange(12.0).view(4, 3)
    labels = tc.tensor([2, 0, 2, 1])
    f, lab = features.numpy(), labels.numpy()
    given = {"features": features, "labels": labels, "k": 2}
    got = select_class(features, labels, 2)
    _expect_tensor(t, got, "select_class(features, labels, 2)")
    shape = tuple(got.shape)
    values = got.detach().numpy()
    why = None
    if shape == (4, 3) and np.allclose(values, f[lab]):
        why = "the labels were used as row numbers (features[labels] picks rows by position, not by class)"
    elif shape == (4, 3):
        why = "every row is still there: the rows of other classes were changed, not removed"
    elif len(shape) == 1:
        why = "the result is flat: the mask selected single elements, not whole rows"
    t.equal(shape, (2, 3), "select_class(features, labels, 2).shape", why=why, given=given,
            hint="compare the labels with k (one bool per row) and index the rows with that bool tensor")
    t.close(got, f[lab == 2], "select_class(features, labels, 2)", given=given)
    t.equal(tuple(select_class(features, labels, 3).shape), (0, 3),
            "select_class(features, labels, 3).shape (no row has label 3)", given={"labels": labels, "k": 3})
    # used for real: the mean feature vector of each class
    centroids = [select_class(features, labels, k).mean(dim=0) for k in range(3)]
    t.close(tc.stack(centroids), np.stack([f[lab == k].mean(axis=0) for k in range(3)]),
            "the class means computed with your select_class", given=given)

    x = tc.tensor([[0.5, -3.0, 2.0], [4.0, -0.5, -2.5]])
    before = x.numpy().copy()
    given = {"x": x, "limit": 2.0}
    got = zero_outliers(x, 2.0)
    _expect_tensor(t, got, "zero_outliers(x, 2.0)")
    t.close(got, np.where(np.abs(before) > 2.0, 0.0, before), "zero_outliers(x, limit=2.0)", given=given, mistakes=[
        mistakes.custom(lambda g, e: np.allclose(g, np.where(before > 2.0, 0.0, before)),
                        "only the large positive values were zeroed: -3.0 and -2.5 lie beyond the limit too",
                        "build the mask from the absolute value: x.abs() > limit"),
        mistakes.custom(lambda g, e: np.allclose(g, np.where(np.abs(before) >= 2.0, 0.0, before)),
                        "2.0 itself was zeroed, but it is not beyond the limit",
                        "an outlier is strictly beyond the limit: use >, not >="),
        mistakes.custom(lambda g, e: np.allclose(g, np.where(np.abs(before) > 2.0, before, 0.0)),
                        "the mask is inverted: the outliers were kept and every other value became 0",
                        "x[mask] = 0 sets the elements where the mask is True"),
    ])
    t.close(x, before, "x after zero_outliers(x, 2.0)", atol=0, given={"limit": 2.0}, mistakes=[
        mistakes.custom(lambda g, e: True, "zero_outliers changed its input x in place",
                        "work on a copy (x.clone()) or build a new tensor with tc.where(mask, 0.0, x)")])
    t.equal(got.dtype, x.dtype, "zero_outliers(x, 2.0).dtype", hint="keep x's dtype")
