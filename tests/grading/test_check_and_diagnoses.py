"""check() and the diagnosis helpers, on NumPy arrays and on tensor-like objects."""
from pathlib import Path

import numpy as np
import pytest

from tinygrad_course.grading import CheckFailed, check, compare, hint, mistakes, reset_attempts, to_numpy

ROOT = Path(__file__).resolve().parents[2]


class FakeTensor:
    """Duck-typed framework tensor: .detach() then .numpy()."""

    def __init__(self, data):
        self.data = np.asarray(data, dtype=np.float32)

    def detach(self):
        return self

    def numpy(self):
        return self.data


def test_to_numpy_accepts_tensor_like_objects():
    assert to_numpy(FakeTensor([1, 2])).dtype == np.float32
    assert compare(FakeTensor([1, 2]), np.array([1.0, 2.0])) is None


def test_compare_reports_shape_dtype_and_max_abs_difference():
    assert "shape mismatch: expected (3,), got (2,)" in compare(np.zeros(2), np.zeros(3))
    assert "dtype mismatch: expected float32, got float64" in compare(np.zeros(2), np.zeros(2, np.float32), check_dtype=True)
    message = compare(np.array([1.0, 2.5]), np.array([1.0, 2.0]))
    assert "max abs difference 0.5 at index (1,)" in message
    assert "return" in compare(None, np.zeros(2))


@pytest.mark.parametrize("got, expected, detector, phrase", [
    (np.ones((4, 3)), np.full(3, 4.0), mistakes.missing_broadcast_sum(), "broadcast dimension 0"),
    (np.arange(6.0).reshape(2, 3).T, np.arange(6.0).reshape(2, 3), mistakes.transposed(), "transpose"),
    (np.array([0.5, 0.5]), np.array([1.0, 1.0]), mistakes.constant_factor(), "0.5 times"),
    (np.array([1, 2, 3]), np.array([0, 1, 2]), mistakes.off_by_one(), "off by +1"),
    (-np.arange(1.0, 4.0), np.arange(1.0, 4.0), mistakes.sign_flipped(), "opposite sign"),
    (np.exp([1.0, 2.0]) / np.exp([1.0, 2.0]).sum(), np.array([1.0, 2.0]), mistakes.probabilities_instead_of_logits(), "probabilities"),
    (np.array([2.0, 3.0]), np.array([3.0, 5.0]), mistakes.overwrote_instead_of_accumulating(previous=np.array([1.0, 2.0])), "overwritten"),
    (np.array([1, 2]), np.array([1.5, 2.5]), mistakes.integer_arithmetic(), "integer dtype"),
])
def test_mistake_detectors_recognise_their_mistake(got, expected, detector, phrase):
    assert phrase in detector(got, expected)
    assert phrase in compare(got, expected, detectors=[detector])


def test_detectors_stay_silent_on_unrelated_errors():
    got, expected = np.array([[1.0, 7.0], [2.0, 0.0]]), np.array([[1.0, 2.0], [3.0, 4.0]])
    assert all(d(got, expected) is None for d in mistakes.DEFAULT)


def _solution_broadcast_shape(a, b):
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x, y = (a[-i] if i <= len(a) else 1), (b[-i] if i <= len(b) else 1)
        if x != y and 1 not in (x, y):
            raise ValueError("cannot broadcast")
        out.append(max(x, y))
    return tuple(reversed(out))


def test_check_prints_its_verdict_and_leaves_no_value(capsys):
    assert check("99.1", _solution_broadcast_shape) is None  # a graded cell shows no value (nbgrader)
    assert "2/2 points" in capsys.readouterr().out


def test_a_learners_warning_goes_to_stdout_not_stderr(capsys):
    import warnings

    def broadcast_shape(a, b):
        warnings.warn("a learner's own warning")
        return _solution_broadcast_shape(a, b)
    check("99.1", broadcast_shape)
    captured = capsys.readouterr()
    assert "a learner's own warning" in captured.out and "2/2 points" in captured.out
    assert captured.err == ""  # nbgrader scores a graded cell 0 when anything reaches stderr


