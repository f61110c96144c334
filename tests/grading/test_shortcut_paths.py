"""Shortcut detection on assignments 04b and 05: every way of binding a name at module level is followed (blocks,
unpacking, walrus, star imports, lambdas, partials, containers, patched code, the exercise bound to the
reference itself), names only a dynamic binding could define are reported, and honest code is left alone."""
import json

import pytest

from tinygrad_course.grading.markers import keep_solutions
from tinygrad_course.grading.notebook_files import dumps, is_solution_cell, nbgrader_meta, read, reads
from tinygrad_course.grading.sandbox.plan import build_plan
from tinygrad_course.grading.source_shortcuts import shortcut_findings

from .redteam.build import ROOT

NOTEBOOKS = {"04b": "04b_optimizers.ipynb", "05": "05_training.ipynb"}  # the optimizers, clipping
CORRECT = {nbgrader_meta(c)["grade_id"]: keep_solutions(c.source) for name in NOTEBOOKS.values()
           for c in read(ROOT / "solutions" / name).cells if is_solution_cell(c)}

SGD = ("class Optimizer:\n    pass\nclass SGD(Optimizer):\n"
       "    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False):\n"
       "        self.o = {}(list(params), lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov)\n"
       "        self.param_groups, self.state = self.o.param_groups, self.o.state\n"
       "    def zero_grad(self, set_to_none=True):\n        self.o.zero_grad(set_to_none)\n"
       "    def step(self, closure=None):\n        return self.o.step(closure)\n")
