"""Catalogue of wrong answers, chapter 05 (training): each realistic mistake fails with a message that names
it (the optimizers' after the very step where it happens), the hint waits for a second failure, and the
unsolved stub fails."""
import pytest

import tinygrad_course as tc
from tinygrad_course import nn
from tinygrad_course.grading import check, reset_attempts

from .wrong_answers import assert_names_mistake, catalogue_tests, solution

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


# ---- 05.2 SGD with momentum --------------------------------------------------------------------------------
class _SGDBase:
    def __init__(self, params, lr, momentum=0.0):
        self.params, self.lr, self.momentum = list(params), lr, momentum
        self.velocity = [None] * len(self.params)

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def _velocity(self, i, g):
        v = self.velocity[i]
        self.velocity[i] = g.clone() if v is None else self.momentum * v + g
        return self.velocity[i]


class SGDAscent(_SGDBase):
    def step(self):
        with tc.no_grad():
            for i, p in enumerate(self.params):
                p += self.lr * self._velocity(i, p.grad)  # the sign


class SGDForgetsVelocity(_SGDBase):
    def step(self):
        with tc.no_grad():
            for p in self.params:
                v = p.grad.clone()  # a fresh velocity every step
                p -= self.lr * v


class SGDDampened(_SGDBase):
    def step(self):
        with tc.no_grad():
            for i, p in enumerate(self.params):
                v = self.velocity[i] if self.velocity[i] is not None else tc.zeros_like(p)
                self.velocity[i] = self.momentum * v + (1 - self.momentum) * p.grad
                p -= self.lr * self.velocity[i]


class SGDKeepsGradients(_SGDBase):
    def zero_grad(self):
        pass  # forgotten

    def step(self):
        with tc.no_grad():
            for i, p in enumerate(self.params):
                p -= self.lr * self._velocity(i, p.grad)


class SGDRebinds(_SGDBase):
    def step(self):
        with tc.no_grad():
            for i, p in enumerate(self.params):
                p = p - self.lr * self._velocity(i, p.grad)  # a new tensor, the parameter is untouched


class SGDWithoutNoGrad(_SGDBase):
    def step(self):
        for i, p in enumerate(self.params):
            p -= self.lr * self._velocity(i, p.grad)


# ---- 05.3 Adam ------------------------------------------------------------------------------------------------
class _AdamBase:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params, self.lr, (self.b1, self.b2), self.eps = list(params), lr, betas, eps
        self.m = [tc.zeros_like(p) for p in self.params]
        self.v = [tc.zeros_like(p) for p in self.params]
        self.t = 0

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def moments(self, i, g, square=True):
        self.m[i] = self.b1 * self.m[i] + (1 - self.b1) * g
        self.v[i] = self.b2 * self.v[i] + (1 - self.b2) * (g * g if square else g)
        return self.m[i], self.v[i]

    def step(self):
        self.t += 1
        with tc.no_grad():
            for i, p in enumerate(self.params):
                m, v = self.moments(i, p.grad)
                p -= self.update(m, v)

    def update(self, m, v):
        m_hat, v_hat = m / (1 - self.b1 ** self.t), v / (1 - self.b2 ** self.t)
        return self.lr * m_hat / (v_hat.sqrt() + self.eps)


class AdamNoBiasCorrection(_AdamBase):
    def update(self, m, v):
        return self.lr * m / (v.sqrt() + self.eps)


class AdamAscent(_AdamBase):
    def update(self, m, v):
        return -super().update(m, v)


class AdamEpsInside(_AdamBase):
    def update(self, m, v):
        m_hat, v_hat = m / (1 - self.b1 ** self.t), v / (1 - self.b2 ** self.t)
        return self.lr * m_hat / (v_hat + self.eps).sqrt()


class AdamStepCounterStuck(_AdamBase):
    def step(self):
        self.t = 1  # set, never incremented
        with tc.no_grad():
            for i, p in enumerate(self.params):
                m, v = self.moments(i, p.grad)
                p -= self.update(m, v)


class AdamSecondMomentOfGrad(_AdamBase):
    def step(self):
        self.t += 1
        with tc.no_grad():
            for i, p in enumerate(self.params):
                m, v = self.moments(i, p.grad, square=False)
                p -= self.update(m, v)


