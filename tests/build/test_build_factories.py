"""Chapter 01's tensor creation in build mode (exercise 01.1): the framework makes its tensors with the learner's
`tensor`, `zeros`, `ones`, `full`, `empty` and `*_like` (a layer's weight, a collated batch of labels), the
adapters only route (what the exercise leaves out stays the reference's), and the check that grades the cell,
which ends in the framework, refuses a wrong one. PyTorch (the oracle) fixes the errors the check expects."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import tinygrad_course as tc
from tinygrad_course import build, seams
from tinygrad_course.build import adapters_factories, checks
from tinygrad_course.build.components import BY_NAME, FACTORIES
from tinygrad_course.build.package import load, save
from tinygrad_course.grading.exercises import ch01_factories
from tinygrad_course.utils.data.collate import default_collate

from build_helpers import solution_cell

HEADER = "import numpy as np\nimport tinygrad_course as tc\n\n\n"


def _solution_namespace():
    namespace: dict = {}
    exec(HEADER + solution_cell("01_tensors.ipynb", "ex01_1"), namespace)
    return namespace


def test_the_framework_makes_its_tensors_with_the_learners_factories(tmp_path):
    cell = HEADER + solution_cell("01_tensors.ipynb", "ex01_1")
    for name in FACTORIES:
        save(tmp_path, BY_NAME[name], cell, [], "01_tensors.ipynb, cell ex01_1")
    build.session.install(load(tmp_path), tmp_path)
    seams.reset_calls()
    labels = default_collate([3, 0, 2])
    layer = tc.nn.Linear(3, 2)
    state = tc.zeros_like(layer.weight)
    made = [tc.tensor([[1, 2.5]]), tc.full((2,), 7), tc.ones(2, 1, dtype=tc.int64), labels, state]
    calls = seams.calls()
    assert {name: calls.get(name, 0) for name in ("tensor", "empty", "zeros_like", "full", "ones")} == {
        "tensor": 2, "empty": 2, "zeros_like": 1, "full": 1, "ones": 1}  # Linear allocates its weight and bias
    assert [(t.dtype, tuple(t.shape)) for t in made] == [(tc.float32, (1, 2)), (tc.int64, (2,)), (tc.int64, (2, 1)),
                                                         (tc.int64, (3,)), (tc.float32, (2, 3))]
    assert labels.tolist() == [3, 0, 2] and not state.any().item()


def test_the_adapters_only_route():
    seen = []

    def spy(*args, **kwargs):
        seen.append(args)
        return "learner's"

    tensor, zeros = adapters_factories.tensor(spy), adapters_factories.sized("zeros")(spy)
    full, zeros_like = adapters_factories.full(spy), adapters_factories.like("zeros_like")(spy)
    assert tensor([1, 2]) == tensor(np.zeros(2), device="cpu") == tensor(3.5, dtype=tc.float64) == "learner's"
    assert zeros(2, 3) == zeros((2, 3)) == full((2,), 1.5) == zeros_like(tc.ones(2)) == "learner's"
    assert len(seen) == 7
    # a tensor or a NumPy scalar as data, pinned memory, size= by keyword, out=, a tensor as fill value: the reference's
    routed = [tensor(tc.ones(2)), tensor(np.float32(2.0)), tensor([1.0], pin_memory=True), zeros(size=(2,)),
              zeros(2, out=tc.empty(2)), full((2,), tc.tensor(1.0))]
    assert all(isinstance(t, tc.Tensor) for t in routed) and len(seen) == 7


@pytest.mark.parametrize("name", FACTORIES)
def test_the_solution_passes_inside_the_framework(name):
    assert checks.in_framework(name, _solution_namespace()[name]) is None


def test_a_wrong_factory_is_named_inside_the_framework():
    namespace = _solution_namespace()

    def tensor_in_float64(data, *, dtype=None, device=None, requires_grad=False):
        return namespace["tensor"](data, dtype=dtype or tc.float64, requires_grad=requires_grad)

    assert checks.in_framework("tensor", tensor_in_float64).startswith("made: element")

    def tensor_calling_itself(data, *, dtype=None, device=None, requires_grad=False):
        return tc.tensor(data, dtype=dtype, requires_grad=requires_grad)  # installed: itself, forever

    assert "RecursionError" in checks.in_framework("tensor", tensor_calling_itself)


def test_the_errors_the_check_expects_are_pytorchs():
    def message(make):
        with pytest.raises(Exception) as error:
            make()
        return f"{type(error.value).__name__}: {error.value}"

    assert [message(lambda: torch.tensor(d)) for d in ([[1, 2, 3], [4, 5]], [[[1, 2], [3, 4]], [[1, 2], [3]]])] == [
        f"ValueError: {m}" for m in ch01_factories.RAGGED]
    assert message(lambda: torch.tensor([1, 2], requires_grad=True)) == f"RuntimeError: {ch01_factories.NO_GRAD}"
    assert message(lambda: torch.zeros(2, -3)) == f"RuntimeError: {ch01_factories.ZEROS_NEGATIVE}"
    assert message(lambda: torch.tensor([[1, 2], 3])) == "TypeError: not a sequence"
    assert message(lambda: torch.tensor([None])) == "RuntimeError: Could not infer dtype of NoneType"
    for make in (lambda m: m.empty(-1, -5), lambda m: m.ones(2, -3), lambda m: m.full((2, -1), 1.0)):
        assert message(lambda: make(tc)).split(". Hint")[0] == message(lambda: make(torch))


def test_the_reference_factories_agree_with_pytorch_on_the_checks_inputs():
    cases = [([[1, 2], [3, 4]], {}), ([1, 2.5], {}), ([True, False], {}), ([True, 2], {}), (3.5, {}), ([], {}),
             ([[], []], {}), ([1.7, -1.7], {"dtype": "int64"}), ([0.1], {"dtype": "float64"}),
             (np.arange(6, dtype=np.int32).reshape(2, 3), {})]
    for data, kwargs in cases:
        ours = tc.tensor(data, **{k: getattr(tc, v) for k, v in kwargs.items()})
        theirs = torch.tensor(data, **{k: getattr(torch, v) for k, v in kwargs.items()})
        assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
        assert ours.tolist() == theirs.tolist() and tuple(ours.shape) == tuple(theirs.shape)
    for ours, theirs in ((tc.full((2,), 7), torch.full((2,), 7)), (tc.full((2,), True), torch.full((2,), True)),
                         (tc.full_like(tc.tensor([1, 2]), 2.7), torch.full_like(torch.tensor([1, 2]), 2.7))):
        assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1] and ours.tolist() == theirs.tolist()
