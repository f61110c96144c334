"""The red-team class: hostile and honest submissions of assignment 05, graded in one batch as the
instructor guide says, each with its fair grade, and nothing outside the sandbox touched.

The class is graded once per OS sandbox this machine can run: `--isolation kernel` (Landlock ABI 4) and
`--isolation bwrap` (bubblewrap); a backend that cannot run here is reported with its reason. Where
neither can, the class runs with `--unsafe-isolation unsafe-audit-hook-only`, where the same grades must
hold except for the cases marked `kernel_only` (attacks that only an OS sandbox stops), which are skipped
with that reason."""
import csv
import os
import shutil
import socket
import threading
from pathlib import Path

import pytest

from tinygrad_course.cli import main
from tinygrad_course.grading.sandbox.isolation import IsolationUnavailable, choose

from .redteam.build import SOLUTION, place
from .redteam.honest import bad_file_cases, honest_cases
from .redteam.hostile import hostile_cases

pytestmark = pytest.mark.slow


def _unavailable(backend: str) -> str:
    try:
        choose(backend)
    except IsolationUnavailable as exc:
        return str(exc)
    return ""


UNAVAILABLE = {backend: _unavailable(backend) for backend in ("kernel", "bwrap")}
BACKENDS = [b for b, why in UNAVAILABLE.items() if not why] or ["unsafe-audit-hook-only"]
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


@pytest.fixture(scope="module", params=BACKENDS)
def graded(request, tmp_path_factory):
    backend = request.param
    isolation_args = ["--unsafe-isolation", backend] if backend.startswith("unsafe") else ["--isolation", backend]
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
    # limits in wall-clock seconds, generous for a busy machine (05.1 trains for 80 steps); the hanging cases
    # each cost one --cell-timeout
    code = main(["grade", str(submitted), "--assignment", "05", "--out", str(out), "--solutions", str(solutions),
                 "--timeout", "300", "--cell-timeout", "15", "--memory-mb", "1500", "--jobs", "2", *isolation_args])
    listener.stop = True
    rows = {row["student"]: row for row in csv.DictReader(out.open(encoding="utf-8"))}
    feedback = {p.stem: p.read_text(encoding="utf-8") for p in (root / "grades_feedback").glob("*.md")}
    return dict(code=code, rows=rows, feedback=feedback, before=before, listener=listener, root=root, out=out,
                backend=backend)


def _row(graded, name):
    rows = graded["rows"]
    return rows.get(name) or rows["'" + name]


def test_the_class_is_big_enough():
    hostile = [c for c in CASES.values() if c.hostile]
    assert len(hostile) >= 60 and len(CASES) - len(hostile) >= 15