def test_check_explains_not_implemented():
    def broadcast_shape(a, b):
        raise NotImplementedError("Exercise 99.1 (broadcast_shape): write your solution here")
    with pytest.raises(CheckFailed, match="0/2 points\nnot implemented yet"):
        check("99.1", broadcast_shape)


def test_check_gives_the_targeted_hint_for_a_missing_broadcast_sum():
    with pytest.raises(CheckFailed, match="not summed over the broadcast dimension 0"):
        check("99.2", lambda g, sa, sb: (g, g))


def test_check_gives_the_targeted_hint_for_overwriting_gradients():
    def accumulate(param, grad):
        param.grad = grad
    with pytest.raises(CheckFailed, match="overwritten instead of accumulated"):
        check("99.3", accumulate)


def test_check_names_the_learners_exception_and_line():
    def broadcast_shape(a, b):
        return a[5]
    with pytest.raises(CheckFailed, match=r"IndexError.*in broadcast_shape, line"):
        check("99.1", broadcast_shape)


def test_check_refuses_the_reference_implementation_by_name():
    def broadcast_shape(a, b):
        return np.broadcast_shapes(a, b)
    with pytest.raises(CheckFailed, match="numpy.broadcast_shapes"):
        check("99.1", broadcast_shape)


def test_check_refuses_the_reference_implementation_reached_indirectly():
    name = "broadcast_" + "shapes"

    def broadcast_shape(a, b):
        return getattr(np, name)(a, b)
    with pytest.raises(CheckFailed, match="called numpy.broadcast_shapes"):
        check("99.1", broadcast_shape)
    assert np.broadcast_shapes((1,), (2,)) == (2,)  # the tripwire is removed afterwards


def test_check_renders_without_traceback_in_ipython():
    try:
        check("99.2", lambda g, sa, sb: (g, g))
    except CheckFailed as exc:
        lines = exc._render_traceback_()
    assert "Exercise 99.2" in lines[0] and not any("Traceback" in line for line in lines)


def test_compare_lists_other_wrong_elements_with_their_values():
    message = compare(np.array([1.0, 5.0, 3.0, 9.0]), np.array([1.0, 2.0, 3.0, 4.0]))
    assert "2 of 4 values wrong" in message and "also (1,): expected 2, got 5" in message


def test_a_detector_names_the_mistake_and_keeps_the_fix_apart():
    detector = mistakes.custom(lambda g, e: True, "the sign is flipped", "subtract the update")
    message = compare(np.array([-1.0]), np.array([1.0]), detectors=[detector])
    assert "what went wrong: the sign is flipped" in message and "subtract" not in message
    assert message.hint == "subtract the update"


def test_hints_come_in_stages_the_idea_first_the_fix_when_asked_twice_after_two_failures():
    reset_attempts()
    before = str(hint("99.2"))
    assert "gradient collects a contribution from every use" in before and "sum it back" not in before
    for attempt in (1, 2):
        with pytest.raises(CheckFailed) as failure:
            check("99.2", lambda g, sa, sb: (g, g))
        message = str(failure.value)
        assert "not summed over the broadcast dimension 0" in message
        assert "sum it back" not in message and 'hint("99.2")' in message, message
        if attempt == 1:
            assert "sum it back" not in str(hint("99.2"))
    asked_once = str(hint("99.2"))
    assert "sum it back" not in asked_once and "once more" in asked_once
    assert "sum it back to the input's shape" in str(hint("99.2"))
    reset_attempts()


def test_every_course_exercise_has_a_conceptual_nudge():
    from tinygrad_course.grading.nudges import NUDGES
    from tinygrad_course.grading.registry import registered

    chapters = sorted({p.name[:3].rstrip("_") for p in (ROOT / "solutions").glob("[0-9][0-9]*_*.ipynb")})
    ids = [e for chapter in chapters for e in registered(chapter)]
    assert len(ids) > 60 and not [e for e in ids if e not in NUDGES]


def test_an_exception_is_reported_with_the_input_that_raised_it():
    def broadcast_shape(a, b):
        raise ValueError("bad")
    with pytest.raises(CheckFailed, match=r"ValueError: bad \(in broadcast_shape, line \d+\)\n  input: "
                                          r"broadcast_shape\(\(3, 1\), \(1, 4\)\)"):
        check("99.1", broadcast_shape)
