"""Catalogue of wrong answers, chapter 05 (training): each realistic mistake fails with a message that names
it, the hint waits for a second failure, and the unsolved stub fails. (The optimizers' are chapter 04b's:
test_wrong_answers_ch04b.py.)"""
import math

import pytest

import tinygrad_course as tc
from tinygrad_course import nn

from .wrong_answers import assert_names_mistake, catalogue_tests

F = nn.functional


# ---- 05.1 train_step ----------------------------------------------------------------------------------------
def step_without_zero_grad(model, optimizer, loss_fn, x, y):
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


def step_zeroing_after_backward(model, optimizer, loss_fn, x, y):
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
    return loss.item()


def step_zeroing_at_the_end(model, optimizer, loss_fn, x, y):
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return loss.item()


def step_returning_the_tensor(model, optimizer, loss_fn, x, y):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


def step_that_never_steps(model, optimizer, loss_fn, x, y):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    return loss.item()


# ---- 04b.1 - 05.3 ----------------------------------------------------------------------------------------------
def clip_each_parameter(parameters, max_norm):
    total = 0.0
    for p in parameters:
        if p.grad is None:
            continue
        norm = float((p.grad * p.grad).sum()) ** 0.5
        total += norm ** 2
        if norm > max_norm:
            p.grad.mul_(max_norm / (norm + 1e-6))
    return total ** 0.5


