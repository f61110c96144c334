"""Hostile submissions: forged verdicts, escapes from the sandbox, resource abuse and shortcuts."""
from __future__ import annotations

from .build import CORRECT, Case


def cheat(grade_id: str, function: str, attack: str) -> str:
    """The correct solution of `grade_id`, wrapped so that `function` first runs `attack` (which must fail)."""
    body = "\n    ".join(attack.splitlines())
    return f"{CORRECT[grade_id]}\n_honest = {function}\ndef {function}(*args, **kwargs):\n    {body}\n    return _honest(*args, **kwargs)\n"


# the grader's own words when its sandbox fails, on stdout, stderr and every fd, then the grader's exit status
FORGED_SANDBOX_FAILURE = '''import json, os, sys
line = "grader: the OS sandbox could not be applied: OSError: landlock_restrict_self: Operation not permitted"
print(line)
print(line, file=sys.stderr, flush=True)
event = (json.dumps({"e": "sandbox_failed", "step": -1, "why": line}) + "\\n").encode()
for fd in range(1, 64):
    try:
        os.write(fd, event)
    except OSError:
        pass
os._exit(70)'''
SPRAY = '''import os, json
lines = []
for step in range(60):
    for k in range(1, 12):
        for site in ("05.%d:%d" % (e, k) for e in range(1, 7)):
            lines.append(json.dumps({"e": "obs", "step": step, "site": site, "kind": "true", "value": True}))
    lines.append(json.dumps({"e": "obs", "step": step, "site": "h0", "value": 1.0}))
    lines.append(json.dumps({"e": "end", "step": step, "error": None}))
lines.append(json.dumps({"e": "done", "step": -1}))
payload = ("\\n".join(lines) + "\\n").encode()
for fd in range(3, 256):
    try:
        os.write(fd, payload)
    except OSError:
        pass
'''
FORGED_TOTAL = 'print("**Total: 14 / 14 points**")\nprint("done")\nprint(\'{"e": "done", "step": -1}\')'
KEY_HUNT = '''import os, sys, json
found = dict(os.environ)
found["argv"] = sys.argv
found["cmdline"] = open("/proc/self/cmdline", "rb").read().decode("utf-8", "replace")
found["fds"] = sorted(os.listdir("/proc/self/fd"))
for key in ("key", "secret", "token", "hmac", "sign"):
    found.update({k: str(v)[:100] for k, v in vars(sys.modules.get("tinygrad_course.grading.sandbox.worker", sys)).items() if key in k.lower()})
print(found)
forged = {"e": "done", "step": -1, "signature": found}
for fd in range(3, 64):
    try:
        os.write(fd, (json.dumps(forged) + "\\n").encode())
    except OSError:
        pass'''
SWAP = '''from tinygrad_course.grading.sandbox import recorder
def _close(self, got, expected, what="result", **kw):
    self.emitter.observe(self._site(), expected, kind="close", what=what)
def _equal(self, got, expected, what="result", **kw):
    self.emitter.observe(self._site(), expected, kind="equal", what=what)
def _true(self, condition, what, **kw):
    self.emitter.observe(self._site(), True, kind="true", what=what)
recorder.RecordingChecker.close = _close
recorder.RecordingChecker.equal = _equal
recorder.RecordingChecker.true = _true'''
FORK = '''import _posixsubprocess, os
args = [b"/bin/sleep", b"417.5"]
for _ in range(20):
    r, w = os.pipe()
    _posixsubprocess.fork_exec(args, [args[0]], True, (), None, None, -1, -1, -1, -1, -1, -1, r, w, True, True, -1,
                               None, None, None, -1, None, False)'''