TC = "import tinygrad_course as tc\n"
CHEATS = {
    "assigned_to_the_reference": {"ex04b_2": TC + "Optimizer, SGD = tc.optim.Optimizer, tc.optim.SGD"},
    "imported_as_the_exercise": {"ex04b_2": "from tinygrad_course.optim import Optimizer, SGD"},
    "function_bound_to_the_reference": {"ex05_2": TC + "clip_grad_norm_ = tc.nn.utils.clip_grad_norm_"},
    "star_import": {"ex04b_2": "from tinygrad_course.optim import *\nS = SGD\n" + SGD.format("S")},
    "import_inside_try": {"ex04b_2": "try:\n    from tinygrad_course.optim import SGD as S\nexcept ImportError:\n    S = None\n"
                                    + SGD.format("S")},
    "import_inside_if": {"ex04b_2": "if True:\n    import tinygrad_course.optim as O\n" + SGD.format("O.SGD")},
    "class_inside_if": {"ex04b_2": TC + "if True:\n    Optimizer = tc.optim.Optimizer\n    class SGD(tc.optim.SGD):\n        pass"},
    "tuple_unpacking": {"ex04b_2": TC + "S, T = tc.optim.SGD, 1\n" + SGD.format("S")},
    "walrus": {"ex04b_2": TC + "(S := tc.optim.SGD)\n" + SGD.format("S")},
    "lambda_alias": {"ex04b_2": TC + "mk = lambda *a, **k: tc.optim.SGD(*a, **k)\n" + SGD.format("mk")},
    "partial_alias": {"ex04b_2": "import functools\n" + TC + "mk = functools.partial(tc.optim.SGD)\n" + SGD.format("mk")},
    "list_holder": {"ex04b_2": TC + "H = [tc.optim.SGD]\n" + SGD.format("H[0]")},
    "dict_holder": {"ex04b_2": TC + "H = {'a': tc.optim.SGD}\n" + SGD.format("H['a']")},
    "for_loop_binding": {"ex04b_2": TC + "for n in ['SGD']:\n    S = getattr(tc.optim, n)\n" + SGD.format("S")},
    "with_binding": {"ex04b_2": "import contextlib\n" + TC + "with contextlib.nullcontext(tc.optim.SGD) as S:\n    pass\n"
                               + SGD.format("S")},
    "type_call": {"ex04b_2": TC + "Optimizer = tc.optim.Optimizer\nSGD = type('SGD', (tc.optim.SGD,), {})"},
    "patched_code": {"ex05_2": CORRECT["ex05_2"] + "\n" + TC + "clip_grad_norm_.__code__ = (lambda parameters, max_norm: "
                               "tc.nn.utils.clip_grad_norm_(list(parameters), max_norm)).__code__"},
    "patched_method": {"ex04b_2": CORRECT["ex04b_2"] + "\n" + TC + "SGD.__init__ = lambda self, params, lr, momentum=0.0: "
                                 "setattr(self, 'o', tc.optim.SGD(list(params), lr=lr, momentum=momentum))"},
    "exec_binding": {"ex04b_2": "exec('from tinygrad_course.optim import SGD as S')\n" + SGD.format("S")},
    "exec_defined_helper": {"ex05_2": "exec('def helper(ps, m):\\n    return __import__(\"tinygrad_course\").nn.utils.clip_grad_norm_(ps, m)')\n"
                                      "def clip_grad_norm_(parameters, max_norm):\n    return helper(list(parameters), max_norm)"},
    "globals_store": {"ex04b_2": TC + "globals()['S'] = tc.optim.SGD\n" + SGD.format("S")},
    "function_stored_into_a_library": {"ex05_2": TC + "import builtins\nbuiltins.MyClip = tc.nn.utils.clip_grad_norm_\n"
                                               "def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):\n"
                                               "    return MyClip(parameters, max_norm, norm_type, error_if_nonfinite)\n"},
    "builtins_dict_store": {"ex04b_2": TC + "import builtins\nvars(builtins)['S'] = tc.optim.SGD\n" + SGD.format("S")},
}
HONEST = {
    "star_import_of_math": {"ex05_2": "from math import *\n" + CORRECT["ex05_2"].replace("def clip_grad_norm_", "_ = sqrt(4)\ndef clip_grad_norm_")},
    "vars_and_display_in_a_cell": {"ex04b_2": CORRECT["ex04b_2"] + "\nprint(vars(SGD).keys())\n"
                                                                 "def show(x):\n    display(x)\n"},
    "unpacked_settings": {"ex04b_2": "LR, MOMENTUM = 0.1, 0.9\n" + CORRECT["ex04b_2"]},
    "global_set_in_a_helper_and_vars": {"ex05_2": "def _count():\n    global CALLS\n    CALLS = 1\n" + CORRECT["ex05_2"].replace(
        "    grads = ", "    _count()\n    assert CALLS == 1\n    grads = ", 1) + "\nprint(sorted(vars()))\n"},
    "reference_compared_in_an_if_block": {"ex04b_2": CORRECT["ex04b_2"] + "\n" + TC + "if True:\n    ref = tc.optim.SGD\n"},
}


def _findings(cells: dict) -> dict:
    """What the grader finds in the released notebook of the cells' chapter with `cells` in place (the
    solution's code in every other exercise cell)."""
    chapter = next(iter(cells))[2:].split("_")[0]  # "ex04b_2" -> "04b"
    solution = read(ROOT / "solutions" / NOTEBOOKS[chapter])
    nb = reads(dumps(read(ROOT / "exercises" / NOTEBOOKS[chapter])))
    for cell in nb.cells:
        grade_id = nbgrader_meta(cell).get("grade_id")
        if grade_id in CORRECT:
            cell.source = cells.get(grade_id, CORRECT[grade_id])
    return shortcut_findings(build_plan(solution, json.loads(dumps(nb))), solution)


@pytest.mark.parametrize("name", sorted(CHEATS))
def test_every_binding_path_to_the_reference_is_followed(name):
    exercise = {"ex04b_2": "04b.2", "ex05_2": "05.2"}[next(iter(CHEATS[name]))]
    # these bind the name Optimizer to the framework's too, so the base's exercise (04b.1) is the reference's
    also = {"04b.1"} if name in ("assigned_to_the_reference", "imported_as_the_exercise", "class_inside_if", "type_call") else set()
    assert set(_findings(CHEATS[name])) == {exercise} | also


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_module_level_code_accuses_no_one(name):
    assert _findings(HONEST[name]) == {}
