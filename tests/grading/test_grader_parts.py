"""The grader's parts one by one: the plain-data channel, the judge, safe file reading, the CSV and
feedback writers, probes without expected values, and shortcut detection by scope."""
import importlib
import inspect
import json
import os
import types

import numpy as np
import pytest

from tinygrad_course.grading import feedback, outputs, submissions
from tinygrad_course.grading.judge import judge
from tinygrad_course.grading.notebook_files import read
from tinygrad_course.grading.registry import chapter_module, check_modules
from tinygrad_course.grading.sandbox import channel
from tinygrad_course.grading.sandbox.plan import MalformedNotebook, build_plan
from tinygrad_course.grading.sandbox.probe import make_check_probe, make_probe
from tinygrad_course.grading.sandbox.runner import StepRecord
from tinygrad_course.grading.source_shortcuts import shortcut_findings

from .conftest import ROOT


# --- the channel ---------------------------------------------------------------------------------------
def test_arrays_travel_as_dtype_shape_and_bytes_and_come_back_equal():
    value = np.arange(6, dtype=np.float32).reshape(2, 3)
    sent = json.loads(json.dumps(channel.to_plain([value, 1, 2.5, "s", (True, None)])))
    assert sent[0]["nd"] == "<f4" and sent[0]["shape"] == [2, 3]
    back = channel.decode(sent)
    assert np.array_equal(back[0], value) and back[0].dtype == np.float32 and back[1:] == [1, 2.5, "s", [True, None]]


@pytest.mark.parametrize("bad", [{"nd": "|O8", "shape": [1], "b64": "AAAAAAAAAAA="}, {"nd": "<f4", "shape": [4], "b64": "AAAA"},
                                 {"nd": "<f4", "shape": [-1], "b64": ""}, {"pickle": "gASV"}, {"nd": "<f4"}])
def test_the_grader_decodes_nothing_but_plain_data(bad):
    with pytest.raises(Exception):
        channel.decode(bad)


def test_learner_objects_are_not_sent_as_objects():
    class Anything:
        pass
    with pytest.raises(TypeError):
        channel.to_plain(Anything())
    with pytest.raises(TypeError):
        channel.to_plain(np.array([object()]))


def test_malformed_lines_are_counted_and_dropped():
    events, bad = channel.parse_events(b'{"e": "obs"}\n[1, 2]\nnot json\n' + b"[" * 100000 + b"\n")
    assert events == [{"e": "obs"}] and bad == 3


# --- the judge -----------------------------------------------------------------------------------------
def _record(*values, finished=True, error=None, site="05.5:{}"):
    observations = [{"e": "obs", "site": site.format(k + 1), "kind": "equal", "what": "w", "value": channel.to_plain(v)}
                    for k, v in enumerate(values)]
    return StepRecord(observations, error, finished)


def test_judge_passes_only_when_every_observation_matches():
    reference = _record(0.5, [False, True])
    assert judge(reference, _record(0.5, [False, True]), None).passed
    assert not judge(reference, _record(0.5, [False, False]), None).passed
    assert not judge(reference, _record(0.5), None).passed
    assert not judge(reference, _record(0.5, [False, True], 1.0), None).passed  # forged extra observations
    assert not judge(reference, _record(0.5, [False, True], site="05.4:{}"), None).passed
    assert not judge(reference, _record(0.5, [False, True], error="boom"), None).passed


def test_judge_compares_arrays_with_the_tolerance_of_the_solutions_run():
    reference = StepRecord([{"site": "s", "kind": "close", "what": "w", "rtol": 1e-3, "atol": 0.0,
                             "value": channel.to_plain(np.array([1.0, 2.0]))}], None, True)
    close = StepRecord([{"site": "s", "value": channel.to_plain(np.array([1.0005, 2.0])), "rtol": 1.0, "atol": 1.0}], None, True)
    far = StepRecord([{"site": "s", "value": channel.to_plain(np.array([1.01, 2.0])), "rtol": 1.0, "atol": 1.0}], None, True)
    assert judge(reference, close, None).passed and not judge(reference, far, None).passed


def test_a_true_claim_must_be_the_boolean_true():
    reference = StepRecord([{"site": "s", "kind": "true", "value": True}], None, True)
    assert not judge(reference, StepRecord([{"site": "s", "value": 1}], None, True), None).passed


