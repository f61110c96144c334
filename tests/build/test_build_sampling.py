"""Chapter 10's sampling pieces as build-mode components (exercise 10.11): the learner's `Topk` op computes every
float tc.topk / x.topk without NaN (values, indices and gradient as PyTorch's), the learner's `multinomial` every
draw of one sample or without replacement (PyTorch's numbers from the same seed), the rest stays the reference's,
a wrong or stub cell is not installed, and the GPT milestone installs both."""
from __future__ import annotations

import json

import numpy as np
import torch

import tinygrad_course as tc
from tinygrad_course import build, seams
from tinygrad_course.build.checks import in_framework, verdict
from tinygrad_course.build.components import BY_NAME, for_chapter
from tinygrad_course.build.gpt_milestone import EARLIER
from tinygrad_course.build.package import save
from tinygrad_course.build.probes import PROBES

from build_helpers import OPS_IMPORTS, ROOT, learner_fixture, refusals, run_cell, solution_cell

SETUP = OPS_IMPORTS.replace("import numpy as np\n", "import numpy as np\nimport tinygrad_course as tc\n")
CELL = solution_cell("10_gpt.ipynb", "ex10_11")
NAMES = ("Topk", "multinomial")


def _namespace(source=CELL):
    return run_cell(SETUP + source, "<ex10_11>")


def _save(folder, source=CELL):
    for name in NAMES:
        save(folder, BY_NAME[name], SETUP + source, [], "10_gpt.ipynb, the cell defining Topk and multinomial")


learner = learner_fixture(_save)


def test_both_are_components_of_chapter_10_with_their_probe_and_the_gpt_installs_them():
    ours = [c for c in for_chapter("10") if c.exercise == "ex10_11"]
    assert [c.name for c in ours] == list(NAMES)
    for c in ours:
        assert c.notebook == "10_gpt.ipynb" and c.name in PROBES and c.name in EARLIER
    assert BY_NAME["Topk"].pure and not BY_NAME["multinomial"].pure  # a draw moves the generator: no second try


def test_the_solution_passes_its_check_and_agrees_with_the_reference_inside_the_framework():
    namespace = _namespace()
    assert verdict("Topk", namespace) is None
    for name in NAMES:
        assert in_framework(name, namespace[name]) is None, name


def test_use_learner_makes_topk_and_the_draws_the_learners_and_pytorchs(learner):
    seams.reset_calls()
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        data = rng.permutation(36).reshape(4, 9).astype(dtype) / 7  # distinct: PyTorch leaves the order of ties open
        tied = np.round(rng.standard_normal((4, 9)), 1).astype(dtype)
        for k, dim, largest in ((3, -1, True), (2, 0, False), (9, 1, True), (0, -1, True)):
            mine = tc.tensor(tied).topk(k, dim, largest)
            order = np.argsort(-tied if largest else tied, axis=dim, kind="stable")  # ties in their order
            assert mine.indices.tolist() == np.take(order, np.arange(k), axis=dim).tolist()
            x, tx = tc.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
            got, want = x.topk(k, dim, largest), tx.topk(k, dim, largest)
            assert np.array_equal(got.values.detach().numpy(), want.values.detach().numpy())
            assert got.indices.tolist() == want.indices.tolist() and got.indices.dtype == tc.int64
            weight = rng.standard_normal(tuple(want.values.shape)).astype(dtype)
            (got.values * tc.tensor(weight)).sum().backward()
            (want.values * torch.tensor(weight)).sum().backward()
            assert np.allclose(x.grad.numpy(), tx.grad.numpy()) and x.grad.numpy().dtype == dtype
            assert type(got).__name__ == "topk" and got.values.grad_fn.name() == "TopkBackward0"
    probs = torch.softmax(torch.tensor(rng.standard_normal((5, 13)), dtype=torch.float32), -1)
    for n, seed in ((1, 3), (4, 4), (13, 5)):
        got = tc.multinomial(tc.tensor(probs.numpy()), n, generator=tc.Generator().manual_seed(seed))
        assert got.tolist() == torch.multinomial(probs, n, generator=torch.Generator().manual_seed(seed)).tolist()
    row = torch.tensor([0.2, 0.0, 0.5, 0.3], dtype=torch.float64)
    torch.manual_seed(6)
    tc.manual_seed(6)
    assert tc.tensor(row.numpy()).multinomial(3).tolist() == row.multinomial(3).tolist()
    calls = {r.component: r.calls for r in build.status() if r.component in NAMES}
    assert all(calls[name] > 0 for name in NAMES), calls


def test_what_the_exercise_does_not_cover_stays_the_references(learner):
    seams.reset_calls()
    with_nan = tc.tensor([[1.0, float("nan"), 3.0]])
    assert with_nan.topk(2).indices.tolist() == torch.tensor([[1.0, float("nan"), 3.0]]).topk(2).indices.tolist()
    assert tc.tensor([3, 1, 2]).topk(2).values.tolist() == [3, 2]  # integers
    probs = torch.tensor([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])
    got = tc.multinomial(tc.tensor(probs.numpy()), 6, replacement=True, generator=tc.Generator().manual_seed(8))
    assert got.tolist() == torch.multinomial(probs, 6, True, generator=torch.Generator().manual_seed(8)).tolist()
    assert not {r.component: r.calls for r in build.status() if r.component in NAMES}.get("Topk")


def test_a_wrong_or_stub_cell_is_not_installed_and_the_warning_names_it(tmp_path):
    wrong = CELL.replace('np.argsort(-x if largest else x, axis=dim, kind="stable")',
                         'np.argsort(x, axis=dim, kind="stable")')
    assert wrong != CELL
    assert "these are the 3 smallest" in verdict("Topk", _namespace(wrong))
    _save(tmp_path, wrong)
    said = refusals(tmp_path)
    assert said and all(s.startswith("your ") and "10_gpt.ipynb, cell ex10_11" in s for s in said), said
    assert "Topk" not in seams.ACTIVE and "multinomial" not in seams.ACTIVE
    nb = json.loads((ROOT / "exercises" / "10_gpt.ipynb").read_text())
    stub = "".join(next(c for c in nb["cells"]
                        if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "ex10_11")["source"])
    assert "not implemented yet" in verdict("Topk", _namespace(stub))