# Each kind of attack in the issue that asked for this grader (#19, "Why") and the cases that replay it; the
# ones that need signals or weaker isolation are tests of their own, named here too.
ISSUE_CASES = {
    "report function patched": ["patch_emitter_drop_errors", "swap_expected_values"],
    "json.dumps patched": ["patch_json_dumps"],
    "per-run signing key read": ["reads_signing_key", "reads_proc_of_grader"],
    "tamper detector disabled": ["shortcut_tripwire_disabled", "patch_judge_module"],
    "exercise registry edited": ["patch_registry"],
    "__eq__ / __array__ lie": ["lying_eq_object", "lying_array_object", "ndarray_subclass_lies", "object_array_result"],
    "hidden tests through builtins": ["hidden_tests_via_builtins", "hidden_tests_via_gc"],
    "forged done / Total lines": ["forge_total_lines", "forge_channel_spray", "forge_spray_inside_test"],
    "shortcut through an alias": ["shortcut_alias_in_other_cell", "shortcut_module_alias", "shortcut_local_alias"],
    "local names like the reference": ["honest_local_names_like_references"],
    "symlink to the solutions, a folder, another student": ["symlink_to_solution", "symlink_folder_to_solutions",
                                                             "symlink_to_other_student"],
    "FIFO": ["fifo_notebook"],
    "/dev/zero": ["device_notebook", "symlink_to_dev_zero"],
    "5 GB sparse file": ["sparse_5_gib"],
    "malformed nbgrader metadata": ["malformed_metadata", "grade_id_metadata_wrong_types"],
    "200 MiB on disk": ["fills_disk"],
    "20 children via fork_exec + setsid": ["forks_setsid_children"],
    "reads solutions, writes others' and instructor's files": ["reads_solution", "writes_other_student", "writes_instructor_file"],
    "rewrites grades.csv / cache": ["writes_grades_csv", "writes_cache"],
    "-Copy1 notebook": ["honest_copy1_only", "honest_with_copy1"],
    "duplicated solution cell": ["honest_duplicated_cell"],
    "names mapping to one file name": ["Ana B", "Ana_B", "ana b"],
    "Unicode name": ["李雷"],
    "SIGALRM blocked or ctypes crash in an ungraded cell": ["honest_blocks_alarm_in_ungraded_cell", "honest_ctypes_in_ungraded_cell",
                                                            "honest_crash_in_ungraded_cell"],
    "name starting with =": ["=SUM(1;2)+cmd|'calc'!A0"],
    # issue 30
    "honest notebook of 50 MiB (one large output)": ["honest_50_mib_of_output"],
    "the grader's Landlock-failure line and exit status 70": ["forges_sandbox_failure"],
}
# test_grader_stops.py: test_a_signal_stops_the_batch_promptly_and_keeps_the_previous_csv (SIGTERM, Ctrl-C),
# test_children_that_escape_the_session_die_with_their_worker (a child rewriting grades.csv after its worker);
# test_grader_landlock.py: test_without_any_isolation_the_same_attacks_succeed_and_the_csv_says_so;
# test_grader_parts.py: test_local_names_like_the_reference_accuse_no_one (`linear`, `dropout` in assignment 03).


def test_every_attack_of_the_issue_is_replayed():
    assert [case for cases in ISSUE_CASES.values() for case in cases if case not in CASES] == []


def test_every_os_sandbox_runs_here():
    """Both backends run on this machine (Linux 6.7+ with bubblewrap installed); elsewhere, why not."""
    for backend, why in UNAVAILABLE.items():
        if why:
            pytest.skip(f"the red-team class is not graded with --isolation {backend}: {why}")


def _needs_the_kernel(graded, name):
    if CASES[name].kernel_only and graded["backend"].startswith("unsafe"):
        pytest.skip(f"only an OS sandbox stops this; neither runs here ({'; '.join(UNAVAILABLE.values())})")


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_submission_gets_its_fair_grade(graded, name):
    _needs_the_kernel(graded, name)
    case, row = CASES[name], _row(graded, name)
    got = {e: float(row[e]) for e in case.fair()}
    feedback = "\n".join(t for k, t in graded["feedback"].items() if k == name)
    assert got == {e: float(p) for e, p in case.fair().items()}, f"{row}\n{feedback}"
    assert float(row["total"]) == sum(case.fair().values())
    assert case.problem in row["problem"]
    assert row["isolation"].startswith(graded["backend"] + ": ")


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c.feedback_has or c.feedback_lacks))
def test_feedback_holds_no_forged_or_hidden_text(graded, name):
    _needs_the_kernel(graded, name)
    text = graded["feedback"][name]
    assert all(phrase in text for phrase in CASES[name].feedback_has)
    assert not any(phrase in text for phrase in CASES[name].feedback_lacks)
    assert [line for line in text.splitlines() if line.startswith("**Total")] == [text.splitlines()[2]]


def test_a_notebook_cannot_blame_the_graders_sandbox(graded):
    """It printed the grader's Landlock-failure line, sent it on every fd and exited with status 70."""
    row = _row(graded, "forges_sandbox_failure")
    assert "exited early (exit code 70)" in row["problem"] and "sandbox" not in row["problem"]


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
