"""Chapter 04's random draws as build-mode components (exercise 04.10): the learner's `Generator.uniform`,
`normal` and `permutation` are installed as tc.Generator's own attributes (method slots), give PyTorch's numbers
(uniform and randperm bit for bit, normal within the measured tolerance), draw every shuffle and initial weight
of the framework, leave other dtypes to the reference, are not installed when wrong or a stub, and the lab
installs them."""
from __future__ import annotations

import json

import numpy as np
import torch

import tinygrad_course as tc
from tinygrad_course import build, seams
from tinygrad_course.build.checks import in_framework, verdict
from tinygrad_course.build.components import BY_NAME, for_chapter
from tinygrad_course.build.package import save
from tinygrad_course.build.probes import PROBES
from tinygrad_course.build.runs import MILESTONES
from tinygrad_course.generator import LEARNER_METHODS, Generator

from build_helpers import ROOT, learner_fixture, refusals, run_cell, solution_cell

SETUP = "import numpy as np\nimport tinygrad_course as tc\n\n\n"
CELL = solution_cell("04_data.ipynb", "ex04_10")
NAMES = [f"Generator.{attr}" for attr in LEARNER_METHODS]
OWN = {attr: Generator.__dict__[attr] for attr in LEARNER_METHODS}


def _namespace(source=CELL):
    return run_cell(SETUP + source, "<ex04_10>")


def _save(folder, source=CELL):
    for name in NAMES:
        save(folder, BY_NAME[name], SETUP + source, [], "04_data.ipynb, the cell defining Generator")


learner = learner_fixture(_save)


def test_the_three_draws_are_slots_of_chapter_04_with_their_probe():
    ours = [c for c in for_chapter("04") if c.exercise == "ex04_10"]
    assert [c.name for c in ours] == NAMES
    for c in ours:
        assert c.seam == c.name and seams.is_slot(c.seam) and c.name in PROBES and c.defines == "Generator"
        assert c.notebook == "04_data.ipynb" and not c.pure  # a draw moves the generator: no second try
        assert c.name in MILESTONES["lab"][2]
    assert all(seams.reference(name) is OWN[name.split(".")[1]] for name in NAMES)


def test_the_solution_passes_its_check_and_agrees_with_the_reference_inside_the_framework():
    namespace = _namespace()
    assert verdict("Generator.uniform", namespace) is None
    for name in NAMES:
        assert in_framework(name, namespace["Generator"]) is None, name


def test_the_solutions_draws_are_pytorchs():
    mine = _namespace()["Generator"]
    for seed, (a, b), n in ((0, (0.0, 1.0), 1000), (1, (-0.3, 0.3), 5000), (2, (-1.0, 3.0), 7)):
        torch.manual_seed(seed)
        want = torch.empty(n).uniform_(a, b).numpy()
        assert np.array_equal(mine().manual_seed(seed).uniform(a, b, (n,), np.float32), want)
    torch.manual_seed(3)
    want = torch.rand(300, dtype=torch.float64).numpy()
    assert np.array_equal(mine().manual_seed(3).uniform(0, 1, (300,), np.float64), want)
    for seed, n in ((4, 1), (5, 2), (6, 1437), (7, 10000)):
        torch.manual_seed(seed)
        assert mine().manual_seed(seed).permutation(n).tolist() == torch.randperm(n).tolist()
    for seed, n, dtype, tol in ((8, 100007, torch.float32, 1e-5), (9, 37, torch.float32, 1e-5),
                                (10, 5, torch.float32, 1e-6), (11, 41, torch.float64, 1e-12),
                                (12, 7, torch.float64, 1e-12)):
        torch.manual_seed(seed)
        want = torch.randn(n, dtype=dtype).numpy()
        got = mine().manual_seed(seed).normal(0.0, 1.0, (n,), np.dtype(str(dtype).split(".")[1]))
        assert got.dtype == want.dtype and np.abs(got - want).max() <= tol, (seed, n)


