"""Chapter 02c.2's TensorMethods and 02c.3's TensorInplace as build-mode components: each of Tensor's reductions,
comparisons, logical operators and conversions (02c.2), and its in-place methods with the in-place machinery
(`_check_inplace`, `_write`, `_inplace`, 02c.3) is installed as tc.Tensor's own attribute (a method slot), computes
like PyTorch (values, version counters, nodes, gradients, errors; Hypothesis for broadcasting, gradcheck through
recorded in-place ops), a wrong cell is not installed while the other cell's methods are, one that raises is named
with its cell, and the lab and the GPT milestone install them."""
from __future__ import annotations


import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import tinygrad_course as tc
from tinygrad_course import build, seams
from tinygrad_course.build import gpt_milestone
from tinygrad_course.build.checks import in_framework, verdict
from tinygrad_course.build.components import BY_NAME, TENSOR_INPLACE_METHODS, TENSOR_REDUCTION_METHODS, WRITING, for_chapter
from tinygrad_course.build.package import save
from tinygrad_course.build.probes import PROBES
from tinygrad_course.build.runs import LAB_UNUSED_INPLACE, MILESTONES
from tinygrad_course.tensor import LEARNER_INPLACE_METHODS, LEARNER_REDUCTION_METHODS, Tensor

from build_helpers import learner_fixture, refusals, run_cell, solution_cell

SETUP = ("import numpy as np\nimport tinygrad_course as tc\n"
         "from tinygrad_course.ops import arithmetic, matmul, unary_math, views\n"
         "from tinygrad_course.ops import comparison, indexing, pointwise_binary, reduce\n"
         "from tinygrad_course.dtypes import type_name\n"
         "from tinygrad_course.strides import view_strides\n\n\n")
NOTEBOOK = "02c_tensor_methods.ipynb"
OPERATORS = solution_cell(NOTEBOOK, "ex02c_1")  # as_operand
METHODS = solution_cell(NOTEBOOK, "ex02c_2")
CELL = solution_cell(NOTEBOOK, "ex02c_3")
METHOD_NAMES = [f"Tensor.{attr}" for attr in LEARNER_REDUCTION_METHODS]
INPLACE_NAMES = [f"Tensor.{attr}" for attr in LEARNER_INPLACE_METHODS]
NAMES = METHOD_NAMES + INPLACE_NAMES
OWN = {attr: Tensor.__dict__.get(attr) for attr in LEARNER_REDUCTION_METHODS + LEARNER_INPLACE_METHODS}


def _source(cell=CELL, methods=METHODS):
    return SETUP + OPERATORS + "\n\n\n" + methods + "\n\n\n" + cell


def _namespace(cell=CELL, methods=METHODS):
    return run_cell(_source(cell, methods), "<ex02c_2, ex02c_3>")


def _save(folder, cell=CELL, methods=METHODS):
    for name in METHOD_NAMES:
        save(folder, BY_NAME[name], SETUP + OPERATORS + "\n\n\n" + methods, [],
             f"{NOTEBOOK}, the cell defining TensorMethods")
    for name in INPLACE_NAMES:
        save(folder, BY_NAME[name], SETUP + OPERATORS + "\n\n\n" + cell, [], f"{NOTEBOOK}, the cell defining TensorInplace")


learner = learner_fixture(_save)


@pytest.mark.parametrize("grade_id, cls, table, names", [
    ("ex02c_2", "TensorMethods", TENSOR_REDUCTION_METHODS, LEARNER_REDUCTION_METHODS),
    ("ex02c_3", "TensorInplace", TENSOR_INPLACE_METHODS, LEARNER_INPLACE_METHODS)])
def test_every_method_is_a_component_of_its_02c_cell_with_its_slot_and_probe(grade_id, cls, table, names):
    assert tuple(attr for attr, _ in table) == names
    ours = [c for c in for_chapter("02c") if c.exercise == grade_id]
    assert [c.name for c in ours] == [f"Tensor.{attr}" for attr in names]
    for c in ours:
        assert c.seam == c.name and seams.is_slot(c.seam) and c.name in PROBES and c.defines == cls
        assert c.notebook == NOTEBOOK and c.pure == (c.name.removeprefix("Tensor.") not in WRITING)