def clip_returning_the_clipped_norm(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    total = sum(float((g * g).sum()) for g in grads) ** 0.5
    scale = min(1.0, max_norm / (total + 1e-6))
    for g in grads:
        g.mul_(scale)
    return sum(float((g * g).sum()) for g in grads) ** 0.5


def clip_returning_the_squared_norm(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    squared = sum(float((g * g).sum()) for g in grads)
    scale = max_norm / (squared ** 0.5 + 1e-6)
    if scale < 1:
        for g in grads:
            g.mul_(scale)
    return squared


def clip_by_summed_norms(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    total = sum(float((g * g).sum()) ** 0.5 for g in grads)      # adds the norms instead of the squares
    if total > max_norm:
        for g in grads:
            g.mul_(max_norm / (total + 1e-6))
    return total


def clip_scaled_by_summed_norms(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    total = sum(float((g * g).sum()) for g in grads) ** 0.5
    summed = sum(float((g * g).sum()) ** 0.5 for g in grads)
    if total > max_norm:
        for g in grads:
            g.mul_(max_norm / summed)
    return total


def _clip_with(mistake):
    def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
        parameters = [parameters] if isinstance(parameters, tc.Tensor) else parameters
        grads = [p.grad for p in parameters if p.grad is not None]
        norm_type = 2.0 if mistake == "norm_type ignored" else float(norm_type)
        if norm_type == float("inf"):
            total = max(float(g.abs().max()) for g in grads)
        else:
            total = sum(float((g.abs() ** norm_type).sum()) for g in grads) ** (1.0 / norm_type)
        if error_if_nonfinite and mistake != "never raises" and not math.isfinite(total):
            raise RuntimeError("non-finite norm")
        if total > max_norm:
            for g in grads:
                g.mul_(max_norm / (total + 1e-6))
        return total if mistake == "returns a float" else tc.tensor(total)
    clip_grad_norm_.__name__ = "clip_" + mistake.replace(" ", "_")
    return clip_grad_norm_


clip_ignoring_norm_type = _clip_with("norm_type ignored")
clip_that_never_raises = _clip_with("never raises")
clip_returning_a_float = _clip_with("returns a float")


def evaluate_averaging_batch_means(model, loader):
    model.eval()
    losses, correct, count = [], 0, 0
    with tc.no_grad():
        for x, y in loader:
            logits = model(x)
            losses.append(F.cross_entropy(logits, y).item())
            correct += (logits.argmax(dim=1) == y).sum().item()
            count += len(y)
    return sum(losses) / len(losses), correct / count


def evaluate_in_training_mode(model, loader):
    total, correct, count = 0.0, 0, 0
    with tc.no_grad():
        for x, y in loader:
            logits = model(x)
            total += F.cross_entropy(logits, y, reduction="sum").item()
            correct += (logits.argmax(dim=1) == y).sum().item()
            count += len(y)
    return total / count, correct / count


def evaluate_with_a_graph(model, loader):
    model.eval()
    total, correct, count = 0.0, 0, 0
    for x, y in loader:
        logits = model(x)
        total += F.cross_entropy(logits, y, reduction="sum").item()
        correct += (logits.argmax(dim=1) == y).sum().item()
        count += len(y)
    return total / count, correct / count


class StopsLate:
    def __init__(self, patience=3, min_delta=0.0):
        self.patience, self.min_delta, self.best, self.bad = patience, min_delta, float("inf"), 0

    def step(self, loss):
        if loss < self.best - self.min_delta:
            self.best, self.bad = loss, 0
        else:
            self.bad += 1
        return self.bad > self.patience


class NeverResets(StopsLate):
    def step(self, loss):
        if loss < self.best - self.min_delta:
            self.best = loss
        else:
            self.bad += 1
        return self.bad >= self.patience


class IgnoresMinDelta(StopsLate):
    def step(self, loss):
        if loss < self.best:
            self.best, self.bad = loss, 0
        else:
            self.bad += 1
        return self.bad >= self.patience


def accuracy_count(logits, targets):
    return (logits.argmax(dim=1) == targets).sum().item()


def accuracy_tensor(logits, targets):
    return (logits.argmax(dim=1) == targets).float().mean()


def accuracy_flat_argmax(logits, targets):
    return (logits.argmax() == targets).float().mean().item()


CATALOGUE = [
    ("05.1", step_without_zero_grad, ["the gradient doubled", "no zero_grad", "input: x = tc.randn(8, 4)"]),
    ("05.1", step_zeroing_after_backward, ["weight.grad is empty after your step and the weights did not move",
                                           "wiped the gradients before step() could use them"]),
    ("05.1", step_zeroing_at_the_end, ["step() did use the gradients (the weights moved)",
                                       "zero_grad ran at the end of the step"]),
    ("05.1", step_returning_the_tensor, ["to return the loss as a Python float (got Tensor)"]),
    ("05.1", step_that_never_steps, ["the weights did not move", "never stepped"]),
    ("05.2", clip_each_parameter, ["clipped each parameter separately"]),
    ("05.2", clip_returning_the_clipped_norm, ["the norm after clipping", "input: gradients of shapes"]),
    ("05.2", clip_returning_the_squared_norm, ["the squared norm"]),
    ("05.2", clip_by_summed_norms, ["you added up the parameters' norms"]),
    ("05.2", clip_scaled_by_summed_norms, ["scaled by 1 / (the sum of the parameters' norms)"]),
    ("05.2", clip_ignoring_norm_type, ["norm_type=inf", "that is the 2-norm: norm_type was ignored"]),
    ("05.2", clip_that_never_raises, ["error_if_nonfinite=True", "expected RuntimeError to be raised"]),
    ("05.2", clip_returning_a_float, ["to return the norm as a 0-d tensor", "(got float)"]),
    ("05.3", evaluate_averaging_batch_means, ["averaged the batch means", "36 samples"]),
    ("05.3", evaluate_in_training_mode, ["two evaluations to give the same loss"]),
    ("05.3", evaluate_with_a_graph, ["without building a graph"]),
    ("05.4", StopsLate, ["did not stop after 3 epochs without improvement"]),
    ("05.4", NeverResets, ["stopped although 0.7 had just improved"]),
    ("05.4", IgnoresMinDelta, ["smaller than min_delta were counted as improvements"]),
    ("05.5", accuracy_count, ["you returned the int 2", "not the fraction"]),
    ("05.5", accuracy_tensor, ["a Python float (got Tensor)"]),
    ("05.5", accuracy_flat_argmax, ["expected 0.5, got 0.0", "input: logits = [[2. , 1. , 0.1]"]),
]


@pytest.mark.parametrize("exercise, wrong, phrases", CATALOGUE, ids=[f"{e}-{w.__name__}" for e, w, _ in CATALOGUE])
def test_a_wrong_answer_fails_naming_its_mistake(exercise, wrong, phrases):
    assert_names_mistake(exercise, (wrong,), *phrases)


NAMES = {"05.1": "train_step", "05.2": "clip_grad_norm_", "05.3": "evaluate", "05.4": "EarlyStopping",
         "05.5": "accuracy"}


test_the_stub_fails, test_every_exercise_has_two_wrong_answers = catalogue_tests(NAMES, CATALOGUE, "05")