# --- files ---------------------------------------------------------------------------------------------
def test_only_single_link_regular_files_are_read(tmp_path):
    (tmp_path / "a").mkdir()
    regular = tmp_path / "a" / "05_x.ipynb"
    regular.write_text("{}")
    assert submissions.read_beneath(tmp_path, ("a", "05_x.ipynb")) == b"{}"
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "05_x.ipynb").symlink_to(regular)
    os.mkfifo(tmp_path / "fifo.ipynb")
    os.link(regular, tmp_path / "hard.ipynb")
    with open(tmp_path / "big.ipynb", "wb") as fh:
        fh.truncate(2**33)
    (tmp_path / "c").symlink_to(tmp_path / "a")
    for parts, why in [(("b", "05_x.ipynb"), "symbolic link"), (("fifo.ipynb",), "FIFO"), (("hard.ipynb",), "hard links"),
                       (("big.ipynb",), "limit"), (("c", "05_x.ipynb"), "not a plain folder")]:
        with pytest.raises(OSError, match=why):
            submissions.read_beneath(tmp_path, parts)


def test_the_size_limit_counts_the_cells_without_their_outputs():
    cell = {"cell_type": "code", "metadata": {}, "source": "x = 1", "outputs": [], "execution_count": None}
    small = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    output = {"output_type": "stream", "name": "stdout", "text": "x" * 2**20}
    image = {"a.png": {"image/png": "QUJD" * 2**18}}
    printed = {**small, "cells": [{**cell, "outputs": [output], "attachments": image}]}
    assert submissions.size_without_outputs(printed) == submissions.size_without_outputs(small) < 200
    long = {**small, "cells": [{**cell, "source": "#" * 2**20}]}
    assert submissions.size_without_outputs(long) > 2**20
    assert submissions.size_without_outputs([1, 2]) == len("[1, 2]")  # not a notebook: measured whole


def test_a_read_that_hangs_is_abandoned_with_a_reason(tmp_path, monkeypatch):
    """A regular file on a file system that stops answering (a stale network mount) costs its row, not the class."""
    import threading

    release = threading.Event()
    monkeypatch.setattr(submissions, "_read", lambda root, parts, max_bytes: release.wait(30) and b"")
    try:
        with pytest.raises(OSError, match="longer than 0.2 s"):
            submissions.read_beneath(tmp_path, ("05_x.ipynb",), timeout=0.2)
    finally:
        release.set()


def test_copy1_is_graded_alone_and_flagged_next_to_the_original(tmp_path):
    (tmp_path / "solo").mkdir()
    (tmp_path / "solo" / "05_t-Copy1.ipynb").write_text("{}")
    (tmp_path / "both").mkdir()
    (tmp_path / "both" / "05_t.ipynb").write_text("{}")
    (tmp_path / "both" / "05_t-Copy1.ipynb").write_text("{}")
    (tmp_path / "link").symlink_to(tmp_path / "solo")
    found = {f.student: f for f in submissions.find(tmp_path, "05")}
    assert found["solo"].parts == ("solo", "05_t-Copy1.ipynb") and not found["solo"].note
    assert found["both"].parts == ("both", "05_t.ipynb") and "05_t-Copy1.ipynb" in found["both"].note
    assert found["link"].parts is None and "symbolic link" in found["link"].problem


def test_every_entry_gets_one_distinct_printable_student_name(tmp_path):
    os.mkdir(os.path.join(os.fsencode(tmp_path), b"bad\xff"))
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / "05_t.ipynb").write_text("{}")
    (tmp_path / "alice.ipynb").write_text("{}")
    students = [f.student for f in submissions.find(tmp_path, "05")]
    assert len(students) == len(set(students)) == 3
    assert all(s.encode("utf-8") for s in students) and any(s.startswith("bad\ufffd~") for s in students)


def test_malformed_notebooks_are_refused_with_a_reason():
    solution = read(ROOT / "solutions" / "05_training.ipynb")
    for bad in ([], {"cells": 3}, {"cells": [1]}, {"cells": [{"cell_type": "code", "source": 3}]}):
        with pytest.raises(MalformedNotebook):
            build_plan(solution, bad)
    plan = build_plan(solution, {"cells": [{"cell_type": "code", "source": "x", "metadata": {"nbgrader": [1]}}]})
    assert any("missing" in p for p in plan.problems)


# --- what the grader writes ----------------------------------------------------------------------------
def test_csv_cells_are_escaped_against_formulas():
    assert [outputs.cell(v) for v in ("=1+1", "+a", "-a", "@a", "\tx", "ok")] == ["'=1+1", "'+a", "'-a", "'@a", "'\tx", "ok"]


def test_feedback_names_keep_unicode_and_never_collide():
    names = outputs.feedback_names(["李雷", "Ana B", "Ana_B", "ana b", "a/b", "../x", "CON", ""])
    assert names["李雷"] == "李雷" and len(set(n.casefold() for n in names.values())) == 8
    assert all("/" not in n and not n.startswith(".") for n in names.values())


def test_learner_text_in_feedback_cannot_forge_the_grader_lines():
    text = "\n".join(feedback.quote("**Total: 14 / 14 points**\n```\n# done"))
    assert all(line.startswith("    ") for line in text.splitlines())
    assert feedback.plain("# Total | x").startswith("\\#") and "\\|" in feedback.plain("a|b")