class AdamCountsFromZero(_AdamBase):
    def step(self):
        with tc.no_grad():
            for i, p in enumerate(self.params):
                m, v = self.moments(i, p.grad)
                p -= self.update(m, v)
        self.t += 1  # after the update: the first step uses t = 0


class AdamKeepsGradients(_AdamBase):
    def zero_grad(self):
        pass


# ---- 05.4 - 05.7 ----------------------------------------------------------------------------------------------
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
    ("05.2", SGDAscent, ["after step 1 ", "opposite way (uphill)"]),
    ("05.2", SGDForgetsVelocity, ["after step 2 ", "velocity of the earlier steps was not used"]),
    ("05.2", SGDDampened, ["after step 1 ", "scaled by (1 - momentum)"]),
    ("05.2", SGDKeepsGradients, ["gradients before step 2", "previous step's gradient was still in .grad"]),
    ("05.2", SGDRebinds, ["after step 1 ", "step 1 did not change the parameters"]),
    ("05.2", SGDWithoutNoGrad, ["RuntimeError", "input: SGDWithoutNoGrad.step()", "during: step 1 of SGDMomentum"]),
    ("05.3", AdamNoBiasCorrection, ["after step 1 ", "step 1 has no bias correction"]),
    ("05.3", AdamAscent, ["after step 1 ", "opposite way (uphill)"]),
    ("05.3", AdamEpsInside, ["eps was added inside the square root"]),
    ("05.3", AdamStepCounterStuck, ["after step 2 ", "the step counter t did not advance"]),
    ("05.3", AdamSecondMomentOfGrad, ["after step 1 ", "averaged grad, not grad**2"]),
    ("05.3", AdamCountsFromZero, ["after step 1 ", "the step counter was still 0"]),
    ("05.3", AdamKeepsGradients, ["gradients before step 2", "previous step's gradient was still in .grad"]),
    ("05.4", clip_each_parameter, ["clipped each parameter separately"]),
    ("05.4", clip_returning_the_clipped_norm, ["the norm after clipping", "input: gradients of shapes"]),
    ("05.4", clip_returning_the_squared_norm, ["the squared norm"]),
    ("05.4", clip_by_summed_norms, ["you added up the parameters' norms"]),
    ("05.4", clip_scaled_by_summed_norms, ["scaled by 1 / (the sum of the parameters' norms)"]),
    ("05.5", evaluate_averaging_batch_means, ["averaged the batch means", "36 samples"]),
    ("05.5", evaluate_in_training_mode, ["two evaluations to give the same loss"]),
    ("05.5", evaluate_with_a_graph, ["without building a graph"]),
    ("05.6", StopsLate, ["did not stop after 3 epochs without improvement"]),
    ("05.6", NeverResets, ["stopped although 0.7 had just improved"]),
    ("05.6", IgnoresMinDelta, ["smaller than min_delta were counted as improvements"]),
    ("05.7", accuracy_count, ["you returned the int 2", "not the fraction"]),
    ("05.7", accuracy_tensor, ["a Python float (got Tensor)"]),
    ("05.7", accuracy_flat_argmax, ["expected 0.5, got 0.0", "input: logits = [[2. , 1. , 0.1]"]),
]


@pytest.mark.parametrize("exercise, wrong, phrases", CATALOGUE, ids=[f"{e}-{w.__name__}" for e, w, _ in CATALOGUE])
def test_a_wrong_answer_fails_naming_its_mistake(exercise, wrong, phrases):
    assert_names_mistake(exercise, (wrong,), *phrases)


NAMES = {"05.1": "train_step", "05.2": "SGDMomentum", "05.3": "Adam", "05.4": "clip_grad_norm", "05.5": "evaluate",
         "05.6": "EarlyStopping", "05.7": "accuracy"}


test_the_stub_fails, test_every_exercise_has_two_wrong_answers = catalogue_tests(NAMES, CATALOGUE, "05")


@pytest.mark.parametrize("exercise", ["05.2", "05.3"])
def test_the_optimizer_solutions_pass_update_by_update(exercise):
    reset_attempts()
    assert check(exercise, *solution("05", NAMES[exercise])) is None  # raises CheckFailed when wrong
