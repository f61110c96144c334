"""A catalogue of wrong answers for 10.11 (Topk and multinomial, what sampling runs): each realistic mistake fails
its check with a message that names it, the released stub fails, and the solution passes."""
import numpy as np
import pytest

import tinygrad_course as tc
from tinygrad_course.autograd.engine import Op
from tinygrad_course.grading import check

from .test_wrong_answers_ch04_06 import _fails, _stub
from .wrong_answers import edited_cell


def _define(*changes, folder="solutions"):
    """Topk and multinomial as the notebook's solution cell defines them, with `changes` (old, new) made first."""
    namespace = edited_cell("10_gpt.ipynb", "ex10_11", changes, {"np": np, "tc": tc, "Op": Op}, folder)
    return namespace["Topk"], namespace["multinomial"]


def test_sampling_solution_passes():
    check("10.11", *_define())


def test_the_released_stub_fails():
    _fails("10.11", *_define(folder="exercises"), phrase=r"not implemented yet")


def test_a_stub_function_fails():
    _fails("10.11", _define()[0], _stub, phrase=r"not implemented yet|NotImplementedError")


ORDER = 'np.argsort(-x if largest else x, axis=dim, kind="stable")'
WRONG = [
    ([(ORDER, 'np.argsort(x, axis=dim, kind="stable")')], r"these are the 3 smallest"),
    ([(ORDER, 'np.flip(np.argsort(x, axis=dim, kind="stable"), dim) if largest else '
              'np.argsort(x, axis=dim, kind="stable")')], r"equal values .* come in reverse order"),
    ([("return np.take_along_axis(x, indices, axis=dim), indices", "return np.take_along_axis(x, indices, axis=dim)")],
     r"to return a pair \(values, indices\)"),
    ([(ORDER, 'np.argsort(-x if largest else x, axis=-1, kind="stable")')], r"found along the last dim, not along dim=0"),
    ([("return zeros.scatter(ctx.dim, tc.from_numpy(ctx.indices), grad)",
       "return tc.cat([grad, zeros.narrow(ctx.dim, 0, ctx.shape[ctx.dim] - grad.shape[ctx.dim])], dim=ctx.dim)")],
     r"the gradient went to the first k positions"),
    ([("q = input / tc.empty_like", "q = input * tc.empty_like")], r"the winner of p \* q"),
    ([("return q.argmax(dim=-1, keepdim=True)", "return q.argmin(dim=-1, keepdim=True)")],
     r"the smallest p / q won"),
    ([("return q.argmax(dim=-1, keepdim=True)", "return q.argmax(dim=-1)")], r"int64 tensor of shape \(3, 1\)"),
    ([("exponential_(generator=generator)", "exponential_()")], r"the generator passed in was not used"),
    ([('        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")\n', "        pass\n")],
     r"expected RuntimeError to be raised"),
    ([("element < 0", "element <= 0")], r"the message of the RuntimeError"),
]


@pytest.mark.parametrize("changes, phrase", WRONG)
def test_sampling_wrong_answers_are_named(changes, phrase):
    _fails("10.11", *_define(*changes), phrase=phrase)
