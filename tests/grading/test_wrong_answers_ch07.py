"""A catalogue of wrong answers for exercises 07.4-07.6 (a safe loader, a forward pass without the framework, the globals a pickle imports): each realistic mistake fails its check with a
message that names it, the stub fails as not implemented, and the reference solution passes."""
import io
import pickle
import pickletools

import numpy as np
import pytest

from tinygrad_course.grading import check

from .wrong_answers import both_failures, unwritten_stub

_fails = both_failures  # the mistake named first, the hint from the second failure on
_stub = unwritten_stub


# ---------------------------------------------------------------- 07.4 a safe loader with an allow-list

def _unpickler(allowed_test):
    class Restricted(pickle.Unpickler):
        def find_class(self, module, name):
            if allowed_test(module, name):
                return super().find_class(module, name)
            raise pickle.UnpicklingError(f"global '{module}.{name}' is forbidden")
    return Restricted


def safe_loads_right(data, allowed):
    return _unpickler(lambda m, n: f"{m}.{n}" in allowed)(io.BytesIO(data)).load()


def safe_loads_plain_pickle(data, allowed):
    return pickle.loads(data)


def safe_loads_module_only(data, allowed):
    modules = {a.rsplit(".", 1)[0] for a in allowed}
    return _unpickler(lambda m, n: m in modules)(io.BytesIO(data)).load()


def safe_loads_swallows(data, allowed):
    try:
        return safe_loads_right(data, allowed)
    except pickle.UnpicklingError:
        return None


def safe_loads_value_error(data, allowed):
    class Restricted(pickle.Unpickler):
        def find_class(self, module, name):
            if f"{module}.{name}" in allowed:
                return super().find_class(module, name)
            raise ValueError("not allowed")
    return Restricted(io.BytesIO(data)).load()


def test_07_4_reference_passes():
    check("07.4", safe_loads_right)


@pytest.mark.parametrize("wrong, phrase", [
    (safe_loads_plain_pickle, "the attack succeeded"),
    (safe_loads_module_only, "builtins.exec(...) (the attack succeeded)"),
    (safe_loads_swallows, "instead of raising pickle.UnpicklingError"),
    (safe_loads_value_error, "expected pickle.UnpicklingError"),
    (_stub, "not implemented yet"),
])
def test_07_4_wrong_answers_are_named(wrong, phrase):
    message = _fails("07.4", wrong)
    assert phrase in message, message
    assert "allowed=" in message or "not implemented" in message, message


# ---------------------------------------------------------------- 07.5 a forward pass without the framework

def _forward(arrays, x, relu_between=True, relu_last=False, transpose=True):
    positions = sorted({int(k.split(".")[0]) for k in arrays})
    h = x
    for n, i in enumerate(positions):
        w = arrays[f"{i}.weight"]
        h = h @ (w.T if transpose else w) + arrays[f"{i}.bias"]
        if (relu_between and n < len(positions) - 1) or relu_last and n == len(positions) - 1:
            h = np.maximum(h, 0)
    return h


def test_07_5_reference_passes():
    check("07.5", _forward)


@pytest.mark.parametrize("wrong, phrase", [
    (lambda a, x: _forward(a, x, relu_last=True), "no ReLU after the last Linear"),
    (lambda a, x: _forward(a, x, relu_between=False), "without the ReLU between the Linear layers"),
    (lambda a, x: _forward(a, x, transpose=False), "x of shape (8, 64)"),
    (_stub, "not implemented yet"),
])
def test_07_5_wrong_answers_are_named(wrong, phrase):
    message = _fails("07.5", wrong)
    assert phrase in message, message


def test_07_5_a_transposed_weight_reports_the_error_and_the_shapes():
    message = _fails("07.5", lambda a, x: _forward(a, x, transpose=False))
    assert "ValueError" in message and "'0.weight': (16, 64)" in message, message


# ---------------------------------------------------------------- 07.6 what would this pickle import?

def globals_right(data):
    return sorted({arg.replace(" ", ".") for op, arg, _ in pickletools.genops(data) if op.name == "GLOBAL"})


def globals_with_space(data):
    return sorted({arg for op, arg, _ in pickletools.genops(data) if op.name == "GLOBAL"})


def globals_in_file_order(data):
    return list(dict.fromkeys(arg.replace(" ", ".") for op, arg, _ in pickletools.genops(data) if op.name == "GLOBAL"))


def globals_by_loading(data):
    obj = pickle.loads(data)
    return [f"{type(obj).__module__}.{type(obj).__qualname__}"]


def test_07_6_reference_passes():
    check("07.6", globals_right)


@pytest.mark.parametrize("wrong, phrase", [
    (globals_with_space, "'module name' with a space"),
    (globals_in_file_order, "return a sorted list"),
    (globals_by_loading, "it must only read, never load"),
    (_stub, "not implemented yet"),
])
def test_07_6_wrong_answers_are_named(wrong, phrase):
    message = _fails("07.6", wrong)
    assert phrase in message, message
