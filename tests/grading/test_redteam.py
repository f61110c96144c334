"""The red-team class: hostile and honest submissions of assignment 05, graded in one batch as the
instructor guide says, each with its fair grade, and nothing outside the sandbox touched."""
import csv
import os
import shutil
import socket
import threading
from pathlib import Path

import pytest

from tinygrad_course.cli import main
from tinygrad_course.grading.sandbox import landlock

from .redteam.build import SOLUTION, place
from .redteam.honest import bad_file_cases, honest_cases
from .redteam.hostile import hostile_cases

pytestmark = [pytest.mark.slow, pytest.mark.skipif(landlock.abi_version()[0] < 4, reason="the default isolation needs Landlock")]
CASES = {c.name: c for c in hostile_cases() + bad_file_cases() + honest_cases()}


class _Listener:
    """A TCP port on localhost that records whatever a submission manages to send it."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port, self.received, self.stop = self.sock.getsockname()[1], [], False
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
                self.received.append(conn.recv(100))
            except OSError:
                continue


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("redteam")
    solutions, submitted = root / "solutions", root / "submitted"
    solutions.mkdir()
    shutil.copy(SOLUTION, solutions / SOLUTION.name)
    submitted.mkdir()
    listener = _Listener()
    victim = root / "instructor_notes.txt"
    victim.write_text("keep me")
    paths = dict(SOLUTION=str(solutions / SOLUTION.name), SOLUTIONS=str(solutions), VICTIM=str(victim),
                 OTHER=str(submitted / "honest_correct" / "05_training.ipynb"), CSV=str(root / "grades.csv"),
                 CACHE=str(root / ".grades_cache"), PORT=listener.port)
    constants = f"PATHS = {paths!r}\n"
    for case in sorted(CASES.values(), key=lambda c: c.layout != "folder"):
        place(case, submitted, paths, constants)
    watched = [Path(paths["SOLUTION"]), victim, Path(paths["OTHER"])]
    before = {p: p.read_bytes() for p in watched}
    out = root / "grades.csv"
    code = main(["grade", str(submitted), "--assignment", "05", "--out", str(out), "--solutions", str(solutions),
                 "--timeout", "120", "--cell-timeout", "6", "--memory-mb", "1500", "--jobs", "2"])
    listener.stop = True
    rows = {row["student"]: row for row in csv.DictReader(out.open(encoding="utf-8"))}
    feedback = {p.stem: p.read_text(encoding="utf-8") for p in (root / "grades_feedback").glob("*.md")}
    return dict(code=code, rows=rows, feedback=feedback, before=before, listener=listener, root=root, out=out)


def _row(graded, name):
    rows = graded["rows"]
    return rows.get(name) or rows["'" + name]


def test_the_class_is_big_enough():
    hostile = [c for c in CASES.values() if c.hostile]
    assert len(hostile) >= 60 and len(CASES) - len(hostile) >= 15


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_submission_gets_its_fair_grade(graded, name):
    case, row = CASES[name], _row(graded, name)
    got = {e: float(row[e]) for e in case.fair()}
    assert got == {e: float(p) for e, p in case.fair().items()}, (row, [t for k, t in graded["feedback"].items() if k == name])
    assert float(row["total"]) == sum(case.fair().values())
    assert case.problem in row["problem"]
    assert row["isolation"].startswith("kernel: Landlock")


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c.feedback_has or c.feedback_lacks))
def test_feedback_holds_no_forged_or_hidden_text(graded, name):
    text = graded["feedback"][name]
    assert all(phrase in text for phrase in CASES[name].feedback_has)
    assert not any(phrase in text for phrase in CASES[name].feedback_lacks)
    assert [line for line in text.splitlines() if line.startswith("**Total")] == [text.splitlines()[2]]


def test_the_batch_finished_and_wrote_every_row(graded):
    assert graded["code"] == 0
    assert len(graded["rows"]) == len(CASES)


def test_nothing_outside_the_sandboxes_was_read_written_or_contacted(graded):
    for path, content in graded["before"].items():
        assert path.read_bytes() == content, path
    assert not Path("/tmp/redteam-was-here").exists()
    assert graded["listener"].received == []
    assert not (graded["root"] / "instructor_notes.txt.moved").exists()


def test_no_process_of_any_submission_outlived_the_batch(graded):
    leftovers = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if b"417.5" in Path(f"/proc/{pid}/cmdline").read_bytes():
                leftovers.append(pid)
        except OSError:
            pass
    assert leftovers == []


def test_csv_cells_cannot_run_as_formulas(graded):
    text = graded["out"].read_text(encoding="utf-8")
    assert "'=SUM(1;2)" in text
    for row in csv.reader(text.splitlines()[1:]):
        assert not row[0].startswith(("=", "+", "-", "@"))


def test_feedback_files_keep_unicode_and_never_collide(graded):
    names = set(graded["feedback"])
    assert "李雷" in names
    assert {"Ana B", "Ana_B"} <= names and any(n.startswith("ana b~") for n in names)
    assert len(names) == len(CASES)
