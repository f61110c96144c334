"""Catalogue of wrong answers, chapter 01 (tensors): each realistic mistake fails with a message that names
it and shows the input, the hint waits for a second failure, and the unsolved stub fails."""
import numpy as np
import pytest

import tinygrad_course as tc

from tinygrad_course.grading import check, reset_attempts

from .wrong_answers import assert_names_mistake, catalogue_tests, solution


def wrap_always_copies(array, share):
    return tc.tensor(array)


def wrap_always_shares(array, share):
    return tc.from_numpy(array)


def wrap_copy_as_float32(array, share):
    return tc.from_numpy(array) if share else tc.tensor(array, dtype=tc.float32)


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


select_class, zero_outliers = solution("01", "select_class", "zero_outliers")

CATALOGUE = [
    ("01.1", wrap_always_copies, ["the shared tensor still holds 0: it has its own copy"]),
    ("01.1", wrap_always_shares, ["the copy holds 100: it shares the array's memory"]),
    ("01.1", wrap_copy_as_float32, ["dtype mismatch: expected float64, got float32", "converted to float32",
                                    "input: array = [[0., 1., 2.]"]),
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
]


def test_true_division_of_integer_tensors_is_a_correct_01_2():
    reset_attempts()
    assert check("01.2", features_by_true_division_of_integers) is None


def _case_id(exercise, wrong):
    return f"{exercise}-{'-'.join(f.__name__ for f in (wrong if isinstance(wrong, tuple) else (wrong,)))}"


@pytest.mark.parametrize("exercise, wrong, phrases", CATALOGUE, ids=[_case_id(e, w) for e, w, _ in CATALOGUE])
def test_a_wrong_answer_fails_naming_its_mistake(exercise, wrong, phrases):
    assert_names_mistake(exercise, wrong if isinstance(wrong, tuple) else (wrong,), *phrases)


NAMES = {"01.1": "wrap_array", "01.2": "features_to_tensor", "01.3": "contiguous_strides", "01.4": "storage_index",
         "01.5": "broadcast_shape", "01.6": "normalize_rows", "01.7": "pick", "01.8": ("select_class", "zero_outliers")}


test_the_stub_fails, test_every_exercise_has_two_wrong_answers = catalogue_tests(NAMES, CATALOGUE, "01")