# --- probes --------------------------------------------------------------------------------------------
def test_a_hidden_test_probe_keeps_the_inputs_and_drops_the_expected_values():
    probe = make_probe("m = make()\nwith no_grad():\n    expected = reference(m)\nx = f(m)\nx += 1\n"
                       "expect_close(x, expected, 'what it is', rtol=1e-3)\nassert g(m) == 42, 'msg'")
    assert "expected" not in probe.source and "42" not in probe.source and "reference" not in probe.source
    assert "x += 1" in probe.source and "f(m)" in probe.source
    assert probe.sites["h0"] == {"kind": "close", "what": "what it is", "rtol": 1e-3, "atol": 1e-6}


@pytest.mark.parametrize("chapter", ["01", "01b", "02", "02b", "02c", "02d", "03", "03b", "04", "04b", "05", "05b", "06", "07", "08", "09", "99"])
def test_check_probes_compile_and_pass_no_expected_value(chapter):
    for module in check_modules(chapter):
        source = make_check_probe(inspect.getsource(importlib.import_module(module)))
        compile(source, module, "exec")
        assert "mistakes=" not in source and "hint=" not in source


def test_a_chapter_whose_checks_span_two_files_is_probed_in_both():
    assert check_modules("02") == [chapter_module("02"), chapter_module("02") + "_autograd_tools"]
    assert check_modules("02d") == [chapter_module("02d"), chapter_module("02d") + "_backward",
                                    chapter_module("02d") + "_engine"]
    assert check_modules("08") == [chapter_module("08"), chapter_module("08") + "_anomaly"]
    assert check_modules("02c") == [chapter_module("02c"), chapter_module("02c") + "_inplace",
                                    chapter_module("02c") + "_methods"]
    assert check_modules("05") == [chapter_module("05"), chapter_module("05") + "_softmax"]  # not ch05b_conv: another assignment
    assert check_modules("04b") == [chapter_module("04b"), chapter_module("04b") + "_schedule"]
    assert check_modules("05b") == [chapter_module("05b"), chapter_module("05b") + "_conv"]


# --- shortcuts ------------------------------------------------------------------------------------------
def _plan_03(linear: str, dropout: str):
    solution = read(ROOT / "solutions" / "03_modules.ipynb")
    data = json.loads((ROOT / "exercises" / "03_modules.ipynb").read_text())
    for cell in data["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id")
        cell["source"] = {"ex03_1": linear, "ex03_2": dropout}.get(grade_id, cell["source"])
    return build_plan(solution, data)


HONEST_LINEAR = ("import tinygrad_course as tc\nclass Linear(tc.nn.Module):\n    def __init__(self, i, o, bias=True):\n        super().__init__()\n"
                 "    def forward(self, x):\n        linear = x @ self.weight.T\n        return linear\n")
HONEST_DROPOUT = ("import tinygrad_course as tc\nclass Dropout(tc.nn.Module):\n    def __init__(self, p=0.5):\n        super().__init__()\n"
                  "        self.p = p\n    def forward(self, x, dropout=None):\n        dropout = self.p\n        return x * dropout\n")


def test_local_names_like_the_reference_accuse_no_one():
    assert shortcut_findings(_plan_03(HONEST_LINEAR, HONEST_DROPOUT)) == {}


@pytest.mark.parametrize("linear", [
    "from tinygrad_course.nn.functional import linear as lin\nclass Linear:\n    def forward(self, x):\n        return lin(x, self.w)",
    "import tinygrad_course.nn.functional as G\nclass Linear:\n    def forward(self, x):\n        return G.linear(x, self.w)",
    "import tinygrad_course as tc\nf = tc.nn.functional\nclass Linear:\n    def forward(self, x):\n        return f.linear(x, self.w)",
    "import tinygrad_course as tc\nclass Linear:\n    def forward(self, x):\n        return getattr(tc.nn.functional, 'linear')(x, self.w)",
    "import importlib\nclass Linear:\n    def forward(self, x):\n        return importlib.import_module('tinygrad_course.nn.functional').linear(x, self.w)",
    "import tinygrad_course as tc\ndef helper(x, w):\n    return tc.nn.functional.__dict__['linear'](x, w)\nclass Linear:\n    def forward(self, x):\n        return helper(x, self.w)",
])
def test_the_reference_is_found_through_aliases_attributes_and_getattr(linear):
    assert "linear" in shortcut_findings(_plan_03(linear, HONEST_DROPOUT)).get("03.1", "")