def test_the_solution_passes_its_check_and_agrees_with_the_reference_inside_the_framework():
    namespace = _namespace()
    assert verdict("Tensor.sum", namespace) is None and verdict("Tensor.add_", namespace) is None
    for names, cls in ((METHOD_NAMES, "TensorMethods"), (INPLACE_NAMES, "TensorInplace")):
        for name in names:
            assert in_framework(name, namespace[cls]) is None, name


def test_use_learner_makes_them_tensor_methods_counted_and_use_reference_restores_them(learner):
    for attr in LEARNER_REDUCTION_METHODS + LEARNER_INPLACE_METHODS:
        assert Tensor.__dict__[attr] is not OWN[attr], attr
    seams.reset_calls()
    x = tc.ones(2, 3)
    x += 1
    calls = {row.component: row.calls for row in build.status() if row.component in NAMES}
    assert {k: v for k, v in calls.items() if v} == {"Tensor.__iadd__": 1, "Tensor.add_": 1, "Tensor._inplace": 1,
                                                     "Tensor._check_inplace": 1, "Tensor._write": 1}
    build.use_reference()
    assert {attr: Tensor.__dict__.get(attr) for attr in LEARNER_REDUCTION_METHODS + LEARNER_INPLACE_METHODS} == OWN


def _pair(data, dtype="float32", requires_grad=False):
    return (tc.tensor(data, dtype=getattr(tc, dtype), requires_grad=requires_grad),
            torch.tensor(data, dtype=getattr(torch, dtype), requires_grad=requires_grad))


