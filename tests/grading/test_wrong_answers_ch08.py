"""A catalogue of wrong answers for exercises 08.4-08.7 (a scalar log, measuring what checkpointing saves, naming the
cause of an error, naming the operation that made a NaN with anomaly detection): each realistic mistake fails its check
with a message that names it, the stub fails as not implemented, and the reference solution passes."""
import tracemalloc

import pytest

from tinygrad_course.grading import check

import tinygrad_course as tc

from .wrong_answers import assert_names_mistake, assert_stub_fails, first_failure, solution, stub, unwritten_stub

_fails = first_failure  # (a wrong answer here may leave tracemalloc running: one attempt per case)
_stub = unwritten_stub


# ---------------------------------------------------------------- 08.4 a scalar log with smoothing

class ScalarLogRight:
    debias, swap, keep_tensor, one_list = True, False, False, False

    def __init__(self):
        self.records = {}

    def add_scalar(self, tag, value, global_step):
        key = "all" if self.one_list else tag
        self.records.setdefault(key, []).append((global_step, value if self.keep_tensor else float(value)))

    def curve(self, tag):
        records = self.records.get("all" if self.one_list else tag, [])
        return [s for s, _ in records], [v for _, v in records]

    def smoothed(self, tag, weight=0.9):
        w = 1 - weight if self.swap else weight
        out, m = [], 0.0
        for t, v in enumerate(self.curve(tag)[1], start=1):
            m = w * m + (1 - w) * v
            out.append(m / (1 - w ** t) if self.debias else m)
        return out


def _variant(**flags):
    return type("ScalarLog", (ScalarLogRight,), flags)


def test_08_4_reference_passes():
    check("08.4", ScalarLogRight)


@pytest.mark.parametrize("wrong, phrase", [
    (_variant(debias=False), "the average started at 0 and is biased towards it"),
    (_variant(swap=True), "you swapped them"),
    (_variant(keep_tensor=True), "got ['Tensor']"),
    (_variant(one_list=True), "interleaved with 'loss/train'"),
    (_stub, "not implemented yet"),
])
def test_08_4_wrong_answers_are_named(wrong, phrase):
    message = _fails("08.4", wrong)
    assert phrase in message, message


# ---------------------------------------------------------------- 08.5 measure the memory checkpointing saves

def held_right(fn):
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    result = fn()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return result, held


def held_peak(fn):
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    result = fn()
    held = tracemalloc.get_traced_memory()[1] - before
    tracemalloc.stop()
    return result, held


def held_after_freeing(fn):
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    fn()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return fn(), held


def held_never_stopped(fn):
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    result = fn()
    return result, tracemalloc.get_traced_memory()[0] - before


def test_08_5_reference_passes():
    check("08.5", held_right)


@pytest.mark.parametrize("wrong, phrase", [
    (held_peak, "that is the peak"),
    (held_after_freeing, "the result was freed before you measured"),
    (held_never_stopped, "tracemalloc still running"),
    (_stub, "not implemented yet"),
])
def test_08_5_wrong_answers_are_named(wrong, phrase):
    try:
        message = _fails("08.5", wrong)
    finally:
        tracemalloc.stop()
    assert phrase in message, message


# ---------------------------------------------------------------- 08.6 name the cause of a common error

_CAUSES = {"shapes cannot be multiplied": "shape", "expected target dtype": "dtype", "only for scalar outputs": "non-scalar",
           "backward through the graph a second time": "backward-twice", "modified by an inplace operation": "in-place",
           "does not require grad": "no-grad"}


def diagnose_right(fn):
    try:
        fn()
    except Exception as exc:
        return next((c for p, c in _CAUSES.items() if p in str(exc)), "unknown")
    return None


def diagnose_by_type(fn):
    try:
        fn()
    except RuntimeError:
        return "shape"
    except Exception:
        return "unknown"
    return None


def diagnose_grad_first(fn):
    try:
        fn()
    except Exception as exc:
        if "grad" in str(exc):
            return "no-grad"
        return next((c for p, c in _CAUSES.items() if p in str(exc)), "unknown")
    return None


def diagnose_does_not_catch(fn):
    fn()


def test_08_6_reference_passes():
    check("08.6", diagnose_right)


@pytest.mark.parametrize("wrong, phrase", [
    (diagnose_by_type, "is a RuntimeError, and this one was taken for another"),
    (diagnose_grad_first, "expected 'non-scalar', got 'no-grad'"),
    (diagnose_does_not_catch, "the exception fn raises escaped"),
    (_stub, "not implemented yet"),
])
def test_08_6_wrong_answers_are_named(wrong, phrase):
    message = _fails("08.6", wrong)
    assert phrase in message, message
    assert "fn = " in message or "not implemented" in message, message


# ---------------------------------------------------------------- 08.7 which operation made the NaN? (anomaly mode)

def nan_backward_outside(loss_fn):
    with tc.autograd.detect_anomaly():
        loss = loss_fn()
    try:  # the with block has ended: backward runs without anomaly detection
        loss.backward()
    except RuntimeError as err:
        return str(err).split("'")[1]
    return None


def nan_whole_message(loss_fn):
    with tc.autograd.detect_anomaly():
        try:
            loss_fn().backward()
        except RuntimeError as err:
            return str(err)
    return None


def nan_quoted_name(loss_fn):
    with tc.autograd.detect_anomaly():
        try:
            loss_fn().backward()
        except RuntimeError as err:
            return str(err).split()[1]
    return None


def nan_forward_outside(loss_fn):
    loss = loss_fn()
    with tc.autograd.detect_anomaly():
        try:
            loss.backward()
        except RuntimeError as err:
            return str(err).split("'")[1]
    return None


def nan_left_on(loss_fn):
    tc.autograd.set_detect_anomaly(True)
    try:
        loss_fn().backward()
    except RuntimeError as err:
        return str(err).split("'")[1]
    return None


def nan_not_caught(loss_fn):
    with tc.autograd.detect_anomaly():
        loss_fn().backward()
    return None


def nan_in_the_loss(loss_fn):
    loss = loss_fn()  # looks for NaN in the forward result only (what 08.2 does)
    return "loss" if bool(tc.isnan(loss).any()) else None


def test_08_7_reference_passes():
    check("08.7", *solution("08", "nan_source"))
    assert not tc.autograd.is_anomaly_enabled()


@pytest.mark.parametrize("wrong, phrases", [
    (nan_backward_outside, ["anomaly detection to be on while backward ran", "backward ran with anomaly detection off",
                            "input: x = "]),
    (nan_whole_message, ["expected 'SqrtBackward0'", "that is the whole error message"]),
    (nan_quoted_name, ["got \"'SqrtBackward0'\"", "the name still has its quotes"]),
    (nan_forward_outside, ["loss_fn() to run with anomaly detection on", "the loss was built before anomaly detection"]),
    (nan_left_on, ["anomaly detection still on after nan_source(loss_fn)"]),
    (nan_not_caught, ["the anomaly error escaped from nan_source", "SqrtBackward0"]),
    (nan_in_the_loss, ["to call .backward() on the loss that loss_fn() returns"]),
])
def test_08_7_wrong_answers_are_named(wrong, phrases):
    try:
        assert_names_mistake("08.7", (wrong,), *phrases)
    finally:
        tc.autograd.set_detect_anomaly(False)
    assert not tc.autograd.is_anomaly_enabled()


def test_08_7_stub_fails():
    assert_stub_fails("08.7", *stub("08", "nan_source"))
