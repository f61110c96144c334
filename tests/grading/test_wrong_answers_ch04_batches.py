"""A catalogue of wrong answers for 04.8 (batch_indices, the generator every DataLoader's BatchSampler
iterates): each realistic mistake fails its check with a message that names it, the released stub fails,
and the solution passes. The wrong answers are the solution cell with one change each."""
import json
from pathlib import Path

import pytest

from tinygrad_course.grading import check

from .test_wrong_answers_ch04_06 import _fails

ROOT = Path(__file__).resolve().parents[2]


def _define(*changes, folder="solutions"):
    nb = json.loads((ROOT / folder / "04_data.ipynb").read_text())
    source = next("".join(c["source"]) for c in nb["cells"]
                  if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "ex04_8")
    for old, new in changes:
        assert old in source, old
        source = source.replace(old, new)
    namespace = {}
    exec(compile(source, "<batch_indices>", "exec"), namespace)
    return namespace["batch_indices"]


def test_batch_indices_solution_passes():
    check("04.8", _define())


WRONG = [
    ([("            batch = []\n", "            batch.clear()\n")], r"every batch is the same list object"),
    ([("    if batch and not drop_last:\n        yield batch\n", "")],
     r"the last, shorter batch is missing although drop_last=False"),
    ([("    if batch and not drop_last:", "    if batch:")], r"drop_last=True must leave out the last, shorter batch"),
    ([("    for index in sampler:", "    for index in list(sampler):")],
     r"read past index 5 of a sampler.*yield each batch as soon as it is full"),
]


@pytest.mark.parametrize("changes, phrase", WRONG, ids=[str(i) for i in range(len(WRONG))])
def test_batch_indices_wrong_answers_are_named(changes, phrase):
    _fails("04.8", _define(*changes), phrase=phrase)


def test_batch_indices_stub_is_not_implemented_yet():
    _fails("04.8", _define(folder="exercises"), phrase=r"not implemented yet")