CALLS = {
    "add_": lambda x, b, lib: x.add_(b, alpha=2), "sub_": lambda x, b, lib: x.sub_(b, alpha=0.5),
    "mul_": lambda x, b, lib: x.mul_(b), "div_": lambda x, b, lib: x.div_(b + 3),
    "addcmul_": lambda x, b, lib: x.addcmul_(b, b, value=-0.5), "addcdiv_": lambda x, b, lib: x.addcdiv_(b, b * b + 1),
    "lerp_": lambda x, b, lib: x.lerp_(b, 0.3), "lerp_ tensor": lambda x, b, lib: x.lerp_(b, lib.full_like(b, 0.6)),
    "zero_": lambda x, b, lib: x.zero_(), "fill_": lambda x, b, lib: x.fill_(-2.5), "copy_": lambda x, b, lib: x.copy_(b),
    "+=": lambda x, b, lib: x.__iadd__(b), "-=": lambda x, b, lib: x.__isub__(1),
    "*=": lambda x, b, lib: x.__imul__(b), "/=": lambda x, b, lib: x.__itruediv__(4),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_in_place_methods_agree_with_torch_values_versions_nodes_and_gradients(learner, dtype):
    tol = 1e-6 if dtype == "float32" else 1e-12
    data, other = [[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], [0.5, 4.0, -1.0]
    for text, call in CALLS.items():
        x, tx = _pair(data, dtype)
        view, tview = x[1], tx[1]
        assert call(x, _pair(other, dtype)[0], tc) is x and call(tx, _pair(other, dtype)[1], torch) is tx
        assert x._version[0] == tx._version == view._version[0] == tview._version, text
        np.testing.assert_allclose(x.numpy(), tx.numpy(), rtol=tol, atol=tol, err_msg=text)
        np.testing.assert_allclose(view.numpy(), tview.numpy(), rtol=tol, atol=tol, err_msg=text)
        # in a graph: the history continues through the in-place node
        a, ta = _pair(data, dtype, requires_grad=True)
        b, tb = _pair(other, dtype, requires_grad=True)
        y, ty = a * 1, ta * 1
        call(y, b, tc), call(ty, tb, torch)
        if text != "fill_":  # PyTorch names fill_ with a number FillBackward2, the framework FillBackward0
            assert y.grad_fn.name() == ty.grad_fn.name().removeprefix("torch::autograd::"), text
        weights = [[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]]
        (y * tc.tensor(weights, dtype=y.dtype)).sum().backward()
        (ty * torch.tensor(weights, dtype=ty.dtype)).sum().backward()
        for mine, theirs in ((a, ta), (b, tb)):
            if theirs.grad is None:
                assert mine.grad is None or not mine.grad.numpy().any(), text
            else:
                np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=tol, atol=tol, err_msg=text)


def test_reductions_and_comparisons_agree_with_torch(learner):
    data = [[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]]
    for call in (lambda x: x.sum(), lambda x: x.sum(1), lambda x: x.sum((0, 1), keepdim=True),
                 lambda x: x.sum(axis=0), lambda x: x.mean(), lambda x: x.mean(-1, keepdim=True),
                 lambda x: x.max(), lambda x: x.max(1).values, lambda x: x.max(1).indices,
                 lambda x: x.max(0, keepdims=True)[0], lambda x: x.argmax(), lambda x: x.argmax(1, keepdim=True),
                 lambda x: x == 3, lambda x: x != x.flip(0), lambda x: x < 0.5, lambda x: x <= np.float32(1),
                 lambda x: x > x.mean(), lambda x: x >= 4, lambda x: x.eq(x), lambda x: x.lt(x.flip(1))):
        (x, tx) = _pair(data, requires_grad=True)
        got, want = call(x), call(tx)
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        assert got.tolist() == want.tolist()
        if want.grad_fn is not None:
            assert got.grad_fn.name() == want.grad_fn.name()
            got.sum().backward(), want.sum().backward()
            assert x.grad.tolist() == tx.grad.tolist()
    x = tc.ones(2)
    assert (x == "a") is False and (x != "a") is True


def _message(call):
    try:
        call()
    except RuntimeError as error:
        return str(error).split(" Hint:")[0]
    return None


def test_errors_are_pytorchs(learner):
    for call in (lambda lib: lib.tensor([1, 2, 3]).add_(1.5),
                 lambda lib: lib.zeros(3).add_(lib.ones(2, 3)),
                 lambda lib: lib.ones(3, requires_grad=True).mul_(2),
                 lambda lib: lib.ones(2, 3, requires_grad=True)[0].mul_(2),
                 lambda lib: lib.ones(3).expand(2, 3).add_(1),
                 lambda lib: (lambda e: (e.add_(1), e.sum().backward()))(lib.ones(3, requires_grad=True).exp())):
        mine, theirs = _message(lambda: call(tc)), _message(lambda: call(torch))
        assert theirs is not None and mine is not None
        assert mine.replace("tc.", "torch.") == theirs or mine.split(":")[0] == theirs.split(":")[0], (mine, theirs)
    # a write through a view in a graph (the base takes the history) stays the reference's: PyTorch's gradients
    grads = []
    for lib in (tc, torch):
        a = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        v = a * 1
        v[0].mul_(3)
        (v * v).sum().backward()
        grads.append(a.grad.tolist())
    assert grads[0] == grads[1]
    p = tc.nn.Parameter(tc.ones(2))
    with tc.no_grad():
        p.add_(1)
    assert p.is_leaf and p.requires_grad and p.tolist() == [2.0, 2.0]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=1, max_size=3), st.lists(st.integers(1, 3), min_size=0, max_size=3),
       st.sampled_from(["add_", "mul_", "addcmul_", "copy_"]))
def test_broadcasting_into_self_agrees_with_torch(self_shape, other_shape, method):
    """An operand that broadcasts to self's shape is written; one that would grow self raises PyTorch's error."""
    rng = np.random.default_rng(len(self_shape) * 10 + len(other_shape))
    data, other = rng.standard_normal(self_shape), rng.standard_normal(other_shape)
    namespace = _namespace()
    functions = {attr: getattr(namespace["TensorInplace"], attr) for attr in LEARNER_INPLACE_METHODS}
    results = {}
    for lib in (tc, torch):
        x, b = lib.tensor(data), lib.tensor(other)
        call = {"add_": lambda: x.add_(b), "mul_": lambda: x.mul_(b), "addcmul_": lambda: x.addcmul_(b, b),
                "copy_": lambda: x.copy_(b)}[method]
        with seams.replaced({f"Tensor.{a}": f for a, f in functions.items()} if lib is tc else {}):
            try:
                call()
                results[lib.__name__] = ("ok", np.asarray(x.tolist()))
            except RuntimeError as error:
                results[lib.__name__] = ("error", str(error))
    (mine, got), (theirs, want) = results["tinygrad_course"], results["torch"]
    assert mine == theirs, (mine, theirs, got, want)
    if mine == "ok":
        np.testing.assert_allclose(got, want, rtol=1e-12)
    else:
        assert got.split(" Hint:")[0].rstrip(".") == want  # PyTorch's message (the framework adds a hint)


