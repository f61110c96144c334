"""The batch grader on honest, broken and malicious submissions, graded in one batch."""
import csv
import json
import shutil
from pathlib import Path

import pytest

from tinygrad_course.cli import main
import nbformat

from tinygrad_course.grading import batch
from tinygrad_course.grading.notebook_files import dumps, read, reads
from tinygrad_course.grading.sandbox.isolation import IsolationUnavailable, choose
from tinygrad_course.grading.sandbox.plan import build_plan

from .fixtures.submissions import SUBMISSIONS

pytestmark = pytest.mark.slow
# where the kernel has no Landlock these run with the audit hook only, asked for by name


def _without_an_os_sandbox() -> list[str]:
    """The flag these tests need where neither Landlock nor bubblewrap runs (none where `auto` finds one)."""
    try:
        choose("auto")
    except IsolationUnavailable:
        return ["--unsafe-isolation", "unsafe-audit-hook-only"]
    return []


WITHOUT_AN_OS_SANDBOX = _without_an_os_sandbox()


def _code_cell(source, index):
    return nbformat.v4.new_code_cell(source, id=f"added-{index}")


def _make_submission(released_nb, spec, constants):
    nb = reads(dumps(released_nb))
    by_id = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells}
    for grade_id, source in spec["cells"].items():
        by_id[grade_id].source = constants + source
    if spec.get("replace_locked"):
        by_id["setup"].source = "check = lambda *a, **k: None"
        nb.cells = [c for c in nb.cells if not c.metadata.get("nbgrader", {}).get("grade")]
    nb.cells = ([_code_cell(s, i) for i, s in enumerate(spec.get("extra_first", []))] + nb.cells
                + [_code_cell(s, 100 + i) for i, s in enumerate(spec.get("extra", []))])
    return dumps(nb)


@pytest.fixture(scope="module")
def graded(tmp_path_factory, request):
    root = tmp_path_factory.mktemp("grading")
    course = Path(__file__).parent / "fixtures" / "course"
    solutions = root / "solutions"
    shutil.copytree(course / "solutions", solutions)
    submissions = root / "submitted"
    released_nb = read(course / "exercises" / "99_demo.ipynb")
    victims = [str(solutions / "99_demo.ipynb"), str(submissions / "correct" / "99_demo.ipynb"), str(root / "grades.csv")]
    constants = f"TARGETS = {victims!r}\nSOLUTION = {str(solutions / '99_demo.ipynb')!r}\n"
    for name, spec in SUBMISSIONS.items():
        folder = submissions / name
        folder.mkdir(parents=True)
        (folder / "99_demo.ipynb").write_text(_make_submission(released_nb, spec, constants))
    (submissions / "not_a_notebook").mkdir()
    (submissions / "not_a_notebook" / "99_demo.ipynb").write_text("{ this is not json")
    (submissions / "nothing_submitted").mkdir()
    originals = {p: Path(p).read_bytes() for p in victims if Path(p).exists()}
    out = root / "grades.csv"
    args = ["grade", str(submissions), "--assignment", "99", "--out", str(out), "--solutions", str(solutions),
            "--timeout", "30", "--cell-timeout", "3", "--memory-mb", "1024", "--jobs", "2", *WITHOUT_AN_OS_SANDBOX]
    assert main(args) == 0
    rows = {row["student"]: row for row in csv.DictReader(out.open())}
    return dict(root=root, out=out, rows=rows, args=args, originals=originals,
                feedback={p.stem: p.read_text() for p in (root / "grades_feedback").glob("*.md")})


@pytest.mark.parametrize("name", sorted(SUBMISSIONS))
def test_each_submission_gets_exactly_its_fair_grade(graded, name):
    spec, row = SUBMISSIONS[name], graded["rows"][name]
    assert {e: float(row[e]) for e in spec["expected"]} == {e: float(p) for e, p in spec["expected"].items()}, graded["feedback"][name]
    assert float(row["total"]) == sum(spec["expected"].values())
    if "problem" in spec:
        assert spec["problem"] in row["problem"]
    for exercise, phrase in spec.get("reason", {}).items():
        assert phrase in graded["feedback"][name]
    if "note" in spec:
        assert spec["note"] in graded["feedback"][name]


def test_unreadable_and_missing_submissions_get_zero_with_a_reason(graded):
    assert graded["rows"]["not_a_notebook"]["total"] == "0"
    assert "not a readable notebook" in graded["rows"]["not_a_notebook"]["problem"]
    assert "no notebook" in graded["rows"]["nothing_submitted"]["problem"]


def test_no_submission_can_change_files_outside_its_sandbox(graded):
    for path, content in graded["originals"].items():
        assert Path(path).read_bytes() == content, f"{path} was modified"


def test_feedback_explains_each_lost_point(graded):
    text = graded["feedback"]["partial"]
    assert "**Total: 2 / 6 points**" in text and "### Exercise 99.2" in text and "NotImplementedError" in text


def test_csv_has_one_row_per_student_and_the_exercise_columns(graded):
    header = graded["out"].read_text().splitlines()[0]
    assert header == "student,99.1,99.2,99.3,total,max,problem,isolation"
    assert len(graded["rows"]) == len(SUBMISSIONS) + 2


def test_hidden_tests_expected_values_never_reach_the_worker(graded):
    solution_path = graded["root"] / "solutions" / "99_demo.ipynb"
    plan = build_plan(read(solution_path), json.loads(solution_path.read_text()))
    sent_to_worker = "".join(s.source for s in plan.steps)
    assert "broadcast_shape((2, 1, 3), (4, 1))" in sent_to_worker  # the call whose result is observed...
    assert "expect_" not in sent_to_worker and "BEGIN HIDDEN" not in sent_to_worker  # ...not the comparison
    assert "broadcast_shape((2, 1, 3), (4, 1)), (2, 4, 3)" not in sent_to_worker  # nor the expected value


def test_rerun_reuses_cached_results_for_unchanged_submissions(graded, monkeypatch):
    calls = []
    real = batch.run_plan
    monkeypatch.setattr(batch, "run_plan", lambda steps, **k: calls.append(len(steps)) or real(steps, **k))
    changed = graded["root"] / "submitted" / "stub" / "99_demo.ipynb"
    nb = json.loads(changed.read_text())
    nb["metadata"]["edited"] = True
    changed.write_text(json.dumps(nb))
    assert main(graded["args"]) == 0
    assert len(calls) == 2  # the solution's reference run and the one changed submission
