"""A catalogue of wrong answers for 04.10 (a Generator's uniform, normal and permutation, as PyTorch draws them):
each realistic mistake fails the check with a message that names it, the released stub fails, and the solution
passes. The wrong answers are the solution cell with one change each."""
import numpy as np
import pytest

import tinygrad_course as tc
from tinygrad_course.grading import check

from .test_wrong_answers_ch04_06 import _fails
from .wrong_answers import edited_cell


def _define(*changes, folder="solutions"):
    return edited_cell("04_data.ipynb", "ex04_10", changes, {"tc": tc, "np": np}, folder)["Generator"]


def test_the_solution_passes():
    check("04.10", _define())


_BLOCK = ("    radius = np.sqrt(-2 * np.log(1 - u[:, :8]))\n    theta = 2 * np.pi * u[:, 8:]\n"
          "    return np.concatenate([radius * np.cos(theta), radius * np.sin(theta)], axis=1).reshape(-1)")
WRONG = [
    # uniform
    ([("(engine.words32(n) & np.uint32(2 ** 24 - 1))", "(engine.words32(n) >> np.uint32(8))")],
     r"the top 24 bits of each word \(word >> 8\): PyTorch keeps the low 24 bits"),
    ([("            out = (x.astype(np.float64) * np.float64(hi - lo) + np.float64(lo)).astype(np.float32)",
       "            out = x * (hi - lo) + lo")],
     r"x \* \(b - a\) \+ a was rounded twice .*: PyTorch's compiled kernel rounds it once"),
    ([("        out[out == hi] = lo\n", "")],
     r"values equal b = 1000001.0: near b, x \* \(b - a\) \+ a rounds up to b"),
    # normal
    ([("radius * np.cos(theta), radius * np.sin(theta)", "radius * np.sin(theta), radius * np.cos(theta)")],
     r"sine and cosine are swapped"),
    ([("np.log(1 - u[:, :8])", "np.log(u[:, :8])")], r"the radius uses log\(u\): PyTorch uses u1 = 1 - u"),
    ([("    radius = np.sqrt(-2 * np.log(1 - u[:, :8]))\n", "    radius = 1.0\n")],
     r"the radius sqrt\(-2 log\(u1\)\) is missing"),
    ([(_BLOCK, "    radius = np.sqrt(-2 * np.log(1 - u[:, 0::2]))\n    theta = 2 * np.pi * u[:, 1::2]\n"
               "    return np.stack([radius * np.cos(theta), radius * np.sin(theta)], axis=2).reshape(-1)")],
     r"the pairs are interleaved"),
    ([("out[n - 16:] = box_muller_16(unit_floats(self._engine, 16, dtype))",
       "out[n - 16:] = box_muller_16(u[n - 16:])")],
     r"the last 16 values come from the last 16 of the n uniforms: PyTorch draws 16 new uniforms"),
    ([("    if generator._next_double is not None:\n", "    if False:\n")],
     r"each value drew a new pair: PyTorch returns the pair's sine value, kept in self._next_double"),
    ([("        if n >= 16 and contiguous:", "        if n >= 16:")],
     r"a tensor that is not contiguous takes the scalar path whatever its size"),
    # permutation
    ([("            j = i + word % (n - i)", "            j = word % (n - i)")],
     r"the swap partner is random\(\) % \(n - i\) counted from 0: PyTorch counts it from i"),
    ([("        for i, word in enumerate(words):\n            j = i + word % (n - i)",
       "        for i, word in zip(range(n - 1, 0, -1), words):\n            j = word % (i + 1)")],
     r"the swaps run from the end \(Knuth's order\)"),
]


@pytest.mark.parametrize("changes, phrase", WRONG, ids=[f"04.10-{i}" for i in range(len(WRONG))])
def test_a_wrong_answer_fails_naming_its_mistake(changes, phrase):
    _fails("04.10", _define(*changes), phrase=phrase)


def test_the_stub_is_not_implemented_yet():
    _fails("04.10", _define(folder="exercises"), phrase=r"not implemented yet")
