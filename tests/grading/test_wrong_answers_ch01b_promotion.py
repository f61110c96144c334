"""Catalogue of wrong answers, exercise 01b.6 (type promotion): each realistic mistake in `promote_types` or
`result_type` fails with a message that names the operands whose dtype is wrong, and the unsolved stub fails."""
import pytest

import tinygrad_course as tc

from .wrong_answers import assert_names_mistake, catalogue_tests, solution

promote_types, result_type, category, number_dtype = solution(
    "01b", "promote_types", "result_type", "category", "number_dtype")


def promote_by_size(type1, type2):
    """Wrong: the wider type wins, whatever the categories (int32 with float16 gives int32)."""
    if type1 is type2:
        return type1
    return type1 if type1.itemsize >= type2.itemsize else type2


def promote_without_sign_room(type1, type2):
    """Wrong: uint8 with int8 gives the (equally wide) signed one, which cannot hold 255."""
    if {type1, type2} == {tc.uint8, tc.int8}:
        return tc.int8
    return promote_types(type1, type2)


def result_type_without_ranks(*operands):
    """Wrong: promote_types over every operand's dtype, as if numbers and 0-d tensors ranked like tensors."""
    result = None
    for op in operands:
        d = op.dtype if isinstance(op, tc.Tensor) else number_dtype(op)
        result = d if result is None else promote_types(result, d)
    return result


def _int_first(value):
    if isinstance(value, int):  # True is an int too: bool never reached
        return tc.int64
    return number_dtype(value)


def result_type_bool_as_int(*operands):
    """Wrong: a Python bool taken for an int (isinstance(True, int) is True)."""
    ranks = [None, None, None]
    for op in operands:
        rank, d = ((0 if op.ndim > 0 else 1), op.dtype) if isinstance(op, tc.Tensor) else (2, _int_first(op))
        ranks[rank] = d if ranks[rank] is None else promote_types(ranks[rank], d)
    result = None
    for d in ranks:
        if d is not None and (result is None or category(d) > category(result)):
            result = d if result is None else promote_types(result, d)
    return result


def result_type_zero_dim_as_number(*operands):
    """Wrong: a 0-d tensor of a higher category counts as a Python number of its category (the default float),
    not with its own dtype."""
    dims = [op for op in operands if isinstance(op, tc.Tensor) and op.ndim > 0]
    rest = [op.item() if isinstance(op, tc.Tensor) else op for op in operands
            if not (isinstance(op, tc.Tensor) and op.ndim > 0)]
    return result_type(*dims, *rest)


def result_type_same_category_widens(*operands):
    """Wrong: a lower rank changes the dtype when its category is higher OR THE SAME (>= for >), so a Python int
    widens an int32 tensor to int64 and a float widens float16 to float32."""
    ranks = [None, None, None]
    for op in operands:
        rank, d = ((0 if op.ndim > 0 else 1), op.dtype) if isinstance(op, tc.Tensor) else (2, number_dtype(op))
        ranks[rank] = d if ranks[rank] is None else promote_types(ranks[rank], d)
    result = None
    for d in ranks:
        if d is not None and (result is None or category(d) >= category(result)):
            result = d if result is None else promote_types(result, d)
    return result


CATALOGUE = [
    ("01b.6", (promote_by_size, result_type), ("promote_types(tc.int32, tc.float16)",)),
    ("01b.6", (promote_without_sign_room, result_type), ("promote_types(tc.uint8, tc.int8)",)),
    ("01b.6", (promote_types, result_type_without_ranks), ("result_type(a tc.int32 tensor, 5)",)),
    ("01b.6", (promote_types, result_type_bool_as_int), ("result_type(a tc.bool tensor, True)",)),
    ("01b.6", (promote_types, result_type_zero_dim_as_number), ("0-d tc.float64 tensor",)),
    ("01b.6", (promote_types, result_type_same_category_widens), ("result_type(a tc.int32 tensor, 5)",)),
]


@pytest.mark.parametrize("exercise, wrong, phrases", CATALOGUE,
                         ids=[f"{e}-{'-'.join(w.__name__ for w in ws)}" for e, ws, _ in CATALOGUE])
def test_a_wrong_answer_fails_naming_its_mistake(exercise, wrong, phrases):
    assert_names_mistake(exercise, wrong, *phrases)


def test_the_solution_passes():
    from tinygrad_course.grading import check
    check("01b.6", promote_types, result_type)


def test_a_complex_number_is_refused():
    with pytest.raises(TypeError, match="complex"):
        result_type(tc.tensor([1.0]), 1j)


NAMES = {"01b.6": ("promote_types", "result_type")}
test_the_stub_fails, test_every_exercise_has_two_wrong_answers = catalogue_tests(NAMES, CATALOGUE, "01b")
