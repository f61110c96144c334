"""Honest submissions (which must lose no point) and hostile files (which must not stop the class)."""
from __future__ import annotations

import json

from .build import CORRECT, POINTS, Case

NESTED = "[" * 200000 + "]" * 200000


def honest_cases() -> list[Case]:
    """At least fifteen honest students, each with the grade they deserve."""
    clip_local = CORRECT["ex05_2"].replace("scale = max_norm", "clip_grad_norm_ = max_norm").replace("        if scale < 1", "        scale = clip_grad_norm_\n        if scale < 1")
    loss_local = CORRECT["ex05_6"].replace("        shifted = x - x.max(dim, keepdim=True).values\n",
                                           "        log_softmax = x.max(dim, keepdim=True).values  # a local that shares a reference's name\n"
                                           "        shifted = x - log_softmax\n")
    assert loss_local != CORRECT["ex05_6"]
    both = {"05.1": 2, "05.5": 1, "05.6": 6}
    return [Case("honest_correct", hostile=False),
            Case("honest_copy1_only", layout="copy1", hostile=False),
            Case("honest_with_copy1", layout="with_copy1", problem="Copy1", hostile=False),
            Case("honest_nested_folder", layout="nested", hostile=False),
            Case("honest_flat_file", layout="flat", hostile=False),
            Case("honest_duplicated_cell", duplicate={"ex05_2": "def clip_grad_norm_(parameters, max_norm):\n    raise NotImplementedError\n"},
                 hostile=False, problem="appears 2 times"),
            Case("honest_local_names_like_references", cells={"ex05_2": clip_local, "ex05_6": loss_local}, hostile=False),
            Case("honest_uses_reference_outside_exercise", extra=[("ex05_2", "import tinygrad_course as tc\n"
                                                                   "p = tc.zeros(2, requires_grad=True)\np.grad = tc.ones(2)\n"
                                                                   "reference_norm = tc.nn.utils.clip_grad_norm_([p], 1.0)\n")],
                 hostile=False),
            Case("honest_magics_and_prints", extra=[(None, "%matplotlib inline\n!pip list\nprint('Total: 0 / 14 points')"),
                                                    ("ex05_1", "print('**Total: 0 / 14**')\nfor i in range(3):\n    print(i)")], hostile=False),
            Case("honest_blocks_alarm_in_ungraded_cell", extra=[("ex05_3", "import signal, time\n"
                                                                 "signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])\n"
                                                                 "while True:\n    time.sleep(0.01)")], hostile=False,
                 problem="skipped"),
            Case("honest_50_mib_of_output", output_mb=50, hostile=False),
            Case("honest_crash_in_ungraded_cell", extra=[("ex05_4", "import os\nos._exit(3)  # the kernel died")], hostile=False,
                 problem="skipped"),
            Case("honest_ctypes_in_ungraded_cell", extra=[("ex05_4", "import ctypes\nctypes.string_at(0)")], hostile=False),
            Case("honest_error_in_ungraded_cell", extra=[("ex05_1", "1 / 0")], hostile=False),
            Case("honest_reseeds_randomness", extra=[(None, "import tinygrad_course as tc\ntc.manual_seed(1234)\nx = tc.randn(100)")],
                 hostile=False),
            Case("honest_partial", cells={g: "pass" for g in ("ex05_2", "ex05_3", "ex05_4")},
                 expected={e: both.get(e, 0) for e in POINTS}, hostile=False),
            Case("=SUM(1;2)+cmd|'calc'!A0", hostile=False),
            Case("李雷", hostile=False),
            Case("Ana B", hostile=False),
            Case("Ana_B", hostile=False),
            Case("ana b", hostile=False),
            Case("honest_stub", stub=True, hostile=False),
            Case("honest_deleted_a_solution_cell", drop=("ex05_4",), zero=("05.4",), problem="ex05_4 is missing", hostile=False),
            Case("honest_star_import_and_display", cells={"ex05_2": "from math import *\n" + CORRECT["ex05_2"]},
                 extra=[("ex05_2", "print(vars(clip_grad_norm_).keys())\ndef show(x):\n    display(x)\nshow(sqrt(2))")], hostile=False)]


def bad_file_cases() -> list[Case]:
    """Files that are not notebooks, not regular, not theirs, or not well-formed."""
    zero = {e: 0 for e in POINTS}
    bad_meta = {"cells": [{"cell_type": "code", "metadata": {"nbgrader": ["not", "a", "dict"]}, "source": 1}], "metadata": {}}
    return [Case("symlink_to_solution", layout="symlink_file", expected=zero, problem="symbolic link"),
            Case("symlink_folder_to_solutions", layout="symlink_folder", expected=zero, problem="symbolic link"),
            Case("symlink_to_other_student", layout="symlink_other", expected=zero, problem="symbolic link"),
            Case("symlink_to_dev_zero", layout="symlink_devzero", expected=zero, problem="symbolic link"),
            Case("hardlink_to_solution", layout="hardlink", expected=zero, problem="hard links"),
            Case("fifo_notebook", layout="fifo", expected=zero, problem="FIFO"),
            Case("device_notebook", layout="device", expected=zero, problem="it was not read"),
            Case("sparse_5_gib", layout="sparse", expected=zero, problem="more than the limit"),
            Case("malformed_json", raw=b"{ this is not json", expected=zero, problem="not a readable notebook"),
            Case("malformed_metadata", raw=json.dumps(bad_meta).encode(), expected=zero, problem="not a readable notebook"),
            Case("cells_not_a_list", raw=b'{"cells": {"a": 1}}', expected=zero, problem="not a readable notebook"),
            Case("deeply_nested_json", raw=NESTED.encode(), expected=zero, problem="not a readable notebook"),
            Case("invalid_utf8", raw=b"\xff\xfe\x00garbage", expected=zero, problem="not a readable notebook"),
            Case("empty_file", raw=b"", expected=zero, problem="not a readable notebook"),
            Case("grade_id_metadata_wrong_types", raw=json.dumps({"cells": [{"cell_type": "code", "source": "x = 1",
                                                                            "metadata": {"nbgrader": {"grade_id": 5}}}]}).encode(),
                 expected=zero, problem="missing")]
