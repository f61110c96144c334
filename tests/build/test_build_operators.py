"""Chapter 02c.1's TensorOperators as build-mode components: each method is installed as tc.Tensor's own attribute
(a method slot), computes every operator, math call and view like PyTorch (parity with torch), is counted in the
status table, a wrong or stub one is not installed, one that raises is named with its cell while the reference
runs, and both the lab and the GPT milestone install them."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import tinygrad_course as tc
from tinygrad_course import build, seams
from tinygrad_course.build import gpt_milestone
from tinygrad_course.build.checks import in_framework, verdict
from tinygrad_course.build.components import BY_NAME, TENSOR_METHODS, for_chapter
from tinygrad_course.build.package import save
from tinygrad_course.build.probes import PROBES
from tinygrad_course.build.runs import LAB_UNUSED, MILESTONES
from tinygrad_course.tensor import LEARNER_METHODS, Tensor

from build_helpers import ROOT, learner_fixture, refusals, run_cell, solution_cell

SETUP = ("import numpy as np\nimport tinygrad_course as tc\n"
         "from tinygrad_course.ops import arithmetic, matmul, unary_math, views\n"
         "from tinygrad_course.strides import view_strides\n\n\n")
CELL = solution_cell("02c_tensor_methods.ipynb", "ex02c_1")
NAMES = [f"Tensor.{attr}" for attr in LEARNER_METHODS]
OWN = {attr: Tensor.__dict__.get(attr) for attr in LEARNER_METHODS}


def _namespace(source=CELL):
    return run_cell(SETUP + source, "<ex02c_1>")


def _save(folder, source=CELL):
    for name in NAMES:
        save(folder, BY_NAME[name], SETUP + source, [], "02c_tensor_methods.ipynb, the cell defining TensorOperators")


learner = learner_fixture(_save)


def test_every_tensor_method_is_a_component_of_02c_with_its_slot_and_probe():
    assert tuple(attr for attr, _ in TENSOR_METHODS) == LEARNER_METHODS
    ours = [c for c in for_chapter("02c") if c.exercise == "ex02c_1"]
    assert [c.name for c in ours] == NAMES
    for c in ours:
        assert c.seam == c.name and seams.is_slot(c.seam) and c.name in PROBES and c.defines == "TensorOperators"
        assert c.notebook == "02c_tensor_methods.ipynb" and c.pure


def test_the_solution_passes_its_check_and_agrees_with_the_reference_inside_the_framework():
    namespace = _namespace()
    assert verdict("Tensor.__add__", namespace) is None
    for name in NAMES:
        assert in_framework(name, namespace["TensorOperators"]) is None, name


def test_use_learner_makes_them_tensor_methods_counted_in_the_status_table(learner):
    for attr in LEARNER_METHODS:
        assert Tensor.__dict__[attr] is not OWN[attr], attr
    assert isinstance(Tensor.__dict__["T"], property)
    seams.reset_calls()
    x = tc.ones(2, 3)
    (2 - x * 3).T.exp()
    calls = {row.component: row.calls for row in build.status() if row.component.startswith("Tensor.")}
    assert {k: v for k, v in calls.items() if v} == {"Tensor.__mul__": 1, "Tensor.__rsub__": 1, "Tensor.T": 1,
                                                     "Tensor.exp": 1}
    rows = {row.component: row for row in build.status()}
    assert all(rows[name].source == "learner" for name in NAMES)
    build.use_reference()
    assert {attr: Tensor.__dict__.get(attr) for attr in LEARNER_METHODS} == OWN


def _inputs(lib, dtype):
    a = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=dtype).requires_grad_()
    b = lib.tensor([0.5, -1.0, 2.0], dtype=dtype).requires_grad_()
    return a, b


EXPRESSIONS = {
    "a + b": lambda a, b: a + b, "a - b": lambda a, b: a - b, "a * b": lambda a, b: a * b, "a / b": lambda a, b: a / b,
    "2 + a": lambda a, b: 2 + a, "a + 2": lambda a, b: a + 2, "2 - a": lambda a, b: 2 - a, "a - 2": lambda a, b: a - 2,
    "3 * a": lambda a, b: 3 * a, "a * 3": lambda a, b: a * 3, "4 / a": lambda a, b: 4 / a, "a / 4": lambda a, b: a / 4,
    "a ** 2": lambda a, b: a ** 2, "a ** 0.5": lambda a, b: a ** 0.5, "a * True": lambda a, b: a * True,
    "a * np.float32(2)": lambda a, b: a * np.float32(2), "np.float32(2) * a": lambda a, b: np.float32(2) * a,
    "np.float64(3) - a": lambda a, b: np.float64(3) - a, "a / np.int64(2)": lambda a, b: a / np.int64(2),
    "-a": lambda a, b: -a, "a @ a.T": lambda a, b: a @ a.T,
    "b @ b": lambda a, b: b @ b, "a @ b": lambda a, b: a @ b, "b @ a.T": lambda a, b: b @ a.T,
    "exp": lambda a, b: (a - 3).exp(), "log": lambda a, b: a.log(), "tanh": lambda a, b: (a - 3).tanh(),
    "sqrt": lambda a, b: a.sqrt(), "relu": lambda a, b: (a - 3).relu(), "sigmoid": lambda a, b: (a - 3).sigmoid(),
    "view(3, 2)": lambda a, b: a.view(3, 2), "view((3, 2))": lambda a, b: a.view((3, 2)),
    "view([-1])": lambda a, b: a.view([-1]), "reshape(3, -1)": lambda a, b: a.reshape(3, -1),
    "t().reshape(6)": lambda a, b: a.t().reshape(6), "transpose(0, 1)": lambda a, b: a.transpose(0, 1),
    "transpose(-1, -2)": lambda a, b: a.transpose(-1, -2), "t()": lambda a, b: a.t(), "b.t()": lambda a, b: b.t(),
    "T": lambda a, b: a.T, "b.T": lambda a, b: b.T, "3-D T": lambda a, b: a.view(1, 2, 3).T, "mT": lambda a, b: a.mT,
    "expand(2, 2, 3)": lambda a, b: a.expand(2, 2, 3), "b.expand(4, -1)": lambda a, b: b.expand(4, -1),
    "b.expand((2, 3))": lambda a, b: b.expand((2, 3)), "unsqueeze(1)": lambda a, b: a.unsqueeze(1),
    "unsqueeze(-1)": lambda a, b: a.unsqueeze(-1), "squeeze()": lambda a, b: a.view(2, 1, 3).squeeze(),
    "squeeze(1)": lambda a, b: a.view(2, 1, 3).squeeze(1), "squeeze(0)": lambda a, b: a.squeeze(0),
    "t().contiguous()": lambda a, b: a.t().contiguous(), "contiguous()": lambda a, b: a.contiguous(),
    "clone()": lambda a, b: a.clone(),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_every_operator_math_call_and_view_agrees_with_torch(learner, dtype):
    tol = 2e-5 if dtype == "float32" else 1e-12
    for text, call in EXPRESSIONS.items():
        a, b = _inputs(tc, getattr(tc, dtype))
        ta, tb = _inputs(torch, getattr(torch, dtype))
        got, want = call(a, b), call(ta, tb)
        assert isinstance(got, tc.Tensor) and str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], text
        assert tuple(got.shape) == tuple(want.shape) and got.stride() == want.stride(), text
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=tol, atol=tol, err_msg=text)
        weights = np.arange(1.0, want.numel() + 1).reshape(tuple(want.shape))
        (got * tc.tensor(weights, dtype=got.dtype)).sum().backward()
        (want * torch.tensor(weights, dtype=want.dtype)).sum().backward()
        for mine, theirs in ((a, ta), (b, tb)):
            if theirs.grad is None:
                assert mine.grad is None, text
            else:
                np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=tol, atol=tol, err_msg=text)


def test_errors_are_pytorchs_with_the_learners_methods(learner):
    a = tc.ones(2, 3)
    for symbol, call in (("+", lambda: a + "x"), ("-", lambda: "x" - a), ("*", lambda: a * None),
                         ("/", lambda: a / [1]), ("@", lambda: a @ 2), ("**", lambda: a ** "x")):
        escaped = "[*][*]" if symbol == "**" else f"[{symbol}]"
        with pytest.raises(TypeError, match=rf"unsupported operand type\(s\) for {escaped}"):
            call()
    with pytest.raises(RuntimeError, match=r"t\(\) expects a tensor with <= 2 dimensions, but self is 3D"):
        a.view(1, 2, 3).t()
    with pytest.raises(RuntimeError, match="tensor.mT is only supported on matrices or batches of matrices. Got 1-D"):
        a.view(6).mT
    with pytest.raises(RuntimeError, match=r"shape '\[4\]' is invalid for input of size 6"):
        a.view(4)
    assert a.contiguous() is a and not np.shares_memory(a.clone()._data, a._data)
    sizes = tc.tensor([3, 2])  # sizes as a tensor, which the exercise does not cover: the reference's
    assert a.view(sizes).shape == a.reshape(sizes).shape == (3, 2) and a[:1].expand(tc.tensor([4, 3])).shape == (4, 3)
    assert "Tensor.view" not in build.session.left_out()


def test_a_parameter_and_the_lab_model_compute_through_the_learners_methods(learner):
    seams.reset_calls()
    model = tc.nn.Sequential(tc.nn.Linear(3, 4), tc.nn.Tanh(), tc.nn.Linear(4, 2))
    x = tc.randn(5, 3)
    loss = tc.nn.functional.cross_entropy(model(x), tc.tensor([0, 1, 1, 0, 1]))
    loss.backward()
    p = model[0].weight
    assert (1 - p).grad_fn is not None
    assert sum(seams.calls().get(name, 0) for name in NAMES) > 0


def test_an_error_in_a_learners_method_names_its_cell_and_the_reference_runs(tmp_path):
    _save(tmp_path)
    build.use_learner(tmp_path, quiet=True)
    broken = lambda self: 1 / 0  # noqa: E731  (a bug that appears only at run time)
    seams.install("Tensor.exp", build.session._guarded(broken, "Tensor.exp", "02c_tensor_methods.ipynb, cell ex02c_1",
                                                       seams.reference("Tensor.exp"), "Tensor.exp"))
    with pytest.warns(UserWarning, match=r"your Tensor.exp \(02c_tensor_methods.ipynb, cell ex02c_1\) raised ZeroDivisionError"):
        y = tc.zeros(2).exp()
    assert y.tolist() == [1.0, 1.0] and Tensor.__dict__["exp"] is OWN["exp"]
    assert "Tensor.exp" in build.session.left_out()
    assert (tc.zeros(1) + 1).tolist() == [1.0]  # the other methods stay the learner's
    assert Tensor.__dict__["__add__"] is not OWN["__add__"]


def test_a_wrong_or_stub_cell_is_not_installed_and_the_warning_names_it(tmp_path):
    wrong = CELL.replace("return NotImplemented if other is None else arithmetic.Sub.apply(other, self)",
                         "return NotImplemented if other is None else arithmetic.Sub.apply(self, other)")
    assert wrong != CELL
    assert "this is a - 2, but 2 - a calls a.__rsub__(2)" in verdict("Tensor.__rsub__", _namespace(wrong))
    _save(tmp_path, wrong)
    said = refusals(tmp_path)
    assert len(said) == 1 and said[0].startswith("your TensorOperators (02c_tensor_methods.ipynb, cell ex02c_1) is not "
                                                 "installed: its check failed: 2 - a: ")  # one warning, not 28
    rows = {row.component: row for row in build.status()}
    assert all((rows[name].source, rows[name].check) == ("reference", "fail") for name in NAMES)
    assert not any(name in seams.installed() for name in NAMES)
    assert {attr: Tensor.__dict__.get(attr) for attr in LEARNER_METHODS} == OWN
    stub = _released_cell()
    assert "NotImplementedError" in stub
    assert "not implemented yet" in verdict("Tensor.__add__", _namespace(stub))


def _released_cell():
    nb = json.loads((ROOT / "exercises" / "02c_tensor_methods.ipynb").read_text())
    cell = next(c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "ex02c_1")
    return "".join(cell["source"])


def test_the_lab_and_the_gpt_milestone_install_the_learners_methods():
    lab = {name for name in NAMES if name.removeprefix("Tensor.") not in LAB_UNUSED}  # those the lab calls
    assert lab and lab <= set(MILESTONES["lab"][2]) and not set(NAMES) - lab & set(MILESTONES["lab"][2])
    assert set(NAMES) <= set(gpt_milestone.EARLIER)
