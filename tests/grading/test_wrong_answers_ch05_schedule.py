"""A catalogue of wrong answers for 05.9 (cosine_lr, the closed form CosineAnnealingLR follows): each realistic
mistake fails its check with a message that names it, the released stub fails, and the solution passes."""
import json
import math
from pathlib import Path

import pytest

from tinygrad_course.grading import check

from .test_wrong_answers_ch04_06 import _fails

ROOT = Path(__file__).resolve().parents[2]


def _define(*changes, folder="solutions"):
    nb = json.loads((ROOT / folder / "05_training.ipynb").read_text())
    source = next("".join(c["source"]) for c in nb["cells"]
                  if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "ex05_9")
    for old, new in changes:
        assert old in source, old
        source = source.replace(old, new)
    namespace = {"math": math}
    exec(compile(source, "<cosine_lr>", "exec"), namespace)
    return namespace["cosine_lr"]


def test_cosine_lr_solution_passes():
    check("05.9", _define())


FORMULA = "eta_min + (base_lr - eta_min) * (1 + math.cos(math.pi * step / T_max)) / 2"
WRONG = [
    ([(FORMULA, "eta_min + (base_lr - eta_min) * (1 - math.cos(math.pi * step / T_max)) / 2")],
     r"starts at eta_min and rises"),
    ([(FORMULA, "base_lr * (1 + math.cos(math.pi * step / T_max)) / 2")], r"eta_min is missing"),
    ([(FORMULA, "eta_min + (base_lr - eta_min) * (1 + math.cos(math.pi * step / (T_max - 1))) / 2")],
     r"one step early \(T_max - 1 instead of T_max\)"),
]


@pytest.mark.parametrize("changes, phrase", WRONG, ids=[str(i) for i in range(len(WRONG))])
def test_cosine_lr_wrong_answers_are_named(changes, phrase):
    _fails("05.9", _define(*changes), phrase=phrase)


def test_cosine_lr_stub_is_not_implemented_yet():
    _fails("05.9", _define(folder="exercises"), phrase=r"not implemented yet")
