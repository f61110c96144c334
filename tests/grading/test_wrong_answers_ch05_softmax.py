"""A catalogue of wrong answers for 05.6 (log_softmax and the cross-entropy loss: LogSoftmax as a
tc.autograd.Function, nll_loss and cross_entropy): each realistic mistake fails its check with a message that
names it, the released stub fails, and the solution passes. The wrong answers are the solution cell with one
change each."""
import pytest

import tinygrad_course as tc
from tinygrad_course.grading import check

from .test_wrong_answers_ch04_06 import _fails
from .wrong_answers import edited_cell

NAMES = ("LogSoftmax", "nll_loss", "cross_entropy")


def _define(*changes, folder="solutions"):
    namespace = edited_cell("05_training.ipynb", "ex05_6", changes, {"tc": tc}, folder)
    return tuple(namespace[name] for name in NAMES)


def test_loss_cell_solution_passes():
    check("05.6", *_define())


WRONG = [
    ([("shifted = x - x.max(dim, keepdim=True).values", "shifted = x")], r"LogSoftmax\.apply.*exp overflowed"),
    ([("return grad - out.exp() * grad.sum(ctx.dim, keepdim=True), None", "return grad - out.exp(), None")],
     r"x\.grad after a backward pass.*grad - softmax: the softmax must be scaled"),
    ([("return grad - out.exp() * grad.sum(ctx.dim, keepdim=True), None", "return grad * (1 - out.exp()), None")],
     r"x\.grad after a backward pass.*element-wise, grad \* \(1 - softmax\)"),
    ([("out = shifted - shifted.exp().sum(dim, keepdim=True).log()",
       "out = shifted.exp() / shifted.exp().sum(dim, keepdim=True)")], r"your output is the softmax, not its logarithm"),
    # nll_loss: the mean over every target, the ignored ones included
    ([("losses.sum() / share.sum()", "losses.mean()")],
     r"nll_loss\(input, target\).*divides by all 6 targets; only the 5 that are not ignore_index count.*"
     r"input: input of shape \(6, 5\), target = \[0, 4, -100, 2, 1, 3\]"),
    # the sum where the mean was asked
    ([('losses.sum() if reduction == "sum" else losses.sum() / share.sum()', "losses.sum()")],
     r"nll_loss\(input, target\).*the sum where the mean was asked"),
    ([("losses = -pick(rows, labels) * share", "losses = pick(rows, labels) * share")],
     r"nll_loss\(input, target\).*wrong sign: a log-probability is <= 0"),
    # (N, C, d1) scores reshaped without moving the class dim last
    ([("input.movedim(1, -1).reshape(-1, classes)", "input.reshape(-1, classes)")],
     r"your rows are input\.reshape\(-1, C\).*mixes classes and positions.*input of shape \(2, 3, 4\)"),
    # cross_entropy: softmax, then log, instead of log_softmax
    ([("log_probs = LogSoftmax.apply(input, 1)", "log_probs = input.softmax(1).log()")],
     r"cross_entropy\(input, target\).*log\(softmax\(x\)\) underflows"),
    ([("loss = nll_loss(log_probs, target", "loss = nll_loss(input, target")],
     r"your cross_entropy is nll_loss of the logits themselves"),
    ([("log_probs.mean(1, keepdim=True)", "log_probs.sum(1, keepdim=True)")],
     r"label_smoothing=.*your smoothing term sums -log p over the classes"),
    ([("return (1 - label_smoothing) * loss + label_smoothing * uniform", "return loss + label_smoothing * uniform")],
     r"label_smoothing=.*not scaled by \(1 - label_smoothing\)"),
    # PyTorch's errors
    ([('        raise IndexError(f"Target {labels[outside][0].item()} is out of bounds.")', "        pass")],
     r"nll_loss\(input \(3, 4\), target \[0, 1, 5\]\): expected IndexError"),
    ([('f"{reduction} is not a valid value for reduction"', 'f"unknown reduction {reduction}"')],
     r"the message of nll_loss\(input \(3, 4\), target, reduction='avg'\).*expected 'avg is not a valid value"),
]


@pytest.mark.parametrize("changes, phrase", WRONG, ids=[str(i) for i in range(len(WRONG))])
def test_loss_cell_wrong_answers_are_named(changes, phrase):
    _fails("05.6", *_define(*changes), phrase=phrase)


def test_loss_cell_stub_is_not_implemented_yet():
    _fails("05.6", *_define(folder="exercises"), phrase=r"not implemented yet")