def test_use_learner_makes_every_shuffle_and_initial_weight_the_learners_and_pytorchs(learner):
    for attr in LEARNER_METHODS:
        assert Generator.__dict__[attr] is not OWN[attr], attr
    seams.reset_calls()
    tc.manual_seed(0)
    torch.manual_seed(0)
    layer, reference = tc.nn.Linear(20, 30), torch.nn.Linear(20, 30)
    assert np.array_equal(layer.weight.detach().numpy(), reference.weight.detach().numpy())
    assert np.array_equal(layer.bias.detach().numpy(), reference.bias.detach().numpy())
    g, tg = tc.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    ours = [b.tolist() for _ in range(2)
            for b in tc.utils.data.DataLoader(range(23), batch_size=8, shuffle=True, generator=g)]
    theirs = [b.tolist() for _ in range(2) for b in torch.utils.data.DataLoader(range(23), batch_size=8, shuffle=True,
                                                                                  generator=tg)]
    assert ours == theirs
    w, tw = tc.empty(64, 48), torch.empty(64, 48)
    tc.nn.init.normal_(w, 0.0, 0.02)
    torch.nn.init.normal_(tw, 0.0, 0.02)
    assert np.abs(w.numpy() - tw.numpy()).max() <= 1e-5 * 0.02
    calls = {row.component: row.calls for row in build.status() if row.component in NAMES}
    assert all(calls[name] > 0 for name in NAMES), calls
    build.use_reference()
    assert {attr: Generator.__dict__[attr] for attr in LEARNER_METHODS} == OWN


def test_other_dtypes_and_not_implemented_stay_the_references(learner):
    def refusing(self, *args, **kwargs):
        raise AssertionError("the learner's draw ran")

    namespace = _namespace()
    mine = namespace["Generator"]
    mine.uniform = refusing  # a call the adapter routes to the reference never reaches it
    seams.install("Generator.uniform", BY_NAME["Generator.uniform"].adapt(mine))
    torch.manual_seed(1)
    tc.manual_seed(1)
    assert np.array_equal(tc.rand(40, dtype=tc.float16).numpy(), torch.rand(40, dtype=torch.float16).numpy())
    mine.normal = lambda self, *args, **kwargs: NotImplemented
    seams.install("Generator.normal", BY_NAME["Generator.normal"].adapt(mine))
    assert np.array_equal(tc.randn(20).numpy(), torch.randn(20).numpy())  # the reference: bit for bit


def test_a_learner_calling_the_frameworks_draw_fails_the_check_naming_it():
    delegating = CELL.replace("        n = int(n)\n        perm = list(range(n))",
                              "        return super().permutation(n)\n        perm = list(range(n))")
    assert delegating != CELL
    problem = verdict("Generator.uniform", _namespace(delegating))
    assert "they call the framework's own Generator.permutation (through super(), tc.rand" in problem


def test_a_wrong_or_stub_cell_is_not_installed_and_the_warning_names_it(tmp_path):
    wrong = CELL.replace("return np.concatenate([radius * np.cos(theta), radius * np.sin(theta)], axis=1)",
                         "return np.concatenate([radius * np.sin(theta), radius * np.cos(theta)], axis=1)")
    assert wrong != CELL
    assert "sine and cosine are swapped" in verdict("Generator.normal", _namespace(wrong))
    _save(tmp_path, wrong)
    said = refusals(tmp_path)
    assert len(said) == 1 and said[0].startswith("your Generator (04_data.ipynb, cell ex04_10) is not installed")
    assert {attr: Generator.__dict__[attr] for attr in LEARNER_METHODS} == OWN
    nb = json.loads((ROOT / "exercises" / "04_data.ipynb").read_text())
    stub = "".join(next(c for c in nb["cells"]
                        if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "ex04_10")["source"])
    assert "not implemented yet" in verdict("Generator.uniform", _namespace(stub))
