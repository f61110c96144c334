"""A catalogue of wrong answers for exercises 08.4-08.6 (a scalar log, measuring what checkpointing saves, naming the cause of an error): each realistic mistake fails its check with a
message that names it, the stub fails as not implemented, and the reference solution passes."""
import tracemalloc

import pytest

from tinygrad_course.grading import check

from .wrong_answers import first_failure, unwritten_stub

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

_CAUSES = {"shapes cannot be multiplied": "shape", "expected scalar type": "dtype", "only for scalar outputs": "non-scalar",
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
