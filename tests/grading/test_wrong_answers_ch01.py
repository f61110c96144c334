"""Catalogue of wrong answers, chapter 01 (tensors): each realistic mistake fails with a message that names
it and shows the input, the hint waits for a second failure, and the unsolved stub fails."""
import numpy as np
import pytest

import tinygrad_course as tc

from tinygrad_course import seams
from tinygrad_course.grading import check, reset_attempts

from .wrong_answers import assert_names_mistake, catalogue_tests, solution


FACTORY_NAMES = ("tensor", "zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like", "arange")
nested_shape, infer_dtype, new_tensor = solution("01", "nested_shape", "infer_dtype", "new_tensor")


def factories(**replaced):
    """The solution's nine factory functions, with the ones named replaced by wrong answers."""
    return tuple(replaced.get(name) or solution("01", name)[0] for name in FACTORY_NAMES)


def tensor_in_float64(data, *, dtype=None, device=None, requires_grad=False):
    """NumPy's inference: Python floats stay float64."""
    array = np.array(data) if not isinstance(data, np.ndarray) else data.copy()
    return new_tensor(array.astype(dtype.np_dtype) if dtype is not None else array, requires_grad)


def infer_int_before_bool(data):
    kinds = {type(x) for x in np.array(data, dtype=object).reshape(-1)} if data != [] else set()
    if float in kinds or not kinds:
        return tc.get_default_dtype()
    return tc.int64 if any(isinstance(x, int) for x in np.array(data, dtype=object).reshape(-1)) else tc.bool


def tensor_bools_as_ints(data, *, dtype=None, device=None, requires_grad=False):
    if isinstance(data, np.ndarray):
        return new_tensor(data.astype(dtype.np_dtype) if dtype is not None else data.copy(), requires_grad)
    kind = dtype or infer_int_before_bool(data)
    return new_tensor(np.array(data, dtype=np.float64).reshape(nested_shape(data)).astype(kind.np_dtype), requires_grad)


def tensor_sharing_arrays(data, *, dtype=None, device=None, requires_grad=False):
    if isinstance(data, np.ndarray) and dtype is None:
        return new_tensor(data, requires_grad)  # tc.from_numpy's sharing, not a copy
    if isinstance(data, np.ndarray):
        return new_tensor(data.astype(dtype.np_dtype), requires_grad)
    kind = infer_dtype(data)
    array = np.array(data, dtype=np.float64 if kind.is_floating_point else kind.np_dtype).reshape(nested_shape(data))
    return new_tensor(array.astype((dtype or kind).np_dtype), requires_grad)


def tensor_without_ragged_check(data, *, dtype=None, device=None, requires_grad=False):
    """np.array finds the shape, and its own error for ragged lists."""
    if isinstance(data, np.ndarray):
        return new_tensor(data.astype(dtype.np_dtype) if dtype is not None else data.copy(), requires_grad)
    kind = infer_dtype(data)
    array = np.array(data, dtype=np.float64 if kind.is_floating_point else kind.np_dtype)
    return new_tensor(array.astype((dtype or kind).np_dtype), requires_grad)


def tensor_calling_tc_tensor(data, *, dtype=None, device=None, requires_grad=False):
    return tc.tensor(data, dtype=dtype, requires_grad=requires_grad)


