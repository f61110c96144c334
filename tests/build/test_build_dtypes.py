"""Chapter 01b's type promotion (exercise 01b.6) in build mode and against PyTorch: the framework's
`promote_types` and `result_type` (and the solution's, installed through their seams) give torch's dtypes over
every pair of dtypes and operand kinds, the framework's ops ask the learner's `result_type` once it is
installed, and one that raises at run time is left out while the reference goes on."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import tinygrad_course as tc
from tinygrad_course import build, seams
from tinygrad_course.build.components import BY_NAME
from tinygrad_course.build.package import load, save
from tinygrad_course.dtypes import ALL_DTYPES

from build_helpers import solution_cell

SETUP = "import numpy as np\nimport tinygrad_course as tc"
NUMBERS = (True, False, 3, -2, 0.5, 2.0)


@pytest.fixture(autouse=True)
def _reference_after():
    yield
    seams.uninstall()


def _solution():
    namespace = {}
    exec(SETUP + "\n" + solution_cell("01b_tensor_object.ipynb", "ex01b_6"), namespace)
    return namespace["promote_types"], namespace["result_type"]


def _torch(d):
    return getattr(torch, d.name)


def _kinds(d):
    """A tensor with dimensions and a 0-d tensor of dtype `d`, in both frameworks."""
    return [(tc.tensor(np.array([1, 0]).astype(d.np_dtype)), torch.tensor([1, 0], dtype=_torch(d))),
            (tc.tensor(np.array(1).astype(d.np_dtype)), torch.tensor(1, dtype=_torch(d)))]


def _operand_pairs():
    operands = [pair for d in ALL_DTYPES for pair in _kinds(d)] + [(n, n) for n in NUMBERS]
    return [(a, b) for a in operands for b in operands if not (isinstance(a[0], (bool, int, float))
                                                              and isinstance(b[0], (bool, int, float)))]


@pytest.mark.parametrize("installed", [False, True], ids=["reference", "solution"])
def test_promote_types_and_result_type_are_torchs(installed):
    if installed:
        promote, result = _solution()
        seams.install("promote_types", promote)
        seams.install("result_type", result)
    for a in ALL_DTYPES:
        for b in ALL_DTYPES:
            assert tc.promote_types(a, b).name == str(torch.promote_types(_torch(a), _torch(b))).split(".")[1], (a, b)
    for (ours_a, theirs_a), (ours_b, theirs_b) in _operand_pairs():
        want = str(torch.result_type(theirs_a, theirs_b)).split(".")[1]
        assert tc.result_type(ours_a, ours_b).name == want, (theirs_a, theirs_b)
        product = str((theirs_a * theirs_b).dtype).split(".")[1]
        assert (ours_a * ours_b).dtype.name == product, (theirs_a, theirs_b)  # the ops ask result_type


def test_numbers_alone_and_the_errors_are_torchs():
    promote, result = _solution()
    for fn in (tc.result_type, result):
        assert fn(2, 3.5) is tc.float32 and fn(True, 2) is tc.int64 and fn(True, False) is tc.bool
        with pytest.raises(TypeError, match="complex"):
            fn(tc.tensor([1.0]), 1j)
        with pytest.raises(TypeError, match="str"):
            fn(tc.tensor([1.0]), "2")
    for fn in (tc.promote_types, promote):
        with pytest.raises(TypeError, match=r"promote_types\(\): argument 'type2' \(position 2\) must be tc.dtype, "
                                            r"not int"):
            fn(tc.int64, 1)
    with pytest.raises(TypeError, match=r"argument 'type2' \(position 2\) must be torch.dtype, not int"):
        torch.promote_types(torch.int64, 1)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.tuples(st.sampled_from(ALL_DTYPES), st.booleans()), st.sampled_from(NUMBERS)),
                min_size=1, max_size=4))
def test_the_solution_agrees_with_the_framework_on_any_operands(spec):
    _, result = _solution()
    operands = [op if not isinstance(op, tuple) else _kinds(op[0])[op[1]][0] for op in spec]
    assert result(*operands) is tc.result_type(*operands)


def test_the_learners_result_type_decides_the_ops_and_a_failing_one_is_left_out(tmp_path):
    cell = solution_cell("01b_tensor_object.ipynb", "ex01b_6")
    for name in ("promote_types", "result_type"):
        save(tmp_path, BY_NAME[name], cell, [SETUP], "01b_tensor_object.ipynb, cell ex01b_6")
    build.session.install(load(tmp_path), tmp_path)
    ints = tc.tensor([1, 2])
    seams.reset_calls()
    assert (ints + 1.5).dtype is tc.float32 and (ints + tc.tensor(1.5, dtype=tc.float64)).dtype is tc.float64
    assert (tc.tensor([1, 2], dtype=tc.uint8) * tc.tensor(-1)).dtype is tc.uint8
    assert seams.calls().get("result_type", 0) >= 3
    seams.uninstall()
    broken = tmp_path / "broken"
    save(broken, BY_NAME["result_type"], "def result_type(*operands):\n    return operands[5].dtype\n", [SETUP],
         "01b_tensor_object.ipynb, cell ex01b_6")
    build.session.install(load(broken), broken)
    with pytest.warns(UserWarning, match=r"your result_type .*raised IndexError"):
        total = ints + 1.5
    assert total.dtype is tc.float32 and total.tolist() == [2.5, 3.5] and "result_type" not in seams.installed()
