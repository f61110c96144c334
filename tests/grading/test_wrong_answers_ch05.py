"""Catalogue of wrong answers, chapter 05 (training): each realistic mistake fails with a message that names
it (the optimizers' after the very step where it happens), the hint waits for a second failure, and the
unsolved stub fails."""
import math
from collections import defaultdict

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


# ---- 05.2 the optimizer base and SGD ---------------------------------------------------------------------------
Optimizer, SGD = solution("05", "Optimizer", "SGD")
Adam, AdamW = solution("05", "Adam", "AdamW")


class _SGDWith(SGD):
    """The solution's SGD with one `mistake` in its step."""

    mistake = ""

    @tc.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad
                if group["weight_decay"] != 0 and self.mistake != "no weight decay":
                    g = g + group["weight_decay"] * p
                if momentum != 0:
                    state = self.state[p]
                    if self.mistake == "fresh velocity":
                        state.clear()
                    if "momentum_buffer" not in state:
                        first = g * (1 - dampening) if self.mistake == "first step dampened" else g.clone()
                        buf = state["momentum_buffer"] = first * (1 - momentum) if self.mistake == "ema" else first
                    else:
                        buf = state["momentum_buffer"]
                        buf.mul_(momentum).add_(g, alpha=1 - (momentum if self.mistake == "ema" else dampening))
                    g = g + momentum * buf if group["nesterov"] and self.mistake != "no nesterov" else buf
                if self.mistake == "rebinds":
                    p = p - lr * g
                else:
                    p.add_(g, alpha=lr if self.mistake == "ascent" else -lr)


class SGDAscent(_SGDWith):
    mistake = "ascent"


class SGDForgetsVelocity(_SGDWith):
    mistake = "fresh velocity"


class SGDDampened(_SGDWith):
    mistake = "ema"


class SGDRebinds(_SGDWith):
    mistake = "rebinds"


class SGDWithoutWeightDecay(_SGDWith):
    mistake = "no weight decay"


class SGDDampensTheFirstStep(_SGDWith):
    mistake = "first step dampened"


class SGDWithoutNesterov(_SGDWith):
    mistake = "no nesterov"


class SGDWithoutNoGrad(SGD):
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                p -= group["lr"] * p.grad


class KeepsGradients(Optimizer):
    def zero_grad(self, set_to_none=True):
        pass  # forgotten


class OverwritesGroupOptions(Optimizer):
    def add_param_group(self, param_group):
        param_group.update(self.defaults)  # the group's own options are lost
        super().add_param_group(param_group)


class PeeksAtTheGenerator(Optimizer):
    def __init__(self, params, defaults):
        self.defaults, self.state, self.param_groups = defaults, defaultdict(dict), []
        first = next(iter(params))  # a generator loses its first tensor here
        for group in (params if isinstance(first, dict) else [{"params": params}]):
            self.add_param_group(group)


class PlainDictState(Optimizer):
    def __init__(self, params, defaults):
        super().__init__(params, defaults)
        self.state = {}


class ZeroGradAlwaysToNone(Optimizer):
    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            for p in group["params"]:
                p.grad = None


class StateKeyedByTensors(Optimizer):
    def state_dict(self):
        saved = super().state_dict()
        saved["state"] = dict(self.state)
        return saved


class LoadForgetsTheBuffers(Optimizer):
    def load_state_dict(self, state_dict):
        state = self.state
        super().load_state_dict(state_dict)
        self.state = state  # the groups' options are restored, the buffers are not


def sgd_on(base):
    """The solution's SGD built on the (wrong) base `base`."""
    return base, type("SGD", (SGD, base), {})


def sgd(wrong):
    return Optimizer, wrong


