"""A catalogue of wrong answers for 05.8 (LogSoftmax as a tc.autograd.Function): each realistic mistake fails
its check with a message that names it, the released stub fails, and the solution passes. The wrong answers
are the solution cell with one change each."""
import json
from pathlib import Path

import pytest

import tinygrad_course as tc
from tinygrad_course.grading import check

from .test_wrong_answers_ch04_06 import _fails

ROOT = Path(__file__).resolve().parents[2]


def _define(*changes, folder="solutions"):
    nb = json.loads((ROOT / folder / "05_training.ipynb").read_text())
    source = next("".join(c["source"]) for c in nb["cells"]
                  if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "ex05_8")
    for old, new in changes:
        assert old in source, old
        source = source.replace(old, new)
    namespace = {"tc": tc}
    exec(compile(source, "<LogSoftmax>", "exec"), namespace)
    return namespace["LogSoftmax"]


def test_log_softmax_solution_passes():
    check("05.8", _define())


WRONG = [
    ([("shifted = x - x.max(dim, keepdim=True).values", "shifted = x")], r"LogSoftmax\.apply.*exp overflowed"),
    ([("return grad - out.exp() * grad.sum(ctx.dim, keepdim=True), None", "return grad - out.exp(), None")],
     r"x\.grad after a backward pass.*grad - softmax: the softmax must be scaled"),
    ([("return grad - out.exp() * grad.sum(ctx.dim, keepdim=True), None", "return grad * (1 - out.exp()), None")],
     r"x\.grad after a backward pass.*element-wise, grad \* \(1 - softmax\)"),
    ([("out = shifted - shifted.exp().sum(dim, keepdim=True).log()",
       "out = shifted.exp() / shifted.exp().sum(dim, keepdim=True)")], r"your output is the softmax, not its logarithm"),
]


@pytest.mark.parametrize("changes, phrase", WRONG, ids=[str(i) for i in range(len(WRONG))])
def test_log_softmax_wrong_answers_are_named(changes, phrase):
    _fails("05.8", _define(*changes), phrase=phrase)


def test_log_softmax_stub_is_not_implemented_yet():
    _fails("05.8", _define(folder="exercises"), phrase=r"not implemented yet")
