"""Chapter 01b's tensor methods (ShapeMethods, StrideMethods, ValueMethods, AutogradFields) as build-mode
components: each method is installed as TensorBase's own attribute (a method slot, a property's setter kept),
answers like PyTorch (parity with torch), is counted in the status table; a wrong or stub class is not installed,
a PyTorch error the method raises by design stays the program's, and the lab and the GPT milestone install them."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import tinygrad_course as tc
from tinygrad_course import build, seams
from tinygrad_course.build import gpt_milestone
from tinygrad_course.build.checks import in_framework, verdict
from tinygrad_course.build.components import BASE_METHOD_CELLS, BASE_METHODS_01B, BY_NAME, for_chapter
from tinygrad_course.build.package import save
from tinygrad_course.build.probes import PROBES
from tinygrad_course.build.runs import LAB_UNUSED_01B, MILESTONES
from tinygrad_course.tensor_base import BASE_METHODS, TensorBase

from build_helpers import ROOT, learner_fixture, refusals, run_cell, solution_cell

SETUP = ("import math\n\nimport numpy as np\nimport tinygrad_course as tc\n"
         "from tinygrad_course.shapes import contiguous_strides\n"
         "from tinygrad_course.tensor_base import _wrap\n\n\n")
CELLS = {grade_id: solution_cell("01b_tensor_object.ipynb", grade_id) for grade_id, _, _ in BASE_METHOD_CELLS}
CLASS_OF = {grade_id: cls for grade_id, cls, _ in BASE_METHOD_CELLS}
NAMES = [f"Tensor.{attr}" for attr in BASE_METHODS]
OWN = {attr: TensorBase.__dict__[attr] for attr in BASE_METHODS}


def _namespace(grade_id, old=None, new=None):
    source = CELLS[grade_id] if old is None else CELLS[grade_id].replace(old, new)
    assert old is None or source != CELLS[grade_id]
    return run_cell(SETUP + source, f"<{grade_id}>")


def _save(folder, sources=None):
    sources = {**CELLS, **(sources or {})}
    for grade_id, cls, methods in BASE_METHOD_CELLS:
        for attr, _ in methods:
            save(folder, BY_NAME[f"Tensor.{attr}"], SETUP + sources[grade_id], [],
                 f"01b_tensor_object.ipynb, the cell defining {cls}")


learner = learner_fixture(_save)


def test_every_base_method_is_a_component_of_01b_with_its_slot_and_probe():
    assert BASE_METHODS_01B == BASE_METHODS
    ours = [c for c in for_chapter("01b") if c.exercise != "ex01b_6"]  # 01b.6 is type promotion, not a method
    assert [c.name for c in ours] == NAMES
    for c in ours:
        assert c.seam == c.name and seams.is_slot(c.seam) and c.name in PROBES
        assert c.notebook == "01b_tensor_object.ipynb" and c.defines == CLASS_OF[c.exercise]


def test_the_solutions_pass_their_checks_and_agree_with_the_reference_inside_the_framework():
    for grade_id, cls, methods in BASE_METHOD_CELLS:
        namespace = _namespace(grade_id)
        assert verdict(f"Tensor.{methods[0][0]}", namespace) is None, cls
        for attr, _ in methods:
            assert in_framework(f"Tensor.{attr}", namespace[cls]) is None, attr


def test_use_learner_makes_them_tensor_methods_counted_in_the_status_table(learner):
    for attr in BASE_METHODS:
        assert TensorBase.__dict__[attr] is not OWN[attr], attr
    for attr in ("shape", "ndim", "requires_grad", "is_leaf"):
        assert isinstance(TensorBase.__dict__[attr], property)
    seams.reset_calls()
    x = tc.ones(2, 3)
    x.shape, x.stride(), x[0, 0].item(), x.detach()
    x.requires_grad = True  # the property's setter is kept, and reaches the learner's requires_grad_
    calls = {row.component: row.calls for row in build.status() if row.component in NAMES}
    assert {k: v for k, v in calls.items() if v} == {"Tensor.shape": 1, "Tensor.stride": 1, "Tensor.item": 1,
                                                     "Tensor.detach": 1, "Tensor.requires_grad_": 1}
    assert x.requires_grad is True
    rows = {row.component: row for row in build.status()}
    assert all(rows[name].source == "learner" for name in NAMES)
    build.use_reference()
    assert {attr: TensorBase.__dict__[attr] for attr in BASE_METHODS} == OWN


def _facts(lib, make):
    """Everything chapter 01b's methods answer about `make(lib)`'s tensors, in plain Python values."""
    x, views = make(lib)
    out = []
    for v in views:
        out += [tuple(v.shape), type(v.shape).__name__.replace("Size", "S"), v.ndim, v.dim(), v.numel(), v.size(),
                v.stride(), v.is_contiguous(), v.tolist()]
        if v.ndim:
            out += [len(v), v.size(-1), v.stride(0)]
        if v.numel() == 1:
            out += [v.item(), type(v.item()).__name__, bool(v)]
        out.append(np.shares_memory(v.detach().numpy(), x.detach().numpy()))
    return out


def _views(lib):
    x = lib.arange(24.0).reshape(2, 3, 4)
    return x, [x, x.transpose(0, 2), x[:, None], x[..., None], x[:, ::2], x[:, :1].expand(2, 5, 4), x[1, 2, 3],
               lib.zeros(4, 1).t(), x[1:].unsqueeze(0), x.double()[0]]  # (an empty tensor: see below)


def _ints(lib):
    x = lib.tensor([[3, 0], [1, 2]])
    return x, [x, x[1, 0], x > 1, (x > 1)[0, 0], x.T]


@pytest.mark.parametrize("make", [_views, _ints])
def test_every_answer_agrees_with_torch(learner, make):
    assert _facts(tc, make) == _facts(torch, make)


PRINTED = {"floats": lambda lib: lib.tensor([0.5, -1.25, 3.0]), "whole": lambda lib: lib.tensor([1.0, 2.0]),
           "sci": lambda lib: lib.tensor([[1e-5, 1.0], [2.0, 3.0]]), "ints": lambda lib: lib.tensor([1, 20, 300]),
           "bools": lambda lib: lib.tensor([True, False]), "0-d": lambda lib: lib.tensor(3.5),
           "3-d": lambda lib: lib.arange(24.0).reshape(2, 3, 4) / 7, "float64": lambda lib: lib.ones(2).double(),
           "int32": lambda lib: lib.tensor([1, 2], dtype=lib.int32), "nan": lambda lib: lib.tensor([0.0, float("nan")]),
           "grad": lambda lib: lib.ones(2, requires_grad=True) * 2, "leaf": lambda lib: lib.ones(2, requires_grad=True),
           "empty": lambda lib: lib.zeros(0, 3), "wrapped": lambda lib: lib.arange(30.0) * 1.5,
           "wrapped suffix": lambda lib: (lib.arange(40.0).reshape(2, 20) * 1.25).requires_grad_(),
           "large": lambda lib: lib.tensor([1e9, 1.0]), "negative": lambda lib: lib.tensor([[-1e-6]])}


@pytest.mark.parametrize("text", list(PRINTED))
def test_the_learners_repr_prints_what_torch_prints(learner, text):
    tc.set_printoptions(namespace="torch")
    try:
        assert repr(PRINTED[text](tc)) == repr(PRINTED[text](torch)) == str(PRINTED[text](tc))
    finally:
        tc.set_printoptions(namespace=None)
    assert seams.calls().get("Tensor.__repr__", 0) >= 2  # the learner's printed it (repr and print)


def test_an_empty_tensor_agrees_with_torch_except_its_strides(learner):
    # NumPy gives an array without elements the strides it was made with (here 0), PyTorch contiguous ones; the
    # reference and the learner's stride() both read NumPy's, so only the strides differ from torch's
    facts = {lib: [(tuple(v.shape), v.numel(), v.is_contiguous(), len(v), v.tolist()) for v in
                   (lib.zeros(0, 3), lib.zeros(0, 3).t())] for lib in (tc, torch)}
    assert facts[tc] == facts[torch]


ERRORS = {"len(0-d)": lambda lib: len(lib.tensor(1.0)), "bool": lambda lib: bool(lib.ones(2, 3)),
          "item": lambda lib: lib.ones(2, 3).item(), "numpy": lambda lib: lib.ones(2, requires_grad=True).numpy(),
          "non-leaf": lambda lib: (lib.ones(2, requires_grad=True) * 2).requires_grad_(False),
          "integer": lambda lib: lib.tensor([1]).requires_grad_(), "size": lambda lib: lib.ones(2, 3).size(2),
          "stride": lambda lib: lib.ones(2, 3).stride(-3)}


def _error(call):
    try:
        call()
    except Exception as error:  # compared with torch's
        return type(error), str(error)
    return None, ""


def test_the_errors_are_pytorchs_and_stay_the_programs(learner):
    for text, call in ERRORS.items():
        kind, message = _error(lambda: call(tc))
        want, theirs = _error(lambda: call(torch))
        assert kind is want and message.split(" Hint:")[0].rstrip(". ") == theirs.rstrip(". "), text
    assert not build.session.left_out()  # an error the method raises by design leaves the learner's in place
    assert all(name in seams.installed() for name in NAMES)


def test_a_detached_alias_shares_the_version_counter_with_the_learners_detach(learner):
    a = tc.tensor([0.5, -1.0, 2.0], requires_grad=True)
    e = a.exp()
    e.detach().zero_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        e.sum().backward()
    d = (a * 3).detach().requires_grad_()
    (d * d).sum().backward()
    assert d.grad.tolist() == pytest.approx([3.0, -6.0, 12.0]) and d.is_leaf


def test_a_wrong_or_stub_cell_is_not_installed_and_the_warning_names_it(tmp_path):
    wrong = CELLS["ex01b_2"].replace("strides = [s // self._data.itemsize for s in self._data.strides]",
                                     "strides = list(self._data.strides)")
    problem = verdict("Tensor.stride", _namespace("ex01b_2", "strides = [s // self._data.itemsize for s in "
                                                  "self._data.strides]", "strides = list(self._data.strides)"))
    assert "x.stride(): expected tuple (12, 4, 1), got tuple (48, 16, 4)" in problem
    _save(tmp_path, {"ex01b_2": wrong})
    said = refusals(tmp_path)
    assert len(said) == 1 and said[0].startswith("your StrideMethods (01b_tensor_object.ipynb, cell ex01b_2) is not "
                                                 "installed: its check failed: x.stride(): ")
    rows = {row.component: row for row in build.status()}
    assert (rows["Tensor.stride"].source, rows["Tensor.stride"].check) == ("reference", "fail")
    assert rows["Tensor.shape"].source == "learner" and "Tensor.stride" not in seams.installed()
    assert TensorBase.__dict__["stride"] is OWN["stride"]
    nb = json.loads((ROOT / "exercises" / "01b_tensor_object.ipynb").read_text())
    stub = "".join(next(c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") ==
                        "ex01b_4")["source"])
    assert "NotImplementedError" in stub
    assert "not implemented yet" in verdict("Tensor.detach", run_cell(SETUP + stub, "<stub>"))


def test_a_property_slot_keeps_the_class_setter():
    x = tc.ones(2)
    seams.install("Tensor.requires_grad", lambda self: "mine")
    try:
        assert x.requires_grad == "mine"
        x.requires_grad = True  # the framework's setter, still there
        assert x._requires_grad is True
    finally:
        seams.uninstall("Tensor.requires_grad")
    assert TensorBase.__dict__["requires_grad"] is OWN["requires_grad"] and x.requires_grad is True


def test_the_lab_and_the_gpt_milestone_install_the_learners_methods():
    lab = {name for name in NAMES if name.removeprefix("Tensor.") not in LAB_UNUSED_01B}  # those the lab calls
    assert lab and lab <= set(MILESTONES["lab"][2]) and not set(NAMES) - lab & set(MILESTONES["lab"][2])
    assert set(NAMES) <= set(gpt_milestone.EARLIER)
