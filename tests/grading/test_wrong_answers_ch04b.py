"""Catalogue of wrong answers, chapter 04b (optimizers): each realistic mistake of the optimizer base (04b.1),
of SGD (04b.2) and of Adam with AdamW (04b.3) fails with a message that names it, after the very step where it
happens; the hint waits for a second failure, and the unsolved stub fails. (04b.4's schedulers:
test_wrong_answers_ch04b_schedule.py.)"""
from collections import defaultdict

import pytest

import tinygrad_course as tc
from tinygrad_course.grading import check, reset_attempts

from .wrong_answers import assert_names_mistake, catalogue_tests, solution


# ---- 04b.1 the optimizer base, 04b.2 SGD ---------------------------------------------------------------------------
Optimizer, SGD = solution("04b", "Optimizer", "SGD")
Adam, AdamW = solution("04b", "Adam", "AdamW")


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


# ---- 04b.3 Adam and AdamW -------------------------------------------------------------------------------------
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


CATALOGUE = [
    ("04b.2", (SGDAscent,), ["after step 1 ", "opposite way (uphill)"]),
    ("04b.2", (SGDForgetsVelocity,), ["after step 2 ", "velocity of the earlier steps was not used"]),
    ("04b.2", (SGDDampened,), ["after step 1 ", "scaled by (1 - momentum)"]),
    ("04b.2", (SGDRebinds,), ["after step 1 ", "step 1 did not change the parameters"]),
    ("04b.2", (SGDWithoutNoGrad,), ["RuntimeError", "during: step 1 of SGD"]),
    ("04b.2", (SGDWithoutWeightDecay,), ["weight_decay=0.1", "weight_decay was ignored"]),
    ("04b.2", (SGDDampensTheFirstStep,), ["dampening=0.5", "the first step was dampened too"]),
    ("04b.2", (SGDWithoutNesterov,), ["nesterov=True", "nesterov=True was ignored"]),
    ("04b.1", (KeepsGradients,), ["zero_grad() to set the gradient of every parameter"]),
    ("04b.1", (OverwritesGroupOptions,), ["the second group's own options were replaced by the defaults"]),
    ("04b.1", (PeeksAtTheGenerator,), ["param_groups[0]['params'] to be the list [w, b]"]),
    ("04b.1", (PlainDictState,), ["opt.state raised KeyError for a new parameter"]),
    ("04b.1", (ZeroGradAlwaysToNone,), ["the gradient became None although set_to_none=False"]),
    ("04b.1", (StateKeyedByTensors,), ["the keys are the parameter tensors themselves"]),
    ("04b.1", (LoadForgetsTheBuffers,), ["3 more steps", "the momentum buffers were not restored"]),
    ("04b.3", adam("no bias correction"), ["after step 1 ", "step 1 has no bias correction"]),
    ("04b.3", adam("ascent"), ["after step 1 ", "opposite way (uphill)"]),
    ("04b.3", adam("eps inside"), ["eps was added inside the square root"]),
    ("04b.3", adam("counter stuck"), ["after step 2 ", "the step counter t did not advance"]),
    ("04b.3", adam("grad not squared"), ["after step 1 ", "averaged grad, not grad**2"]),
    ("04b.3", adam("counts from zero"), ["after step 1 ", "the step counter was still 0"]),
    ("04b.3", adam("AdamW as L2"), ["AdamW(lr=0.01, weight_decay=0.1)", "added to the gradient (L2, Adam's way)"]),
    ("04b.3", adam("decay without lr"), ["shrank by weight_decay, not by lr * weight_decay"]),
    ("04b.3", adam("amsgrad ignored"), ["Adam(lr=0.01, amsgrad=True)", "amsgrad was ignored"]),
    ("04b.3", (AdamIntegerStep, type("AdamW", (AdamW, AdamIntegerStep), {})),
     ["opt.state[p]['step'] to be a 0-d tensor"]),
    ("04b.3", (AdamKeepsGradients, type("AdamW", (AdamW, AdamKeepsGradients), {})),
     ["gradients before step 2", "previous step's gradient was still in .grad"]),
]


def _name(wrong):
    if not isinstance(wrong, tuple):
        return wrong.__name__
    return "-".join(getattr(w, "mistake", "") or w.__name__ for w in wrong if w not in (Optimizer, AdamW))


@pytest.mark.parametrize("exercise, wrong, phrases", CATALOGUE, ids=[f"{e}-{_name(w)}" for e, w, _ in CATALOGUE])
def test_a_wrong_answer_fails_naming_its_mistake(exercise, wrong, phrases):
    assert_names_mistake(exercise, wrong, *phrases)


NAMES = {"04b.1": "Optimizer", "04b.2": "SGD", "04b.3": ("Adam", "AdamW")}


test_the_stub_fails, test_every_exercise_has_two_wrong_answers = catalogue_tests(NAMES, CATALOGUE, "04b")


@pytest.mark.parametrize("exercise", ["04b.1", "04b.2", "04b.3"])
def test_the_optimizer_solutions_pass_update_by_update(exercise):
    reset_attempts()
    names = NAMES[exercise] if isinstance(NAMES[exercise], tuple) else (NAMES[exercise],)
    assert check(exercise, *solution("04b", *names)) is None  # raises CheckFailed when wrong