# --- the audit hook (the only fence under unsafe-audit-hook-only) ----------------------------------------
HOOKED = """import os, sys, glob
from tinygrad_course.grading.sandbox import guard
hidden, mine = sys.argv[1], sys.argv[2]
guard.install(writable=[mine], unreadable=[hidden])
refused = []
for name, call in [("listdir", lambda: os.listdir(hidden)), ("scandir", lambda: list(os.scandir(hidden))),
                   ("glob", lambda: glob.glob(hidden + "/*")), ("open", lambda: open(hidden + "/s.ipynb").read()),
                   ("own listdir", lambda: os.listdir(mine))]:
    try:
        call()
    except PermissionError:
        refused.append(name)
print(refused)
"""


def test_the_audit_hook_refuses_listing_and_reading_the_hidden_folders(tmp_path):
    import subprocess
    import sys

    hidden, mine = tmp_path / "solutions", tmp_path / "sandbox"
    hidden.mkdir()
    mine.mkdir()
    (hidden / "s.ipynb").write_text("HIDDEN")
    out = subprocess.run([sys.executable, "-c", HOOKED, str(hidden), str(mine)], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout
    assert out.strip() == "['listdir', 'scandir', 'glob', 'open']"


def test_the_graders_recording_checker_takes_every_argument_a_check_may_pass():
    """A check runs under check() in the learner's kernel and under the grader's RecordingChecker: an
    argument only one of them knows would fail every submission in the grader."""
    import inspect

    from tinygrad_course.grading.checker import Checker
    from tinygrad_course.grading.sandbox.recorder import RecordingChecker

    for name in ("close", "equal", "true", "raises"):
        local = set(inspect.signature(getattr(Checker, name)).parameters)
        graded = set(inspect.signature(getattr(RecordingChecker, name)).parameters)
        assert local <= graded, f"RecordingChecker.{name} lacks {sorted(local - graded)}"


def test_the_grader_parses_source_only_through_its_lock():
    """The grader grades in threads, and CPython 3.11's ast conversion is not safe across threads (an honest
    notebook once got 0 from "AST constructor recursion depth mismatch"): no grader module calls ast.parse
    itself."""
    from pathlib import Path

    import tinygrad_course.grading as grading

    root = Path(grading.__file__).parent
    direct = [str(p.relative_to(root)) for p in root.rglob("*.py")
              if p.name != "parsing.py" and "ast.parse(" in p.read_text(encoding="utf-8")]
    assert direct == [], direct


def test_results_written_just_before_the_worker_exits_are_not_lost():
    """The worker may send its last events and exit between two looks at the pipe: the grader still reads them."""
    import threading

    from tinygrad_course.grading.sandbox.isolation import Isolation
    from tinygrad_course.grading.sandbox.runner import Limits, _Attempt

    read_fd, write_fd = os.pipe()
    events = [{"e": "isolation", "layers": []}, {"e": "start", "step": 0}, {"e": "end", "step": 0}, {"e": "done"}]

    class ExitsRightAfterWriting:  # poll() is the moment the grader looks: the events arrive just before it
        returncode = None

        def poll(self):
            if self.returncode is None:
                os.write(write_fd, b"".join(json.dumps(e).encode() + b"\n" for e in events))
                self.returncode = 0
            return self.returncode

        def wait(self, timeout=None):
            return self.returncode

    attempt = _Attempt({"sandbox": "."}, Isolation("test", landlock=False, namespace=True, fences=False), Limits(),
                       deadline=float("inf"), stop=threading.Event())
    try:
        attempt._watch(ExitsRightAfterWriting(), read_fd)
    finally:
        os.close(read_fd)
        os.close(write_fd)
    assert attempt.done and attempt.confined and attempt.current is None
    assert [e["e"] for e in attempt.events] == ["isolation", "start", "end", "done"]


def test_hints_handed_through_a_checks_helper_do_not_reach_the_probe():
    source = make_check_probe(
        "def _same(t, got, expected, *, why=None, hint=None):\n"
        "    t.equal(got, expected, 'value', why=why, hint=hint or 'the secret formula')\n"
        "    note = hint\n"
        "def _case(t, got, *, mistakes=()):\n"
        "    t.close(got, 1, 'case', mistakes=[*mistakes])\n"
        "    return len(mistakes)\n"
        "def check(t, fn):\n"
        "    _same(t, fn(1), 2, why='because', hint='another secret')\n"
        "    t.close(fn(2), 3, 'value', mistakes=[mistakes.custom(len, 'a third secret')])\n")
    compile(source, "probe", "exec")
    assert "secret" not in source and "hint=" not in source
    namespace = {}
    exec(source, namespace)
    assert namespace["_same"].__kwdefaults__ == {"why": None}
    assert namespace["_case"].__kwdefaults__ is None and namespace["_case"](types.SimpleNamespace(close=lambda *a, **k: None), 1) == 0  # the default, ()
    assert "mistakes = None" not in source  # the module of catalogued mistakes is not a parameter
