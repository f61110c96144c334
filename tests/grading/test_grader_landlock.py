"""The grader's operating-system layer (Linux Landlock) on its own, and the isolation levels.

The malicious submissions here run with the audit hook switched off (an Isolation built by the test, as if
the submission had found a way around the hook): only the kernel stands between them and the solutions,
the file system outside their sandbox and the network. A control batch with no isolation at all shows that
the same attacks do succeed without it.
"""
import csv
import shutil
import socket
import sys
from pathlib import Path

import pytest

from tinygrad_course.cli import main
from tinygrad_course.grading.batch import GradeOptions, grade_all
from tinygrad_course.grading.notebook_files import read
from tinygrad_course.grading.sandbox import containment, landlock
from tinygrad_course.grading.sandbox.isolation import Isolation, IsolationUnavailable, choose
from tinygrad_course.grading.sandbox.runner import Limits, _describe_exit

from .fixtures.submissions import CORRECT
from .test_batch_grader import _make_submission

ABI, WHY_NOT = landlock.abi_version()
needs_landlock = pytest.mark.skipif(ABI < 1, reason=f"Landlock is not available here: {WHY_NOT}")
needs_landlock_net = pytest.mark.skipif(ABI < 4, reason=f"Landlock TCP rules need ABI 4, this kernel has {ABI} {WHY_NOT}")
FIXTURE = Path(__file__).parent / "fixtures" / "course"
LIMITS = Limits(timeout=30, cell_timeout=10, memory_mb=1024)


def _cheat(exercise, function, attack):
    """The correct solution of `exercise`, wrapped so that `function` first runs `attack`."""
    return f"{CORRECT[exercise]}\n_honest = {function}\ndef {function}(*args):\n    {attack}\n    return _honest(*args)\n"


ATTACKS = {
    "honest": ({}, {"99.1": 2, "99.2": 3, "99.3": 1}),
    "reads_solutions": ({"ex99_1": _cheat("ex99_1", "broadcast_shape", "assert 'HIDDEN' in open(SOLUTION).read()")},
                        {"99.1": 0, "99.2": 3, "99.3": 1}),
    "reads_other_submission": ({"ex99_3": _cheat("ex99_3", "accumulate", "open(OTHER).read()")},
                               {"99.1": 2, "99.2": 3, "99.3": 0}),
    "writes_outside": ({"ex99_1": _cheat("ex99_1", "broadcast_shape", "open(OUTSIDE, 'w').write('pwned')"),
                        "ex99_2": _cheat("ex99_2", "add_backward", "os = __import__('os'); os.path.exists(VICTIM) and os.rename(VICTIM, VICTIM + '.moved')")},
                       {"99.1": 0, "99.2": 0, "99.3": 1}),
    "connects_tcp": ({"ex99_1": _cheat("ex99_1", "broadcast_shape",
                                       "__import__('socket').create_connection(('127.0.0.1', PORT), timeout=5).sendall(b'leak')")},
                     {"99.1": 0, "99.2": 3, "99.3": 1}),
}
ATTACKED = {"reads_solutions": ["99.1"], "reads_other_submission": ["99.3"], "writes_outside": ["99.1", "99.2"],
            "connects_tcp": ["99.1"]}


def _course(root: Path, names, port: int) -> dict:
    solutions, submissions = root / "solutions", root / "submitted"
    shutil.copytree(FIXTURE / "solutions", solutions)
    victim = root / "victim.txt"
    victim.write_text("keep me")
    paths = dict(SOLUTION=str(solutions / "99_demo.ipynb"), OTHER=str(submissions / "honest" / "99_demo.ipynb"),
                 OUTSIDE=str(root / "outside.txt"), VICTIM=str(victim))
    constants = "".join(f"{k} = {v!r}\n" for k, v in paths.items()) + f"PORT = {port}\n"
    released = read(FIXTURE / "exercises" / "99_demo.ipynb")
    for name in names:
        (submissions / name).mkdir(parents=True)
        (submissions / name / "99_demo.ipynb").write_text(_make_submission(released, {"cells": {**CORRECT, **ATTACKS[name][0]}}, constants))
    return dict(solutions=solutions, submissions=submissions, **paths)


def _grade_batch(root: Path, names, isolation) -> dict:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.5)
    try:
        course = _course(root, names, listener.getsockname()[1])
        options = GradeOptions(limits=LIMITS, jobs=2, use_cache=False, isolation=isolation)
        results = grade_all(course["submissions"], "99", root / "grades.csv", course["solutions"], options)
        received = b""
        try:
            while True:
                connection, _ = listener.accept()
                connection.settimeout(2)
                received += connection.recv(100) or b"<connected>"
                connection.close()
        except OSError:
            pass
    finally:
        listener.close()
    return dict(course, received=received, results={r["student"]: r for r in results},
                rows={row["student"]: row for row in csv.DictReader((root / "grades.csv").open())},
                feedback={p.stem: p.read_text() for p in (root / "grades_feedback").glob("*.md")})


KERNEL_ONLY = Isolation("kernel without the audit hook (test)", landlock=True,
                        namespace=bool(containment.namespace_prefix()), fences=False)


@pytest.fixture(scope="module")
def confined(tmp_path_factory):
    names = list(ATTACKS) if ABI >= 4 else [n for n in ATTACKS if n != "connects_tcp"]
    return _grade_batch(tmp_path_factory.mktemp("landlock"), names, KERNEL_ONLY)


