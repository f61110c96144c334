"""A catalogue of wrong answers for 04b.4 (the LRScheduler base, CosineAnnealingLR and LambdaLR on it): each realistic
mistake fails its check with a message that names it, the released stub fails, and the solution passes."""
import math

import pytest

import tinygrad_course as tc
from tinygrad_course.grading import check

from .test_wrong_answers_ch04_06 import _fails
from .wrong_answers import edited_cell


def _define(*changes, folder="solutions"):
    namespace = edited_cell("04b_optimizers.ipynb", "ex04b_4", changes, {"math": math, "tc": tc}, folder)
    return namespace["LRScheduler"], namespace["CosineAnnealingLR"], namespace["LambdaLR"]


def test_scheduler_solution_passes():
    check("04b.4", *_define())


LAMBDA = "base_lr * lr_lambda(self.last_epoch) for lr_lambda, base_lr in zip(self.lr_lambdas, self.base_lrs)"
COSINE = "(1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2"
WRONG = [
    ([(COSINE, "(1 - math.cos(math.pi * self.last_epoch / self.T_max)) / 2")], r"starts at eta_min and rises"),
    ([("self.eta_min + (base_lr - self.eta_min) * " + COSINE, "base_lr * " + COSINE)], r"eta_min is missing"),
    ([("self.last_epoch / self.T_max", "self.last_epoch / (self.T_max - 1)")],
     r"one step early \(T_max - 1 instead of T_max\)"),
    ([("        self.last_epoch += 1\n        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):\n"
       "            group[\"lr\"] = lr\n",
       "        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):\n            group[\"lr\"] = lr\n"
       "        self.last_epoch += 1\n")], r"one step behind"),
    ([("        self._step_count = 0\n        self.step()\n", "        self._step_count = 0\n")],
     r"one step behind: __init__ did not set the rates of step 0"),
    ([("if key != \"optimizer\"}", "}")], r"without the optimizer"),
    ([("        self._step_count += 1\n", "")], r"the framework reads it to warn, as PyTorch does"),
    ([("        if not isinstance(optimizer, tc.optim.Optimizer):\n"
       "            raise TypeError(f\"{type(optimizer).__name__} is not an Optimizer\")\n", "")],
     r"expected TypeError, but your code raised AttributeError"),
    ([("raise TypeError(f\"{type(optimizer).__name__} is not an Optimizer\")",
       "raise TypeError(\"not an optimizer\")")], r"the TypeError's message \(PyTorch's words\)"),
    ([(LAMBDA, "lr_lambda(self.last_epoch) for lr_lambda in self.lr_lambdas")],
     r"your rates are the lambda's values themselves"),
    ([(LAMBDA, "group[\"lr\"] * lr_lambda(self.last_epoch) for lr_lambda, group in zip(self.lr_lambdas, "
               "self.optimizer.param_groups)")], r"the factors compound \(that is MultiplicativeLR\)"),
    ([(LAMBDA, "base_lr * lr_lambda(self.last_epoch + 1) for lr_lambda, base_lr in zip(self.lr_lambdas, "
               "self.base_lrs)")], r"one step ahead: the lambda was called with last_epoch \+ 1"),
    ([("            self.lr_lambdas = list(lr_lambda)\n", "            self.lr_lambdas = [lr_lambda[0]] * len(lr_lambda)\n")],
     r"the second group follows the first group's function"),
    ([("            if len(lr_lambda) != len(optimizer.param_groups):\n"
       "                raise ValueError(f\"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}\")\n",
       "")], r"LambdaLR\(opt, \[one function\]\) for an optimizer with 2 groups: expected ValueError"),
    ([("        super().__init__(optimizer, last_epoch)\n        ### END SOLUTION\n\n    def get_lr(self):\n"
       "        ### BEGIN SOLUTION\n        return [base_lr",
       "        ### END SOLUTION\n\n    def get_lr(self):\n        ### BEGIN SOLUTION\n        return [base_lr"),
      ("        if isinstance(lr_lambda, (list, tuple)):\n",
       "        super().__init__(optimizer, last_epoch)\n        if isinstance(lr_lambda, (list, tuple)):\n")],
     r"expected AttributeError|'lr_lambdas'"),
    ([("            group.setdefault(\"initial_lr\", group[\"lr\"])\n", "            pass\n"),
      ("[group[\"initial_lr\"] for group", "[group[\"lr\"] for group")], r"each group's 'initial_lr'"),
]


@pytest.mark.parametrize("changes, phrase", WRONG, ids=[str(i) for i in range(len(WRONG))])
def test_scheduler_wrong_answers_are_named(changes, phrase):
    _fails("04b.4", *_define(*changes), phrase=phrase)


def test_scheduler_stub_is_not_implemented_yet():
    _fails("04b.4", *_define(folder="exercises"), phrase=r"not implemented yet")