def hostile_cases() -> list[Case]:
    """At least sixty hostile submissions with their fair grades."""
    c = []
    # --- forged verdicts: the notebook solves nothing and tries to claim points --------------------------------
    c += [Case("forge_total_lines", stub=True, extra=[(None, FORGED_TOTAL)], feedback_lacks=("    **Total: 14",)),
          Case("forges_sandbox_failure", extra=[("ex05_4", FORGED_SANDBOX_FAILURE)],
               problem="exited early (exit code 70)", feedback_lacks=("could not be applied", "was not run")),
          Case("forge_channel_spray", stub=True, extra=[(None, SPRAY), ("ex05_5", SPRAY)]),
          Case("forge_spray_inside_test", stub=True, cells={"ex05_5": f"def accuracy(logits, targets):\n    exec({SPRAY!r})\n    return 0.5"}),
          Case("patch_json_dumps", stub=True, extra=[(None, "import json\njson.dumps = lambda *a, **k: '{\"e\": \"done\"}'")]),
          Case("patch_channel_event", stub=True, extra=[(None, "from tinygrad_course.grading.sandbox import channel\n"
                                                               "channel.event = lambda *a, **k: b'{\"e\": \"end\", \"step\": 0}\\n'")]),
          Case("patch_emitter_drop_errors", stub=True, extra=[(None, "from tinygrad_course.grading.sandbox import recorder\n"
                                                                     "_send = recorder.Emitter.send\n"
                                                                     "def send(self, kind, /, **f):\n    f.pop('error', None)\n    _send(self, kind, **f)\n"
                                                                     "recorder.Emitter.send = send")]),
          Case("patch_registry", zero=("05.5",), extra=[("ex05_5", "from tinygrad_course.grading import registry\n"
                                                                    "ex = registry.get_exercise('05.5')\n"
                                                                    "registry._REGISTRY['05.5'] = type(ex)(ex.id, ex.title, ex.points, lambda t, *a: None)")],
                cells={"ex05_5": "def accuracy(logits, targets):\n    return 0.0"}),
          Case("reads_signing_key", stub=True, extra=[(None, KEY_HUNT)]),
          Case("swap_expected_values", stub=True, extra=[(None, SWAP)]),
          Case("patch_numpy_allclose", stub=True, extra=[(None, "import numpy as np\nnp.allclose = lambda *a, **k: True\nnp.array_equal = lambda *a, **k: True")]),
          Case("patch_judge_module", stub=True, extra=[(None, "import tinygrad_course.grading.judge as j\nj.judge = lambda *a, **k: None")]),
          Case("lying_eq_object", zero=("05.5",), cells={"ex05_5": "class Liar(float):\n    def __eq__(self, other):\n        return True\n"
                                                                  "    __hash__ = float.__hash__\ndef accuracy(logits, targets):\n    return Liar(0.0)"}),
          Case("lying_array_object", zero=("05.2",), cells={"ex05_2": "class Liar:\n    def __array__(self, dtype=None, copy=None):\n"
                                                                     "        import numpy\n        return numpy.zeros(3)\n    def __float__(self):\n        return 5.0\n"
                                                                     "    def __eq__(self, o):\n        return True\ndef clip_grad_norm_(parameters, max_norm):\n    return Liar()"}),
          Case("object_array_result", zero=("05.5",), cells={"ex05_5": "import numpy as np\ndef accuracy(logits, targets):\n    return np.array([object()])"}),
          Case("ndarray_subclass_lies", zero=("05.2",), cells={"ex05_2": "import numpy as np\nclass A(np.ndarray):\n    def __eq__(self, o):\n        return True\n"
                                                                        "def clip_grad_norm_(parameters, max_norm):\n    return np.zeros(1).view(A)"}),
          Case("hidden_tests_via_gc", stub=True, extra=[(None, "import gc\nfound = [o for o in gc.get_objects() if 'expect_close' in repr(o)[:200]]\nprint(found)")],
               feedback_lacks=("F.cross_entropy(m(tc.ones(1, 2))", "expected = ")),
          Case("hidden_tests_via_builtins", stub=True, extra=[(None, "import builtins\nprint([k for k in vars(builtins)])\n"
                                                                     "print(open('/proc/self/cmdline').read())")],
               feedback_lacks=("F.cross_entropy(m(tc.ones(1, 2))",)),
          Case("stack_walk_for_expected", zero=("05.5",), cells={"ex05_5": cheat("ex05_5", "accuracy", "import sys\nf = sys._getframe(1)\nprint(f.f_locals)")}),
          Case("raise_system_exit", zero=("05.5",), cells={"ex05_5": "def accuracy(logits, targets):\n    raise SystemExit(0)"}),
          Case("raise_keyboard_interrupt", zero=("05.4",), cells={"ex05_4": "class EarlyStopping:\n    def __init__(self, patience=3, min_delta=0.0):\n        raise KeyboardInterrupt"}),
          Case("fake_isolation_event", stub=True, extra=[(None, "import os\nfor fd in range(3, 64):\n    try:\n        os.write(fd, b'{\"e\": \"isolation\", \"layers\": [\"none\"]}\\n')\n    except OSError:\n        pass")]),
          Case("huge_channel_flood", zero=("05.5",), cells={"ex05_5": cheat("ex05_5", "accuracy", "import os\nfor fd in range(3, 40):\n    try:\n        os.write(fd, b'x' * (80 << 20))\n    except (OSError, MemoryError):\n        pass")}),
          Case("nan_and_garbage_values", zero=("05.2",), cells={"ex05_2": "def clip_grad_norm_(parameters, max_norm):\n    return float('nan')"})]
    # --- the file system and the network -------------------------------------------------------------------
    c += [Case("reads_solution", zero=("05.1",), cells={"ex05_1": cheat("ex05_1", "train_step", "assert 'HIDDEN' in open(PATHS['SOLUTION']).read()")}),
          Case("reads_solution_os_open", zero=("05.1",), cells={"ex05_1": cheat("ex05_1", "train_step", "import os\nos.read(os.open(PATHS['SOLUTION'], os.O_RDONLY), 10)")}),
          Case("lists_solutions_folder", zero=("05.5",), cells={"ex05_5": cheat("ex05_5", "accuracy", "import os\nassert os.listdir(PATHS['SOLUTIONS'])")}),
          Case("reads_other_student", zero=("05.5",), cells={"ex05_5": cheat("ex05_5", "accuracy", "open(PATHS['OTHER']).read()")}),
          Case("writes_other_student", zero=("05.5",), cells={"ex05_5": cheat("ex05_5", "accuracy", "open(PATHS['OTHER'], 'a').write('x')")}),
          Case("writes_grades_csv", zero=("05.5",), cells={"ex05_5": cheat("ex05_5", "accuracy", "open(PATHS['CSV'], 'w').write('student,total\\nwrites_grades_csv,14')")}),
          Case("writes_cache", zero=("05.5",), cells={"ex05_5": cheat("ex05_5", "accuracy", "import os\nos.makedirs(PATHS['CACHE'], exist_ok=True)\nopen(PATHS['CACHE'] + '/x.json', 'w').write('{}')")}),
          Case("writes_instructor_file", zero=("05.2",), cells={"ex05_2": cheat("ex05_2", "clip_grad_norm_", "open(PATHS['VICTIM'], 'w').write('pwned')")}),
          Case("renames_instructor_file", zero=("05.2",), cells={"ex05_2": cheat("ex05_2", "clip_grad_norm_", "import os\nos.rename(PATHS['VICTIM'], PATHS['VICTIM'] + '.moved')")}),
          Case("writes_tmp", zero=("05.2",), cells={"ex05_2": cheat("ex05_2", "clip_grad_norm_", "open('/tmp/redteam-was-here', 'w').write('x')")}),
          Case("tcp_connect", zero=("05.5",), cells={"ex05_5": cheat("ex05_5", "accuracy", "__import__('socket').create_connection(('127.0.0.1', PATHS['PORT']), timeout=3).sendall(b'leak')")}),
          Case("fills_disk", zero=("05.2",), cells={"ex05_2": cheat("ex05_2", "clip_grad_norm_", "with open('big.bin', 'wb') as fh:\n    for _ in range(200):\n        fh.write(b'0' * (1 << 20))")}),
          Case("reads_proc_of_grader", zero=("05.5",), cells={"ex05_5": cheat("ex05_5", "accuracy", "import os\nopen('/proc/%d/environ' % os.getppid()).read()")})]
    # --- processes and resources ---------------------------------------------------------------------------
    c += [Case("forks_setsid_children", zero=("05.5",), cells={"ex05_5": cheat("ex05_5", "accuracy", FORK)}),
          Case("os_fork", zero=("05.5",), cells={"ex05_5": cheat("ex05_5", "accuracy", "import os\nif os.fork() == 0:\n    os.setsid()\n    import time\n    time.sleep(60)")}),
          Case("subprocess_popen", zero=("05.5",), cells={"ex05_5": cheat("ex05_5", "accuracy", "import subprocess\nsubprocess.Popen(['/bin/sleep', '417.5'], start_new_session=True)")}),
          Case("kills_grader", zero=("05.5",), cells={"ex05_5": cheat("ex05_5", "accuracy", "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)")}),
          Case("ctypes_escape", zero=("05.5",), cells={"ex05_5": cheat("ex05_5", "accuracy", "import ctypes\nctypes.CDLL(None).getpid()")}),
          Case("infinite_loop_in_test", zero=("05.4",), cells={"ex05_4": "class EarlyStopping:\n    def __init__(self, patience=3, min_delta=0.0):\n        while True:\n            pass"}),
          Case("blocks_alarm_in_test", zero=("05.5",), cells={"ex05_5": "import signal\ndef accuracy(logits, targets):\n    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])\n    while True:\n        pass"}),
          Case("memory_hog", zero=("05.2",), cells={"ex05_2": "import numpy as np\ndef clip_grad_norm_(parameters, max_norm):\n    return np.ones((60000, 60000)).sum()"}),
          Case("deep_recursion", zero=("05.5",), cells={"ex05_5": "def accuracy(logits, targets):\n    return accuracy(logits, targets)"}),
          Case("segfault_in_test", zero=("05.5",), cells={"ex05_5": "import faulthandler\ndef accuracy(logits, targets):\n    faulthandler._sigsegv()"}),
          Case("abort_in_test", zero=("05.4",), cells={"ex05_4": "import os\nclass EarlyStopping:\n    def __init__(self, patience=3, min_delta=0.0):\n        os.abort()"}),
          Case("prints_gigabytes", zero=("05.5",), cells={"ex05_5": cheat("ex05_5", "accuracy", "import sys\nfor _ in range(300):\n    sys.stdout.write('x' * (1 << 20))\nraise RuntimeError('done printing')")})]
    # --- shortcuts: the framework's own implementation, however it is reached ------------------------------
    # chapter 05's clipping (05.2) and the loss cell's cross_entropy (05.6), each handing the work to the framework
    def clip(reference):
        """A clip_grad_norm_ that hands everything to `reference`."""
        return ("def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):\n"
                f"    return {reference}(parameters, max_norm, norm_type, error_if_nonfinite)\n")

    def loss(reference):
        """The honest LogSoftmax and nll_loss of 05.6 and a cross_entropy that hands everything to `reference`."""
        return (CORRECT["ex05_6"] + "\n\ndef cross_entropy(input, target, weight=None, ignore_index=-100, reduction='mean', "
                f"label_smoothing=0.0):\n    return {reference}(input, target, weight=weight, ignore_index=ignore_index, "
                "reduction=reduction, label_smoothing=label_smoothing)\n")

    c += [Case("shortcut_direct", zero=("05.2",), cells={"ex05_2": "import tinygrad_course as tc\n" + clip("tc.nn.utils.clip_grad_norm_")}),
          Case("shortcut_renamed_import", zero=("05.2",), cells={"ex05_2": "from tinygrad_course.nn.utils import clip_grad_norm_ as plain\n" + clip("plain")}),
          Case("shortcut_module_alias", zero=("05.2",), cells={"ex05_2": "import tinygrad_course.nn.utils as u\n" + clip("u.clip_grad_norm_")}),
          Case("shortcut_inside_a_function_class", zero=("05.6",), cells={"ex05_6": CORRECT["ex05_6"] + (
              "\n\nclass LogSoftmax(tc.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, dim):\n"
              "        out = tc.nn.functional.log_softmax(x, dim)\n        ctx.save_for_backward(out)\n        ctx.dim = dim\n"
              "        return out\n\n    @staticmethod\n    def backward(ctx, grad):\n        (out,) = ctx.saved_tensors\n"
              "        return grad - out.exp() * grad.sum(ctx.dim, keepdim=True), None\n")}),
          Case("shortcut_getattr_literal", zero=("05.2",), cells={"ex05_2": "import tinygrad_course as tc\n" + clip("getattr(tc.nn.utils, 'clip_grad_norm_')")}),
          Case("shortcut_getattr_computed", zero=("05.2",), cells={"ex05_2": "import tinygrad_course as tc\n" + clip("getattr(tc.nn.utils, 'clip_grad' + '_norm_')")}),
          Case("shortcut_dict", zero=("05.2",), cells={"ex05_2": "import tinygrad_course as tc\n" + clip("vars(tc.nn.utils)['clip_grad_norm_']")}),
          Case("shortcut_sys_modules", zero=("05.2",), cells={"ex05_2": "import sys\n" + clip("sys.modules['tinygrad_course.nn.utils'].clip_grad_norm_")}),
          Case("shortcut_importlib", zero=("05.2",), cells={"ex05_2": "import importlib\ndef clip_grad_norm_(parameters, max_norm):\n"
                                                                       "    return importlib.import_module('tinygrad_course.nn.utils').clip_grad_norm_(list(parameters), max_norm)"}),
          Case("shortcut_alias_in_other_cell", zero=("05.2",), extra=[(None, "import tinygrad_course as tc\n_clip = tc.nn.utils.clip_grad_norm_")],
               cells={"ex05_2": "def clip_grad_norm_(parameters, max_norm):\n    return _clip(list(parameters), max_norm)"}),
          Case("shortcut_via_helper", zero=("05.6",), cells={"ex05_6": "import tinygrad_course as tc\ndef _make(*args, **kw):\n"
                                                                      "    return tc.nn.functional.cross_entropy(*args, **kw)\n" + loss("_make")}),
          Case("shortcut_eval", zero=("05.2",), cells={"ex05_2": "import tinygrad_course as tc\n" + clip("eval('tc.nn.utils.' + 'clip_grad_norm_')")}),
          Case("shortcut_local_alias", zero=("05.2",), cells={"ex05_2": "from tinygrad_course import nn\ndef clip_grad_norm_(parameters, max_norm):\n"
                                                                        "    u = nn.utils\n    f = u.clip_grad_norm_\n    return f(list(parameters), max_norm)"}),
          Case("shortcut_sibling_alias", zero=("05.6",), cells={"ex05_6": "from tinygrad_course.nn.functional import nll_loss as _N\n"
                                                                         + CORRECT["ex05_6"] + "\n\nnll_loss = _N\n"}),
          Case("shortcut_assigned_to_reference", zero=("05.6",), cells={"ex05_6": "import tinygrad_course as tc\n" + CORRECT["ex05_6"]
                                                                                  + "\n\ncross_entropy = tc.nn.functional.cross_entropy\n"}),
          Case("shortcut_imported_as_exercise", zero=("05.2",), cells={"ex05_2": "from tinygrad_course.nn.utils import clip_grad_norm_"}),
          Case("shortcut_star_import", zero=("05.2",), cells={"ex05_2": "from tinygrad_course.nn.utils import *\nC = clip_grad_norm_\n" + clip("C")}),
          Case("shortcut_import_in_try_block", zero=("05.6",), cells={"ex05_6": "try:\n    from tinygrad_course.nn.functional import cross_entropy as _C\n"
                                                                                "except ImportError:\n    _C = None\n" + loss("_C")}),
          Case("shortcut_lambda_alias", zero=("05.2",), extra=[(None, "import tinygrad_course as tc\nmk = lambda *a, **k: tc.nn.utils.clip_grad_norm_(*a, **k)")],
               cells={"ex05_2": clip("mk")}),
          Case("shortcut_exec_defined_helper", zero=("05.2",), extra=[(None, "exec('def helper(ps, m):\\n    return __import__(\"tinygrad_course\").nn.utils.clip_grad_norm_(ps, m)')")],
               cells={"ex05_2": "def clip_grad_norm_(parameters, max_norm):\n    return helper(list(parameters), max_norm)"}),
          Case("shortcut_patched_code", zero=("05.2",), extra=[("ex05_2", "import tinygrad_course as tc\nclip_grad_norm_.__code__ = (lambda parameters, max_norm: "
                                                                       "tc.nn.utils.clip_grad_norm_(list(parameters), max_norm)).__code__")]),
          Case("shortcut_tripwire_disabled", zero=("05.2",), extra=[(None, "import contextlib\nfrom tinygrad_course.grading import shortcuts\n"
                                                                            "shortcuts.Tripwire.armed = lambda self: contextlib.nullcontext(self)")],
               cells={"ex05_2": "import tinygrad_course as tc\nH = [tc.nn.utils.clip_grad_norm_]\n" + clip("H[0]")}),
          Case("shortcut_library_patch", zero=("05.2",), extra=[(None, "import tinygrad_course as tc\nimport builtins\nbuiltins.MyClip = tc.nn.utils.clip_grad_norm_")],
               cells={"ex05_2": clip("MyClip")})]
    return c