def test_gradcheck_through_recorded_in_place_ops(learner):
    a = tc.randn(2, 3, dtype=tc.float64, requires_grad=True)
    b = tc.randn(3, dtype=tc.float64, requires_grad=True)

    def f(a, b):
        y = a * 1
        y.mul_(b).add_(b, alpha=2).addcmul_(a, b, value=0.5).addcdiv_(a, b * b + 1).lerp_(a, 0.25)
        y -= b
        y *= a
        return y.sum(1) + y.mean() + y.max(1).values
    assert tc.autograd.gradcheck(f, (a, b))


def test_a_wrong_cell_is_not_installed_and_the_warning_names_it_once_while_the_other_cell_is(tmp_path):
    wrong = CELL.replace("self._version[0] += 1  # the counter self shares with its views", "pass")
    assert wrong != CELL
    assert "version: expected 1, got 0" in verdict("Tensor._write", _namespace(wrong))
    _save(tmp_path, wrong)
    said = refusals(tmp_path)
    assert len(said) == 1 and said[0].startswith(f"your TensorInplace ({NOTEBOOK}, cell ex02c_3) is not installed")
    assert not any(name in seams.installed() for name in INPLACE_NAMES)
    assert {attr: Tensor.__dict__.get(attr) for attr in LEARNER_INPLACE_METHODS} == {
        attr: OWN[attr] for attr in LEARNER_INPLACE_METHODS}
    assert all(name in seams.installed() for name in METHOD_NAMES)  # 02c.2's cell is checked on its own
    build.use_reference()


def test_a_wrong_reduction_cell_leaves_the_in_place_cell_installed(tmp_path):
    wrong = METHODS.replace("return reduce.SumAll.apply(self, None, False, dtype)",
                            "return reduce.Sum.apply(self, dim, keepdim, dtype)")
    assert wrong != METHODS
    assert "x.sum(): node: expected 'SumBackward0', got 'SumBackward1'" in verdict("Tensor.sum",
                                                                                  _namespace(methods=wrong))
    _save(tmp_path, methods=wrong)
    said = refusals(tmp_path)
    assert len(said) == 1 and said[0].startswith(f"your TensorMethods ({NOTEBOOK}, cell ex02c_2) is not installed")
    assert not any(name in seams.installed() for name in METHOD_NAMES)
    assert all(name in seams.installed() for name in INPLACE_NAMES)
    build.use_reference()


def test_an_error_in_a_learners_write_is_raised_naming_its_cell_without_a_second_write(tmp_path):
    _save(tmp_path)
    build.use_learner(tmp_path, quiet=True)
    try:
        def broken(self, result):
            self._data[...] = result._data
            self._version[0] += 1
            raise ZeroDivisionError("a bug after the write")

        seams.install("Tensor._write", build.session._guarded(broken, "Tensor._write", f"{NOTEBOOK}, cell ex02c_3",
                                                              None, "Tensor._write"))
        x = tc.zeros(2)
        with pytest.raises(ZeroDivisionError) as raised:
            x.add_(1)
        assert any(f"your Tensor._write ({NOTEBOOK}, cell ex02c_3)" in note for note in raised.value.__notes__)
        assert x.tolist() == [1.0, 1.0]  # written once: no reference ran the call again
    finally:
        build.use_reference()


def test_the_lab_and_the_gpt_milestone_install_the_learners_methods():
    lab = {name for name in NAMES if name.removeprefix("Tensor.") not in LAB_UNUSED_INPLACE}
    assert lab and lab <= set(MILESTONES["lab"][2]) and not (set(NAMES) - lab) & set(MILESTONES["lab"][2])
    assert set(NAMES) <= set(gpt_milestone.EARLIER)
