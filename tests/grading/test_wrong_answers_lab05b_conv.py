"""A catalogue of wrong answers for the lab's convolution exercises (05b.7 Conv2d, 05b.8 MaxPool2d): each
realistic mistake fails its check with a message that names it, the released stub fails, and the solution
passes. The wrong answers are the solution cell with one change each."""
import json
from pathlib import Path

import pytest

import tinygrad_course as tc
from tinygrad_course.grading import check

from .test_wrong_answers_ch04_06 import _fails

ROOT = Path(__file__).resolve().parents[2]


def _cell(grade_id, folder="solutions"):
    nb = json.loads((ROOT / folder / "05b_lab.ipynb").read_text())
    return next("".join(c["source"]) for c in nb["cells"]
                if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id)


def _define(name, *changes, folder="solutions"):
    """The class `name` from the solution cells (05b.7's windows included), with each (old, new) applied."""
    source = _cell("ex05b_7", folder) + "\n\n" + _cell("ex05b_8", folder)
    for old, new in changes:
        assert old in source, old
        source = source.replace(old, new)
    namespace = {"tc": tc, "F": tc.nn.functional}
    exec(compile(source, f"<{name}>", "exec"), namespace)
    return namespace[name]


@pytest.mark.parametrize("exercise, name", [("05b.7", "Conv2dFunction"), ("05b.8", "MaxPool2dFunction")])
def test_conv_solutions_pass(exercise, name):
    check(exercise, _define(name))


WRONG = [
    ("05b.7", "Conv2dFunction", [("weight.reshape(o, c * k * k).T", "weight.flip((2, 3)).reshape(o, c * k * k).T")],
     r"Conv2dFunction\.apply.*true convolution \(the kernel flipped\)"),
    ("05b.7", "Conv2dFunction", [("(padding,) * 4", "(0,) * 4")],
     r"the output shape for x of shape \(2, 3, 7, 6\).*expected \(2, 4, 7, 6\), got \(2, 4, 5, 4\).*floor\("),
    ("05b.7", "Conv2dFunction", [("            out = out + bias\n", "            pass\n")],
     r"Conv2dFunction\.apply.*the bias is not added"),
    ("05b.7", "Conv2dFunction", [("+= \\\n", "= \\\n")],
     r"x\.grad: each window's gradient.*differs where windows overlap.*add \(\+=\)"),
    ("05b.8", "MaxPool2dFunction", [("return flat.max(-1).values", "return flat.mean(-1)")],
     r"MaxPool2dFunction\.apply\(x, 2, 2\).*each window's mean, not its maximum"),
    ("05b.8", "MaxPool2dFunction",
     [("hit = (ctx.argmax == i * k + j).to(grad.dtype)",
       "hit = (windows(ctx.x, k, s)[:, :, :, :, i, j] == ctx.out).to(grad.dtype)"),
      ("ctx.shape, ctx.k, ctx.stride = x.shape, k, stride",
       "ctx.shape, ctx.k, ctx.stride = x.shape, k, stride\n        ctx.x, ctx.out = x.contiguous(), flat.max(-1).values")],
     r"x\.grad after a backward pass.*every tied maximum got the gradient"),
]


@pytest.mark.parametrize("exercise, name, changes, phrase", WRONG, ids=[f"{w[0]}-{i}" for i, w in enumerate(WRONG)])
def test_conv_wrong_answers_are_named(exercise, name, changes, phrase):
    _fails(exercise, _define(name, *changes), phrase=phrase)


@pytest.mark.parametrize("exercise, name", [("05b.7", "Conv2dFunction"), ("05b.8", "MaxPool2dFunction")])
def test_conv_stubs_are_not_implemented_yet(exercise, name):
    stub = _define(name, folder="exercises")
    _fails(exercise, stub, phrase=r"not implemented yet")