def full_in_default_float(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    dtype = dtype or tc.get_default_dtype()
    return new_tensor(np.full(tuple(size), fill_value, dtype=dtype.np_dtype), requires_grad)


def zeros_like_in_default_float(input, *, dtype=None, device=None, requires_grad=False):
    return new_tensor(np.zeros(tuple(input.shape), dtype=(dtype or tc.get_default_dtype()).np_dtype), requires_grad)


def zeros_of_a_tuple_only(*size, dtype=None, device=None, requires_grad=False):
    """zeros(2, 3) works, zeros((2, 3)) does not."""
    if any(n < 0 for n in size if isinstance(n, int)):
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    return new_tensor(np.zeros(size, dtype=(dtype or tc.get_default_dtype()).np_dtype).reshape(
        tuple(n for n in size if isinstance(n, int))), requires_grad)


def features_as_integers(rows):
    x = tc.tensor(rows)
    low, high = x.min(dim=0).values, x.max(dim=0).values
    return (x - low) // (high - low)


def features_written_into_integers(rows):
    x = tc.tensor(rows)
    out = tc.zeros_like(x)
    out[:] = (x - x.min(dim=0).values) / (x.max(dim=0).values - x.min(dim=0).values)
    return out


def features_from_numpy_as_float64(rows):
    x = tc.from_numpy(np.asarray(rows)).double() if isinstance(rows, np.ndarray) else tc.tensor(rows, dtype=tc.float32)
    return (x - x.min(dim=0).values) / (x.max(dim=0).values - x.min(dim=0).values)


def features_by_true_division_of_integers(rows):
    """Correct: `/` on int64 tensors is true division and gives float32 (PyTorch's rule)."""
    x = tc.tensor(rows)
    return (x - x.min(dim=0).values) / (x.max(dim=0).values - x.min(dim=0).values)


def features_in_float64(rows):
    x = tc.tensor(np.array(rows, dtype=np.float64))
    low, high = x.min(dim=0).values, x.max(dim=0).values
    return (x - low) / (high - low)


def features_without_range(rows):
    x = tc.tensor(rows, dtype=tc.float32)
    return (x - x.min(dim=0).values) / x.max(dim=0).values


def strides_reversed(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(strides)


def strides_including_own_size(shape):
    return tuple(int(np.prod(shape[i:])) for i in range(len(shape)))


def storage_index_without_offset(index, strides, offset):
    return sum(i * s for i, s in zip(index, strides))


def storage_index_with_swapped_strides(index, strides, offset):
    return offset + sum(i * s for i, s in zip(index, reversed(strides)))


def broadcast_left_aligned(a, b):
    n = max(len(a), len(b))
    a, b = tuple(a) + (1,) * (n - len(a)), tuple(b) + (1,) * (n - len(b))
    return tuple(max(x, y) for x, y in zip(a, b))


def broadcast_left_aligned_checked(a, b):
    n = max(len(a), len(b))
    a, b = tuple(a) + (1,) * (n - len(a)), tuple(b) + (1,) * (n - len(b))
    if any(x != y and 1 not in (x, y) for x, y in zip(a, b)):
        raise ValueError("cannot broadcast")
    return tuple(max(x, y) for x, y in zip(a, b))


def broadcast_never_raises(a, b):
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    return tuple(max(x, y) for x, y in zip(a, b))


def broadcast_forgets_size_one(a, b):
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    for x, y in zip(a, b):
        if x != y:
            raise ValueError("bad")
    return a


def normalize_without_keepdim(x):
    return x / x.sum(dim=1)


def normalize_columns(x):
    return x / x.sum(dim=0, keepdim=True)


def pick_without_squeeze(scores, labels):
    return scores.gather(1, labels.unsqueeze(1))


def pick_whole_rows(scores, labels):
    return scores[labels]


def select_by_label_index(features, labels, k):
    return features[labels]


def select_by_multiplying(features, labels, k):
    return features * (labels == k).float().unsqueeze(1)


def zero_positive_outliers(x, limit):
    result = x.clone()
    result[x > limit] = 0.0
    return result


def zero_outliers_in_place(x, limit):
    x[x.abs() > limit] = 0.0
    return x


def zero_at_the_limit(x, limit):
    return tc.where(x.abs() >= limit, 0.0, x)


def view_as_if_contiguous(shape, strides, new_shape):
    return tuple(int(np.prod(new_shape[i + 1:])) for i in range(len(new_shape)))


def view_never_refuses(shape, strides, new_shape):
    """Splits the chunks right but forgets that new dims may straddle two of them: never returns None."""
    return reference_view_strides(shape, strides, new_shape) or view_as_if_contiguous(shape, strides, new_shape)


def permute_inverse(shape, strides, dims):
    out_shape, out_strides = [0] * len(dims), [0] * len(dims)
    for i, d in enumerate(dims):
        out_shape[d], out_strides[d] = shape[i], strides[i]
    return tuple(out_shape), tuple(out_strides)


def permute_sizes_only(shape, strides, dims):
    return tuple(shape[d] for d in dims), tuple(strides)


def expand_keeping_strides(shape, strides, new_shape):
    return (0,) * (len(new_shape) - len(shape)) + tuple(strides)


def expand_new_dims_on_the_right(shape, strides, new_shape):
    kept = tuple(s if n == m else 0 for n, s, m in zip(shape, strides, new_shape))
    return kept + (0,) * (len(new_shape) - len(shape))


def index_without_step(shape, strides, offset, index):
    new_shape, new_strides = [], []
    for d, (size, stride) in enumerate(zip(shape, strides)):
        i = index[d] if d < len(index) else slice(None)
        if isinstance(i, slice):
            start, stop, step = i.indices(size)
            new_shape.append(len(range(start, stop, step)))
            new_strides.append(stride)
            offset += start * stride
        else:
            offset += (i % size) * stride
    return tuple(new_shape), tuple(new_strides), offset


def index_int_without_offset(shape, strides, offset, index):
    new_shape, new_strides = [], []
    for d, (size, stride) in enumerate(zip(shape, strides)):
        i = index[d] if d < len(index) else slice(None)
        if isinstance(i, slice):
            start, stop, step = i.indices(size)
            new_shape.append(len(range(start, stop, step)))
            new_strides.append(stride * step)
            offset += start * stride
    return tuple(new_shape), tuple(new_strides), offset


def index_size_without_step(shape, strides, offset, index):
    new_shape, new_strides = [], []
    for d, (size, stride) in enumerate(zip(shape, strides)):
        i = index[d] if d < len(index) else slice(None)
        if isinstance(i, slice):
            start, stop, step = i.indices(size)
            new_shape.append(max(stop - start, 0))
            new_strides.append(stride * step)
            offset += start * stride
        else:
            offset += (i % size) * stride
    return tuple(new_shape), tuple(new_strides), offset


def positions_without_offset(shape, strides, offset):
    positions = tc.tensor(0)
    for size, stride in zip(shape, strides):
        positions = positions.unsqueeze(-1) + tc.arange(size) * stride
    return positions


def positions_dims_reversed(shape, strides, offset):
    positions = tc.tensor(offset)
    for size, stride in zip(shape, strides):
        positions = positions.unsqueeze(0) + (tc.arange(size) * stride).view(size, *([1] * positions.ndim))
    return positions


def _arange(including_end=False, numpy_dtype=False, sign_checked=True):
    def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
        if end is None:
            start, end = 0, start
        if step == 0:
            raise RuntimeError("step must be nonzero")
        if sign_checked and (end - start) * step < 0:
            raise RuntimeError("upper bound and larger bound inconsistent with step sign")
        values = np.arange(start, end + step if including_end else end, step)  # NumPy's dtype: float64 for floats
        if not numpy_dtype:
            values = values.astype((dtype or (tc.int64 if values.dtype.kind == "i" else tc.get_default_dtype())).np_dtype)
        elif dtype is not None:
            values = values.astype(dtype.np_dtype)
        return new_tensor(values, requires_grad)
    return arange


arange_including_end, arange_in_float64, arange_without_sign_check = (
    _arange(including_end=True), _arange(numpy_dtype=True), _arange(sign_checked=False))
reference_view_strides = seams.reference("view_strides")
select_class, zero_outliers = solution("01", "select_class", "zero_outliers")
permute_strides, expand_strides = solution("01", "permute_strides", "expand_strides")

CATALOGUE = [
    ("01.1", factories(tensor=tensor_in_float64), ["dtype of tensor([1, 2.5]): expected tc.float32, got tc.float64",
                                                   "float64 is NumPy's default float"]),
    ("01.1", factories(tensor=tensor_bools_as_ints), ["dtype of tensor([True, False, True])", "got tc.int64",
                                                      "test for bool before int"]),
    ("01.1", factories(tensor=tensor_sharing_arrays), ["the tensor holds 100 too: it shares the array's memory"]),
    ("01.1", factories(tensor=tensor_without_ragged_check), ["tensor([[1, 2, 3], [4, 5]]) to raise ValueError: expected "
                                                             "sequence of length 3 at dim 1 (got 2)", "its message is"]),
    ("01.1", factories(tensor=tensor_calling_tc_tensor), ["your code uses tinygrad_course.tensor"]),
    ("01.1", factories(full=full_in_default_float), ["dtype of full((2, 2), 7): expected tc.int64, got tc.float32",
                                                     "full takes its dtype from fill_value"]),
    ("01.1", factories(zeros_like=zeros_like_in_default_float), ["dtype of zeros_like(tc.tensor([3, 0, 2])): expected tc.int64",
                                                                 "zeros_like keeps input's dtype (tc.int64)"]),
    ("01.1", factories(zeros=zeros_of_a_tuple_only), ["zeros((2, 3))", "one tuple (or list) is the shape"]),
    ("01.1", factories(arange=arange_including_end), ["shape of arange(5)", "n itself is left out"]),
    ("01.1", factories(arange=arange_in_float64), ["dtype of arange(0, 1, 0.25): expected tc.float32, got tc.float64",
                                                   "the default float dtype (float32) as soon as one is a Python float"]),
    ("01.1", factories(arange=arange_without_sign_check), ["arange(0, 5, -1)", "upper bound and larger bound "
                                                           "inconsistent with step sign"]),
    ("01.2", features_as_integers, ["the integer rows became an integer tensor"]),
    ("01.2", features_in_float64, ["tc.float64"]),
    ("01.2", features_written_into_integers, ["the integer rows became an integer tensor", "written into an integer"]),
    ("01.2", features_from_numpy_as_float64, ["an int64 NumPy array", "dtype mismatch"]),
    ("01.2", features_without_range, ["the minimum of each column is 0 but the maximum is not 1",
                                      "input: rows = [[23, 48000, 1]"]),
    ("01.3", strides_reversed, ["contiguous_strides((2, 3, 4)): expected (12, 4, 1), got (1, 4, 12)",
                                "the strides are in reverse order"]),
    ("01.3", strides_including_own_size, ["got (24, 12, 4)", "each stride includes its own dimension's size"]),
    ("01.4", storage_index_without_offset, ["offset=5): expected 11, got 6", "the storage offset was not added"]),
    ("01.4", storage_index_with_swapped_strides, ["expected 6, got 9", "multiplied by the other dimension's stride"]),
    ("01.5", broadcast_left_aligned, ["broadcast_shape((4,), (2, 3, 4)): expected (2, 3, 4), got (4, 3, 4)",
                                      "the shorter shape was aligned from the left"]),
    ("01.5", broadcast_left_aligned_checked, ["your code raised ValueError: cannot broadcast",
                                              "input: broadcast_left_aligned_checked((5, 3), (3,))"]),
    ("01.5", broadcast_never_raises, ["broadcast_shape((2, 3), (4,)): expected ValueError to be raised, but it "
                                      "returned tuple"]),
    ("01.5", broadcast_forgets_size_one, ["your code raised ValueError: bad",
                                          "input: broadcast_forgets_size_one((3, 1), (1, 4))"]),
    ("01.6", normalize_without_keepdim, ["column j was divided by the sum of ROW j", "input: x = [[1.  , 2.  , 1.  ]"]),
    ("01.6", normalize_columns, ["each COLUMN of your result sums to 1"]),
    ("01.7", pick_without_squeeze, ["shape (4, 1) instead of (4,)", "input: scores = "]),
    ("01.7", pick_whole_rows, ["shape (4, 3) instead of (4,): whole rows were picked"]),
    ("01.8", (select_by_label_index, zero_outliers), ["expected (2, 3), got (4, 3)", "the labels were used as row "
                                                      "numbers", "input: features = "]),
    ("01.8", (select_by_multiplying, zero_outliers), ["every row is still there", "k = 2"]),
    ("01.8", (select_class, zero_positive_outliers), ["only the large positive values were zeroed", "limit = 2.0"]),
    ("01.8", (select_class, zero_outliers_in_place), ["zero_outliers changed its input x in place"]),
    ("01.8", (select_class, zero_at_the_limit), ["2.0 itself was zeroed"]),
    ("01.9", view_as_if_contiguous, ["view_strides((6,), (2,), (2, 3))", "expected (6, 2), got (3, 1)",
                                     "the strides of a fresh contiguous tensor of the new shape"]),
    ("01.9", view_never_refuses, ["view_strides((4, 3), (1, 4), (12,)) to return None", "you returned (1,)",
                                  "this is a transposed tensor"]),
    ("01.10", (permute_inverse, expand_strides), ["expected ((4, 2, 3), (1, 12, 4)), got ((3, 4, 2), (4, 1, 12))",
                                                  "that is the inverse permutation"]),
    ("01.10", (permute_sizes_only, expand_strides), ["the strides stayed in the input's order"]),
    ("01.10", (permute_strides, expand_keeping_strides), ["expand_strides((3, 1), (1, 1), (3, 4)): expected (1, 0), "
                                                          "got (1, 1)", "the stretched dim kept its stride"]),
    ("01.10", (permute_strides, expand_new_dims_on_the_right), ["expected (0, 1), got (0, 0)",
                                                                "only the new dim, on the LEFT, gets 0"]),
    ("01.11", index_without_step, ["x[:, 1::2]", "the step was not multiplied into the stride"]),
    ("01.11", index_int_without_offset, ["expected ((4,), (1,), 4), got ((4,), (1,), 0)",
                                         "the int index did not move the offset"]),
    ("01.11", index_size_without_step, ["got ((3, 3), (4, 2), 1)", "not stop - start"]),
    ("01.12", positions_without_offset, ["storage_positions((2, 2), (4, 2), 5)", "the view's storage offset was not "
                                                                                 "added"]),
    ("01.12", positions_dims_reversed, ["storage_positions((2, 3), (3, 1), 0) to have the view's shape (2, 3) (got "
                                        "(3, 2))", "the dims came out in reverse order"]),
]


def test_true_division_of_integer_tensors_is_a_correct_01_2():
    reset_attempts()
    assert check("01.2", features_by_true_division_of_integers) is None


def _case_id(exercise, wrong):
    return f"{exercise}-{'-'.join(f.__name__ for f in (wrong if isinstance(wrong, tuple) else (wrong,)))}"


@pytest.mark.parametrize("exercise, wrong, phrases", CATALOGUE, ids=[_case_id(e, w) for e, w, _ in CATALOGUE])
def test_a_wrong_answer_fails_naming_its_mistake(exercise, wrong, phrases):
    assert_names_mistake(exercise, wrong if isinstance(wrong, tuple) else (wrong,), *phrases)


NAMES = {"01.1": FACTORY_NAMES, "01.2": "features_to_tensor", "01.3": "contiguous_strides", "01.4": "storage_index",
         "01.5": "broadcast_shape", "01.6": "normalize_rows", "01.7": "pick", "01.8": ("select_class", "zero_outliers"),
         "01.9": "view_strides", "01.10": ("permute_strides", "expand_strides"), "01.11": "index_view",
         "01.12": "storage_positions"}


test_the_stub_fails, test_every_exercise_has_two_wrong_answers = catalogue_tests(NAMES, CATALOGUE, "01")
