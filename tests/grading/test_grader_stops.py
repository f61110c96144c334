"""Stopping and containment: SIGTERM / Ctrl-C end the batch promptly with a CSV of what finished and a
resumable cache; nothing a submission starts outlives its worker, with or without a PID namespace."""
import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tinygrad_course.grading.batch import GradeOptions, grade_all
from tinygrad_course.grading.sandbox import containment
from tinygrad_course.grading.sandbox.isolation import Isolation
from tinygrad_course.grading.sandbox.runner import Limits

from .fixtures.submissions import CORRECT
from .test_batch_grader import WITHOUT_AN_OS_SANDBOX
from .test_grader_landlock import _course

pytestmark = pytest.mark.slow
SLOW = "import time\nfor _ in range(900):\n    time.sleep(0.1)\n"


def _in(path: Path) -> list[int]:
    """Processes whose working directory lies under `path`."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/cwd").startswith(str(path)):
                found.append(int(pid))
        except OSError:
            pass
    return found


def _groups(pids: list[int]) -> set[int]:
    """The process groups of `pids` (one per running worker) that still exist."""
    found = set()
    for pid in pids:
        try:
            found.add(os.getpgid(pid))
        except ProcessLookupError:
            pass
    return found


def _marked(mark: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if mark.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            pass
    return found


def _class(root: Path, slow: dict) -> dict:
    course = _course(root, ["honest"], port=9)
    for name, cells in slow.items():
        folder = course["submissions"] / name
        folder.mkdir()
        text = (course["submissions"] / "honest" / "99_demo.ipynb").read_text()
        nb = json.loads(text)
        for cell in nb["cells"]:
            grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id")
            if grade_id in cells:
                cell["source"] = cells[grade_id]
        (folder / "99_demo.ipynb").write_text(json.dumps(nb))
    return course


def _until(condition, what: str, seconds: float = 180) -> None:
    """Wait for `condition()` (polling): on a busy machine the batch may take long to get there."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"waited {seconds:g} s for {what}"
        time.sleep(0.2)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_batch_promptly_and_keeps_the_previous_csv(tmp_path, signum):
    course = _class(tmp_path, {f"slow_{i}": {"ex99_1": SLOW} for i in range(4)})
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    out = tmp_path / "grades.csv"
    previous = "student,99.1,99.2,total,problem,isolation\nlast_week,3,3,6,,kernel\n"
    out.write_text(previous)
    env = dict(os.environ, TMPDIR=str(scratch))
    process = subprocess.Popen([sys.executable, "-m", "tinygrad_course.grading", "grade", str(course["submissions"]),
                                "--assignment", "99", "--out", str(out), "--solutions", str(course["solutions"]),
                                "--jobs", "2", "--cell-timeout", "120", *WITHOUT_AN_OS_SANDBOX],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    cache = tmp_path / ".grades_cache"
    # the reference run and the honest notebook finish; two slow ones are running
    _until(lambda: len(list(cache.glob("*.json"))) == 1 and len(_groups(_in(scratch))) >= 2,
           "the honest notebook to be graded and two slow ones to run")
    process.send_signal(signum)
    started = time.monotonic()
    _, err = process.communicate(timeout=60)
    assert time.monotonic() - started < 30  # the slow cells would run for 90 s
    assert process.returncode == 130
    _until(lambda: _in(scratch) == [], "every worker to be gone", 10)
    partial = tmp_path / "grades.partial.csv"
    assert out.read_text() == previous
    assert f"written to {partial} ({out} was left as it was)" in err.decode()
    rows = {row["student"]: row for row in csv.DictReader(partial.open())}
    assert rows["honest"]["total"] == "6" and not any(name.startswith("slow") for name in rows)
    assert len(list(cache.glob("*.json"))) == 1


ESCAPE = ("import subprocess, os\n"
          "subprocess.Popen(['/bin/sleep', MARK], start_new_session=True)\n"
          "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
          "        import time\n        time.sleep(4)\n        open(CSV, 'w').write('honest,0')\n"
          "        os.execv('/bin/sleep', ['/bin/sleep', MARK])\n    os._exit(0)\n")


@pytest.mark.parametrize("namespace", [True, False], ids=["pid-namespace", "process-group"])
def test_children_that_escape_the_session_die_with_their_worker(tmp_path, monkeypatch, namespace):
    if namespace and not containment.namespace_prefix():
        pytest.skip("no unprivileged user namespaces here")
    mark = f"41{9 + namespace}.{os.getpid()}"
    out = tmp_path / "grades.csv"
    course = _class(tmp_path, {"escaper": {"ex99_1": f"MARK = {mark!r}\nCSV = {str(out)!r}\n{ESCAPE}{CORRECT['ex99_1']}"}})
    isolation = Isolation("unsafe-no-isolation", landlock=False, namespace=namespace, fences=False)
    options = GradeOptions(limits=Limits(timeout=60, cell_timeout=20), jobs=1, use_cache=False, isolation=isolation)
    grade_all(course["submissions"], "99", out, course["solutions"], options)
    time.sleep(5)  # the grandchild would have rewritten the CSV by now
    assert _marked(mark) == []
    rows = {row["student"]: row for row in csv.DictReader(out.open())}
    assert rows["escaper"]["total"] == "6" and rows["honest"]["total"] == "6"


def test_without_a_private_tmpfs_the_grader_measures_the_disk_quota(tmp_path):
    fill = "for i in range(6):\n    with open(f'f{i}.bin', 'wb') as fh:\n        fh.write(b'0' * (7 << 20))\nimport time\ntime.sleep(10)\n"
    out = tmp_path / "grades.csv"
    course = _class(tmp_path, {"filler": {"ex99_1": fill + CORRECT["ex99_1"]}})
    isolation = Isolation("unsafe-no-isolation", landlock=False, namespace=False, fences=False)
    options = GradeOptions(limits=Limits(timeout=60, cell_timeout=30, disk_mb=16), jobs=1, use_cache=False, isolation=isolation)
    results = {r["student"]: r for r in grade_all(course["submissions"], "99", out, course["solutions"], options)}
    assert "wrote more than 16 MiB" in results["filler"]["problem"]
    assert results["filler"]["earned"]["99.1"] == 0 and results["filler"]["earned"]["99.2"] == 3