@pytest.fixture(scope="module")
def unconfined(tmp_path_factory):
    return _grade_batch(tmp_path_factory.mktemp("no_landlock"), list(ATTACKS), "unsafe-no-isolation")


@pytest.mark.slow
@needs_landlock
@pytest.mark.parametrize("name", ["reads_solutions", "reads_other_submission", "writes_outside",
                                  pytest.param("connects_tcp", marks=needs_landlock_net)])
def test_attacks_past_the_audit_hook_are_stopped_by_the_kernel(confined, name):
    row, expected = confined["rows"][name], ATTACKS[name][1]
    assert {e: float(row[e]) for e in expected} == {e: float(p) for e, p in expected.items()}, confined["feedback"][name]
    assert row["isolation"].startswith("kernel without the audit hook (test): Landlock")
    assert "PermissionError" in confined["feedback"][name]


@pytest.mark.slow
@needs_landlock
def test_nothing_outside_the_sandbox_was_written_read_or_contacted(confined):
    assert not Path(confined["OUTSIDE"]).exists()
    assert Path(confined["VICTIM"]).read_text() == "keep me"
    assert confined["received"] == b""


@pytest.mark.slow
@needs_landlock
def test_honest_grade_is_the_same_with_and_without_landlock(confined, unconfined):
    assert confined["rows"]["honest"]["total"] == unconfined["rows"]["honest"]["total"] == "6"


@pytest.mark.slow
def test_without_any_isolation_the_same_attacks_succeed_and_the_csv_says_so(unconfined):
    """The control: the attacks above are real; with no isolation they get full marks."""
    assert {name: unconfined["rows"][name]["total"] for name in ATTACKS} == {name: "6" for name in ATTACKS}
    assert Path(unconfined["OUTSIDE"]).read_text() == "pwned"
    assert Path(unconfined["VICTIM"] + ".moved").exists()
    assert unconfined["received"].startswith(b"leak")
    assert {r["isolation"].split(":")[0] for r in unconfined["rows"].values()} == {"unsafe-no-isolation"}
    assert all("unsafe-no-isolation" in text for text in unconfined["feedback"].values())


@pytest.fixture
def one_honest(tmp_path):
    course = _course(tmp_path, ["honest"], port=9)
    out = tmp_path / "grades.csv"
    return ["grade", str(course["submissions"]), "--assignment", "99", "--out", str(out), "--solutions",
            str(course["solutions"]), "--timeout", "30", "--cell-timeout", "10", "--jobs", "1"], out


def _unavailable(monkeypatch):
    monkeypatch.setattr(landlock, "abi_version", lambda: (0, "this kernel has no Landlock (simulated)"))


@pytest.mark.slow
@needs_landlock_net
def test_the_default_is_the_kernel_sandbox_and_says_so(one_honest, capsys):
    args, out = one_honest
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "isolation: kernel: Landlock + " in printed and "'honest': 6" in printed
    assert ",kernel: Landlock" in out.read_text()


def test_without_landlock_the_default_refuses_to_grade_anything(one_honest, capsys, monkeypatch):
    _unavailable(monkeypatch)
    args, out = one_honest
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "this kernel has no Landlock (simulated)" in err and "--unsafe-isolation" in err
    assert not out.exists()


@pytest.mark.slow
def test_weaker_isolation_needs_its_loud_flag_and_is_recorded(one_honest, capsys, monkeypatch):
    _unavailable(monkeypatch)
    args, out = one_honest
    assert main(args + ["--unsafe-isolation", "unsafe-audit-hook-only"]) == 0
    captured = capsys.readouterr()
    assert "WARNING" in captured.err and "'honest': 6" in captured.out
    assert ",unsafe-audit-hook-only: " in out.read_text()
    assert "isolation unsafe-audit-hook-only" in (out.parent / "grades_feedback" / "honest.md").read_text()


def test_isolation_levels_never_downgrade(monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    assert landlock.abi_version() == (0, "Landlock is Linux-only (this is darwin)")
    with pytest.raises(IsolationUnavailable, match="Linux-only"):
        choose("kernel")
    assert not choose("unsafe-audit-hook-only").landlock and choose("unsafe-audit-hook-only").fences
    with pytest.raises(ValueError):
        choose("off")


def test_readable_paths_are_an_allow_list_without_the_course_folders(tmp_path):
    sandbox = tmp_path / "sandbox"
    sandbox.mkdir()
    readable = landlock.readable_paths(str(sandbox))
    root = Path(__file__).resolve().parents[2]
    assert str(sandbox) in readable and sys.base_prefix in readable
    for secret in (root, root / "solutions", FIXTURE / "solutions", tmp_path):
        assert str(secret) not in readable
    assert landlock.exposed(readable, [str(root / "solutions"), str(FIXTURE / "solutions")]) == []
    assert landlock.exposed(readable, [str(sandbox / "x")]) == [str(sandbox / "x")]


def test_a_worker_that_cannot_confine_itself_explains_why():
    line = "grader: the OS sandbox could not be applied: OSError: landlock_restrict_self: Operation not permitted"
    problem = _describe_exit(70, "noise\n" + line + "\n", Limits())
    assert problem.startswith(line[len("grader: "):]) and "was not run" in problem