# ---- 05.3 Adam and AdamW -------------------------------------------------------------------------------------
class _AdamWith(Adam):
    """The solution's Adam with one `mistake` in its step (it never reads `amsgrad`: "amsgrad ignored")."""

    mistake = ""

    @tc.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            lr, (b1, b2), eps, decay = group["lr"], group["betas"], group["eps"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad
                if decay != 0:
                    if group["decoupled_weight_decay"] and self.mistake != "AdamW as L2":
                        p.mul_(1 - (1 if self.mistake == "decay without lr" else lr) * decay)
                    else:
                        g = g + decay * p
                state = self.state[p]
                if not state:
                    state.update(step=tc.tensor(0.0), exp_avg=tc.zeros_like(p), exp_avg_sq=tc.zeros_like(p))
                if self.mistake == "counter stuck":
                    state["step"] = tc.tensor(1.0)
                elif self.mistake != "counts from zero":
                    state["step"] += 1
                t, m, v = state["step"].item(), state["exp_avg"], state["exp_avg_sq"]
                m.mul_(b1).add_(g, alpha=1 - b1)
                v.mul_(b2).add_(g if self.mistake == "grad not squared" else g * g, alpha=1 - b2)
                m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
                if self.mistake == "no bias correction":
                    m_hat, v_hat = m, v
                denom = (v_hat + eps).sqrt() if self.mistake == "eps inside" else v_hat.sqrt() + eps
                update = lr * m_hat / denom
                p.add_(update) if self.mistake == "ascent" else p.sub_(update)
                if self.mistake == "counts from zero":
                    state["step"] += 1


def adam(mistake):
    """(Adam with `mistake`, its AdamW)."""
    wrong = type("Adam", (_AdamWith,), {"mistake": mistake})
    return wrong, type("AdamW", (AdamW, wrong), {})


class AdamIntegerStep(Adam):
    @tc.no_grad()
    def step(self, closure=None):
        for p in self.state:
            self.state[p]["step"] = tc.tensor(float(self.state[p]["step"]))
        super().step(closure)
        for p in self.state:
            self.state[p]["step"] = int(self.state[p]["step"].item())  # a Python int, not tc.optim's tensor


class AdamKeepsGradients(Adam, KeepsGradients):
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
    ("05.2", sgd(SGDAscent), ["after step 1 ", "opposite way (uphill)"]),
    ("05.2", sgd(SGDForgetsVelocity), ["after step 2 ", "velocity of the earlier steps was not used"]),
    ("05.2", sgd(SGDDampened), ["after step 1 ", "scaled by (1 - momentum)"]),
    ("05.2", sgd(SGDRebinds), ["after step 1 ", "step 1 did not change the parameters"]),
    ("05.2", sgd(SGDWithoutNoGrad), ["RuntimeError", "during: step 1 of SGD"]),
    ("05.2", sgd(SGDWithoutWeightDecay), ["weight_decay=0.1", "weight_decay was ignored"]),
    ("05.2", sgd(SGDDampensTheFirstStep), ["dampening=0.5", "the first step was dampened too"]),
    ("05.2", sgd(SGDWithoutNesterov), ["nesterov=True", "nesterov=True was ignored"]),
    ("05.2", sgd_on(KeepsGradients), ["zero_grad() to set the gradient of every parameter"]),
    ("05.2", sgd_on(OverwritesGroupOptions), ["the second group's own options were replaced by the defaults"]),
    ("05.2", sgd_on(PeeksAtTheGenerator), ["param_groups[0]['params'] to be the list [w, b]"]),
    ("05.2", sgd_on(PlainDictState), ["opt.state raised KeyError for a new parameter"]),
    ("05.2", sgd_on(ZeroGradAlwaysToNone), ["the gradient became None although set_to_none=False"]),
    ("05.2", sgd_on(StateKeyedByTensors), ["the keys are the parameter tensors themselves"]),
    ("05.2", sgd_on(LoadForgetsTheBuffers), ["3 more steps", "the momentum buffers were not restored"]),
    ("05.3", adam("no bias correction"), ["after step 1 ", "step 1 has no bias correction"]),
    ("05.3", adam("ascent"), ["after step 1 ", "opposite way (uphill)"]),
    ("05.3", adam("eps inside"), ["eps was added inside the square root"]),
    ("05.3", adam("counter stuck"), ["after step 2 ", "the step counter t did not advance"]),
    ("05.3", adam("grad not squared"), ["after step 1 ", "averaged grad, not grad**2"]),
    ("05.3", adam("counts from zero"), ["after step 1 ", "the step counter was still 0"]),
    ("05.3", adam("AdamW as L2"), ["AdamW(lr=0.01, weight_decay=0.1)", "added to the gradient (L2, Adam's way)"]),
    ("05.3", adam("decay without lr"), ["shrank by weight_decay, not by lr * weight_decay"]),
    ("05.3", adam("amsgrad ignored"), ["Adam(lr=0.01, amsgrad=True)", "amsgrad was ignored"]),
    ("05.3", (AdamIntegerStep, type("AdamW", (AdamW, AdamIntegerStep), {})),
     ["opt.state[p]['step'] to be a 0-d tensor"]),
    ("05.3", (AdamKeepsGradients, type("AdamW", (AdamW, AdamKeepsGradients), {})),
     ["gradients before step 2", "previous step's gradient was still in .grad"]),
    ("05.4", clip_each_parameter, ["clipped each parameter separately"]),
    ("05.4", clip_returning_the_clipped_norm, ["the norm after clipping", "input: gradients of shapes"]),
    ("05.4", clip_returning_the_squared_norm, ["the squared norm"]),
    ("05.4", clip_by_summed_norms, ["you added up the parameters' norms"]),
    ("05.4", clip_scaled_by_summed_norms, ["scaled by 1 / (the sum of the parameters' norms)"]),
    ("05.4", clip_ignoring_norm_type, ["norm_type=inf", "that is the 2-norm: norm_type was ignored"]),
    ("05.4", clip_that_never_raises, ["error_if_nonfinite=True", "expected RuntimeError to be raised"]),
    ("05.4", clip_returning_a_float, ["to return the norm as a 0-d tensor", "(got float)"]),
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


def _name(wrong):
    if not isinstance(wrong, tuple):
        return wrong.__name__
    return "-".join(getattr(w, "mistake", "") or w.__name__ for w in wrong if w not in (Optimizer, AdamW))


@pytest.mark.parametrize("exercise, wrong, phrases", CATALOGUE, ids=[f"{e}-{_name(w)}" for e, w, _ in CATALOGUE])
def test_a_wrong_answer_fails_naming_its_mistake(exercise, wrong, phrases):
    assert_names_mistake(exercise, wrong if isinstance(wrong, tuple) else (wrong,), *phrases)


NAMES = {"05.1": "train_step", "05.2": ("Optimizer", "SGD"), "05.3": ("Adam", "AdamW"), "05.4": "clip_grad_norm_",
         "05.5": "evaluate", "05.6": "EarlyStopping", "05.7": "accuracy"}


test_the_stub_fails, test_every_exercise_has_two_wrong_answers = catalogue_tests(NAMES, CATALOGUE, "05")


@pytest.mark.parametrize("exercise", ["05.2", "05.3"])
def test_the_optimizer_solutions_pass_update_by_update(exercise):
    reset_attempts()
    assert check(exercise, *solution("05", *NAMES[exercise])) is None  # raises CheckFailed when wrong
