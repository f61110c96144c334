"""Build mode tells the truth: a stub or a component that fails its check is never installed (and says so,
naming its cell and the check), a file edited on disk is checked again, the graded check and the
installation check are one, milestones name the culprit, and the learner's optimizer state is the
framework's (issue 26, breakages 1-4, 5, 6 and 8)."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tinygrad_course as tc
from tinygrad_course import build, seams
from tinygrad_course.build.components import BY_NAME, NOTEBOOKS
from tinygrad_course.build.milestone_runs import predict, resume_run, uninterrupted_run
from tinygrad_course.build.notebooks import extract
from tinygrad_course.build.package import save
from tinygrad_course.build.runs import MILESTONES, _cpu_seconds_of_children
from tinygrad_course.grading import CheckFailed, check

from build_helpers import OPS_IMPORTS, solution_cell

ROOT = Path(__file__).resolve().parents[2]

BINARY_CELL = solution_cell("02_autograd.ipynb", "ex02_1")  # Add, Sub, Mul, Div, Pow
UNARY_CELL = solution_cell("02_autograd.ipynb", "ex02_2")  # Neg, Exp, Log, Tanh, Relu, Sigmoid


SGD_FLIPPED = "import tinygrad_course as tc\n\n\n" + solution_cell("04b_optimizers.ipynb", "ex04b_1") + "\n\n\n" + solution_cell(
    "04b_optimizers.ipynb", "ex04b_2").replace(
    "p.add_(g, alpha=-lr)", "p.add_(g, alpha=lr)")


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "tinygrad_course.build", *args], capture_output=True, text=True,
                          timeout=600, cwd=ROOT)


def _replaced(tmp_path, notebook, grade_id, old, new):
    for nb in (ROOT / "solutions").glob("*.ipynb"):
        shutil.copy(nb, tmp_path / nb.name)
    path = tmp_path / notebook
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
            src = "".join(cell["source"])
            assert old in src
            cell["source"] = src.replace(old, new)
    path.write_text(json.dumps(nb))
    return tmp_path


def _shell(tmp_path, chapter):
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_cell("import numpy as np\nimport tinygrad_course as tc\nfrom tinygrad_course import build")
    shell.run_cell(f"build.record({chapter!r}, folder={str(tmp_path)!r}, notebook={NOTEBOOKS[chapter]!r})")
    return shell


def _close(shell):
    from IPython.core.interactiveshell import InteractiveShell

    shell.events.callbacks["post_run_cell"].clear()
    InteractiveShell.clear_instance()


def test_breakage_1_a_stub_is_not_saved_and_a_saved_stub_is_not_installed(tmp_path, capsys):
    shell = _shell(tmp_path, "06")
    try:
        shell.run_cell("def momentum_update(p, g, buf, lr, momentum):\n"
                       "    raise NotImplementedError('Exercise 06.3: write momentum_update')\n")
    finally:
        _close(shell)
    out = capsys.readouterr().out
    assert "momentum_update is still the exercise's stub" in out and "reference" in out
    assert not (tmp_path / "ch06_momentum_update.py").exists()
    # a stub that reached the package anyway (an older version saved it): checked, refused, named
    save(tmp_path, BY_NAME["momentum_update"], "def momentum_update(p, g, buf, lr, momentum):\n"
         "    raise NotImplementedError('Exercise 06.3')\n\n\ndef momentum_kernel_body():\n"
         "    raise NotImplementedError('Exercise 06.3')\n", [], "06_gpu.ipynb, the cell defining momentum_update")
    with pytest.warns(UserWarning, match=r"your momentum_update \(06_gpu.ipynb, cell ex06_3\) is not installed: "
                                         r"its check failed: not implemented yet"):
        table = build.use_learner(tmp_path, quiet=True)
    row = next(r for r in table if r.component == "momentum_update")
    assert (row.source, row.check) == ("reference", "fail") and "ex06_3" in row.note
    w = tc.tensor([1.0, 2.0], requires_grad=True)
    opt = tc.optim.SGD([w], lr=0.1, momentum=0.9, weight_decay=1e-4)
    (w * w).sum().backward()
    opt.step()  # the reference's heavy-ball step: no NotImplementedError
    assert seams.installed() == {}


def test_breakage_2_a_failing_component_is_not_installed_and_an_edited_file_is_checked_again(tmp_path):
    save(tmp_path, BY_NAME["SGD.step"], SGD_FLIPPED, [], "04b_optimizers.ipynb, the cell defining SGD")
    with pytest.warns(UserWarning, match=r"your SGD.step \(04b_optimizers.ipynb, cell ex04b_2\) is not installed: its "
                                         r"check failed: .*parameters after step 1"):
        build.use_learner(tmp_path, quiet=True)
    assert "SGD.step" not in seams.installed()
    # a component that passed, then edited by hand on disk: checked again before it runs
    tanh = BY_NAME["Tanh"]
    shell = _shell(tmp_path, "02")
    try:
        shell.run_cell(OPS_IMPORTS + UNARY_CELL)
    finally:
        _close(shell)
    with pytest.warns(UserWarning):  # SGD.step still fails
        table = build.use_learner(tmp_path, quiet=True)
    assert next(r for r in table if r.component == "Tanh").source == "learner"
    path = tmp_path / "ch02_tanh.py"
    path.write_text(path.read_text().replace("grad * (1 - out * out)", "grad * (1 - out)"))
    with pytest.warns(UserWarning, match=r"your Tanh \(02_autograd.ipynb, cell ex02_2\) is not installed"):
        table = build.use_learner(tmp_path, quiet=True)
    row = next(r for r in table if r.component == tanh.name)
    assert (row.source, row.check) == ("reference", "fail")


def test_breakage_3_a_wrong_mul_fails_grading_and_installation_and_nothing_repairs_an_op(tmp_path, capsys):
    wrong = OPS_IMPORTS + BINARY_CELL.replace("return grad * b if need_a else None, grad * a if need_b else None",
                                               "return grad * a, grad * b")
    namespace = {}
    exec(wrong, namespace)
    with pytest.raises(CheckFailed, match="0/5 points"):
        check("02.1", *(namespace[n] for n in ("Add", "Sub", "Mul", "Div", "Pow")))
    shell = _shell(tmp_path, "02")
    try:
        shell.run_cell(wrong)
    finally:
        _close(shell)
    assert "check failed" in capsys.readouterr().out
    with pytest.warns(UserWarning, match=r"your Mul \(02_autograd.ipynb, cell ex02_1\) is not installed"):
        build.use_learner(tmp_path, quiet=True)
    assert "Mul" not in seams.installed()
    # nothing repairs a learner's op installed by hand: a gradient that does not fit its input is an error
    seams.install("Mul", BY_NAME["Mul"].adapt(namespace["Mul"]))
    a, b = tc.randn(4, 3, requires_grad=True), tc.randn(3, requires_grad=True)
    (a * b).sum().backward()  # swapped: b's gradient has a's shape (4, 3), summed over rows by the engine
    assert np.allclose(b.grad.numpy(), b.detach().numpy() * 4)  # the learner's (wrong) math, as written
    summed = {}
    exec(OPS_IMPORTS + BINARY_CELL.replace("return grad * b if need_a else None, grad * a if need_b else None",
                                                 "return (grad * b).sum(0), grad * a"), summed)
    seams.install("Mul", BY_NAME["Mul"].adapt(summed["Mul"]))
    p, q = tc.randn(4, 3, requires_grad=True), tc.randn(4, 1, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"your Mul.backward returned a gradient of shape \(3,\) for input 0 "
                                           r"of shape \(4, 3\)"):
        (p * q).sum().backward()


def test_breakage_3_the_command_line_refuses_it_too(tmp_path):
    folder = _replaced(tmp_path, "02_autograd.ipynb", "ex02_1", "return grad * b if need_a else None, grad * a if need_b",
                       "return grad * a if need_a else None, grad * b if need_b")
    rows = {r["component"]: r for r in json.loads(_cli("status", str(folder), "--json").stdout)}
    assert (rows["Mul"]["source"], rows["Mul"]["check"]) == ("reference", "fail")


def test_breakage_4_the_autograd_milestone_names_the_wrong_component_and_its_cell(tmp_path):
    folder = _replaced(tmp_path, "02_autograd.ipynb", "ex02_2", "grad * (1 - out * out)", "grad * (1 - out)")
    run = _cli("milestone", "autograd", str(folder))
    assert run.returncode == 1
    assert "your Tanh (02_autograd.ipynb, cell ex02_2) fails its check" in run.stdout, run.stdout


def test_breakage_5_the_lab_needs_only_chapters_01_to_05b_and_reads_data_through_the_loader():
    needed = MILESTONES["lab"][2]
    assert {BY_NAME[n].chapter for n in needed} <= {"01", "01b", "02", "02b", "02c", "02d", "03", "03b", "04", "04b", "05", "05b"}

    class NumpyFeatures(tc.utils.data.Dataset):  # keeps NumPy features; __getitem__ gives tensors, as asked
        def __init__(self, x, y):
            self.features, self.targets = x, y

        def __len__(self):
            return len(self.targets)

        def __getitem__(self, i):
            return tc.tensor(self.features[i], dtype=tc.float32), self.targets[i]

    x = np.random.default_rng(0).standard_normal((10, 4))
    loader = tc.utils.data.DataLoader(NumpyFeatures(x, list(range(10))), batch_size=4)
    model = tc.nn.Linear(4, 3)
    assert predict(model, loader).shape == (10,)


def test_breakage_6_the_learners_optimizer_state_is_in_state_dict_so_resume_is_bit_identical(tmp_path):
    package = tmp_path / "mytorch"
    extract(ROOT / "solutions", package)
    for path in package.glob("*.py"):
        if path.name not in ("__init__.py", "ch04b_optimizer.py", "ch04b_sgd.py", "ch04b_adam.py", "ch04b_lrscheduler.py"):
            path.unlink()
    table = build.use_learner(package, quiet=True)
    assert {r.component for r in table if r.source == "learner"} == {"Optimizer", "SGD.step", "Adam.step",
                                                                       "LRScheduler"}
    resumed, straight = resume_run(), uninterrupted_run()  # both on the learner's optimizer, base and scheduler
    assert all(seams.calls()[name] > 0 for name in ("Optimizer", "SGD.step", "LRScheduler")), seams.calls()
    for key in straight:
        assert np.array_equal(resumed[key], straight[key]), key
    w = tc.tensor([1.0, 2.0], requires_grad=True)
    opt = tc.optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    opt.step()
    assert set(opt.state_dict()["state"][0]) >= {"exp_avg", "exp_avg_sq", "step"}


def test_breakage_8_the_child_is_judged_on_its_cpu_time_not_the_wall_clock():
    before = _cpu_seconds_of_children()
    subprocess.run([sys.executable, "-c", "import time; time.sleep(1.5)"], check=True)
    assert _cpu_seconds_of_children() - before < 1.0  # waiting (or a loaded machine) is not the child's time


def test_the_labs_cnn_runs_on_the_learners_convolution_and_pooling(tmp_path):
    package = tmp_path / "mytorch"
    extract(ROOT / "solutions", package)
    keep = {"__init__.py", "ch05b_conv2dfunction.py", "ch05b_maxpool2dfunction.py"}
    for path in package.glob("*.py"):
        if path.name not in keep:
            path.unlink()

    def cnn_grads():
        tc.manual_seed(0)
        nn = tc.nn
        model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 6, 3, padding=1), nn.ReLU(),
                              nn.MaxPool2d(2), nn.Flatten(), nn.Linear(6 * 4 * 4, 10))
        x = tc.randn(5, 1, 8, 8)
        tc.nn.functional.cross_entropy(model(x), tc.arange(5)).backward()
        return [p.grad.numpy() for p in model.parameters()]

    expected = cnn_grads()
    table = build.use_learner(package, quiet=True)
    assert {r.component for r in table if r.source == "learner"} == {"Conv2d.forward", "MaxPool2d.forward"}
    got = cnn_grads()
    assert seams.calls()["Conv2d.forward"] == 2 and seams.calls()["MaxPool2d.forward"] == 1
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-6)


@pytest.mark.slow
def test_the_cnn_milestone_trains_on_the_learners_convolution_and_names_a_planted_bug(tmp_path):
    ok = _cli("milestone", "cnn", str(ROOT / "solutions"))
    assert ok.returncode == 0 and "passed" in ok.stdout and re.search(r"Conv2d\.forward +learner", ok.stdout), ok.stdout
    stub = _cli("milestone", "cnn", str(ROOT / "exercises"))
    assert stub.returncode == 1 and "missing: Conv2d.forward (05b_lab.ipynb, cell ex05b_7)" in stub.stdout
    folder = _replaced(tmp_path, "05b_lab.ipynb", "ex05b_7", "+= \\\n", "= \\\n")  # overlapping windows overwrite
    bad = _cli("milestone", "cnn", str(folder))
    assert bad.returncode == 1, bad.stdout
    assert "your Conv2d.forward (05b_lab.ipynb, cell ex05b_7) fails its check: x.grad" in bad.stdout, bad.stdout


def test_a_pass_recorded_against_an_earlier_check_is_checked_again(tmp_path):
    """A component saved and passed under an earlier version of the course (its check has changed since, e.g.
    a new argument of its contract) is checked again rather than installed on the old verdict."""
    wrong = SGD_FLIPPED  # fails today's check
    save(tmp_path, BY_NAME["SGD.step"], wrong, [], "04b_optimizers.ipynb, the cell defining SGD")
    manifest_path = tmp_path / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    entry = manifest["components"]["SGD.step"]
    entry["check"], entry["detail"] = "pass", ""
    entry["sha256"] = build.checks.digest(tmp_path / entry["file"])  # the file's own hash: what an old course stored
    manifest_path.write_text(json.dumps(manifest))
    with pytest.warns(UserWarning, match=r"your SGD.step .* is not installed: its check failed"):
        build.use_learner(tmp_path, quiet=True)
    assert "SGD.step" not in seams.installed()
    # a pass recorded against today's check is trusted without running it again
    entry["sha256"] = build.checks.digest(tmp_path / entry["file"], "SGD.step")
    manifest_path.write_text(json.dumps(manifest))
    build.use_learner(tmp_path, quiet=True)
    assert "SGD.step" in seams.installed()


def test_a_component_left_out_during_a_milestone_run_fails_it_naming_its_cell(monkeypatch):
    """A component that passed its check but raised during the run was left out (the reference ran the rest):
    the run is not the learner's, so the milestone fails naming the component, even though it was called."""
    from tinygrad_course.build import session
    from tinygrad_course.build.__main__ import left_during_run

    monkeypatch.setattr(session, "_state", {"folder": None, "loaded": [], "refused": {}})
    pick = session._guarded(lambda scores, labels: 1 / 0, "pick", "01_tensors.ipynb", lambda s, l: "reference")
    with pytest.warns(UserWarning, match="your pick .* raised ZeroDivisionError"):
        assert pick(None, None) == "reference"
    report = {"left_out": session.left_out()}
    assert left_during_run(report, ("pick", "Mul")) == (
        "your pick (01_tensors.ipynb, cell ex01_7) raised ZeroDivisionError: division by zero, and was left out for "
        "the rest of the run")
    assert left_during_run(report, ("Mul",)) == ""
