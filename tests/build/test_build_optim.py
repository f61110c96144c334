"""Chapter 05's optimizer and scheduler components: a learner's base class runs on the framework's own
objects (`seams.member`), its SGD and Adam steps are `tc.optim`'s, the step hooks still run around them, and
what the exercise does not cover is routed to the reference, never repaired."""
from __future__ import annotations

import json
import math
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
import torch

import tinygrad_course as tc
from tinygrad_course import seams
from tinygrad_course.build.components import BY_NAME

ROOT = Path(__file__).resolve().parents[2]


def _solution(*grade_ids) -> dict:
    """The namespace of chapter 04b's solution cells `grade_ids`, run in order."""
    nb = json.loads((ROOT / "solutions" / "04b_optimizers.ipynb").read_text())
    cells = {c.get("metadata", {}).get("nbgrader", {}).get("grade_id"): "".join(c["source"]) for c in nb["cells"]}
    namespace = {"tc": tc, "np": np, "math": math, "defaultdict": defaultdict}
    for grade_id in grade_ids:
        exec(compile(cells[grade_id], f"<{grade_id}>", "exec"), namespace)
    return namespace


pytestmark = pytest.mark.usefixtures("clean_seams")


def _install(name, obj):
    seams.install(BY_NAME[name].seam, BY_NAME[name].adapt(obj))


def test_a_member_component_runs_the_learners_method_on_the_frameworks_object():
    seen = []

    class Mine:
        def zero_grad(self, set_to_none=True):
            seen.append((type(self).__name__, set_to_none))

    w = tc.ones(2, requires_grad=True)
    opt = tc.optim.RMSprop([w], lr=0.1)
    w.grad = tc.ones(2)
    seams.install("Optimizer", lambda method, *args, **kwargs: getattr(Mine, method)(*args, **kwargs))
    opt.zero_grad(False)
    assert seen == [("RMSprop", False)] and w.grad is not None and seams.calls() == {"Optimizer": 1}
    seams.uninstall("Optimizer")
    opt.zero_grad()
    assert w.grad is None


def test_the_learners_optimizer_is_tc_optims_and_its_hooks_still_run():
    ns = _solution("ex04b_1", "ex04b_2", "ex04b_3")
    _install("Optimizer", ns["Optimizer"])
    _install("SGD.step", ns["SGD"])
    _install("Adam.step", ns["Adam"])
    calls = []
    w = tc.tensor([1.0, -2.0], requires_grad=True)
    for opt in (tc.optim.SGD([w], lr=0.1, momentum=0.9, nesterov=True), tc.optim.AdamW([w], lr=0.1)):
        opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", type(o).__name__)))
        opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", type(o).__name__)))
        opt.zero_grad()
        (w * w).sum().backward()
        assert opt.step(lambda: 3.0) == 3.0
    assert calls == [("pre", "SGD"), ("post", "SGD"), ("pre", "AdamW"), ("post", "AdamW")]
    assert {name: seams.calls()[name] > 0 for name in ("Optimizer", "SGD.step", "Adam.step")} == \
           {"Optimizer": True, "SGD.step": True, "Adam.step": True}
    assert isinstance(tc.optim.SGD([w], lr=0.1).state, defaultdict)  # the learner's __init__ made it


def test_the_learners_steps_agree_with_the_reference_on_every_option_they_cover():
    ns = _solution("ex04b_1", "ex04b_2", "ex04b_3")

    def run(make):
        tc.manual_seed(0)
        model = tc.nn.Sequential(tc.nn.Linear(4, 3), tc.nn.Tanh(), tc.nn.Linear(3, 2))
        params = list(model.parameters())
        opt = make(params)
        x = tc.randn(5, 4)
        for _ in range(4):
            opt.zero_grad()
            model(x).pow(2).mean().backward()
            opt.step()
        return np.concatenate([p.detach().numpy().ravel() for p in params])

    makes = [lambda ps: tc.optim.SGD([{"params": ps[:2], "nesterov": True}, {"params": ps[2:], "dampening": 0.3}],
                                     lr=0.1, momentum=0.8, weight_decay=0.01),
             lambda ps: tc.optim.Adam([{"params": ps[:2]}, {"params": ps[2:], "lr": 0.02}], lr=0.05, weight_decay=0.1),
             lambda ps: tc.optim.AdamW(ps, lr=0.05, weight_decay=0.1)]
    expected = [run(make) for make in makes]
    _install("Optimizer", ns["Optimizer"])
    _install("SGD.step", ns["SGD"])
    _install("Adam.step", ns["Adam"])
    for make, want in zip(makes, expected):
        np.testing.assert_allclose(run(make), want, rtol=1e-5, atol=1e-7)
    assert seams.calls()["SGD.step"] == 4 and seams.calls()["Adam.step"] == 8


@pytest.mark.parametrize("name, options", [("Adam", dict(lr=0.05)), ("Adam", dict(lr=0.05, weight_decay=0.1)),
                                           ("AdamW", dict(lr=0.05, weight_decay=0.1)),
                                           ("AdamW", dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6, amsgrad=True)),
                                           ("Adam", dict(lr=0.05, weight_decay=0.1, amsgrad=True))])
def test_the_learners_adam_step_is_tc_optims_bit_for_bit_and_torchs_to_float32(name, options):
    """Written in PyTorch 2.13's order (lerp_, addcmul_, the root over sqrt(1 - beta2**t), addcdiv_), their step
    gives the reference's bits, AdamW's decoupled decay and amsgrad included (AdamW has no step of its own in
    PyTorch 2.13: it is Adam with decoupled_weight_decay=True); torch's own numbers within a float32 rounding."""
    ns = _solution("ex04b_1", "ex04b_2", "ex04b_3")
    rng = np.random.default_rng(0)
    start = rng.normal(size=(6, 4)).astype(np.float32)
    grads = [rng.normal(size=(6, 4)).astype(np.float32) * 10.0 ** (-k % 3) for k in range(10)]

    def run(lib, cls):
        w = lib.tensor(start.copy(), requires_grad=True)
        opt = cls([w], **options)
        for g in grads:
            w.grad = lib.tensor(g.copy())
            opt.step()
        return np.array(w.detach().tolist(), dtype=np.float32), opt

    reference, _ = run(tc, getattr(tc.optim, name))
    theirs, _ = run(torch, getattr(torch.optim, name))
    _install("Optimizer", ns["Optimizer"])
    _install("Adam.step", ns["Adam"])
    mine, opt = run(tc, getattr(tc.optim, name))
    assert seams.calls()["Adam.step"] == len(grads)
    assert np.array_equal(mine, reference)
    np.testing.assert_allclose(mine, theirs, rtol=1e-6, atol=1e-7)
    state = opt.state_dict()["state"][0]
    assert set(state) == {"step", "exp_avg", "exp_avg_sq"} | ({"max_exp_avg_sq"} if options.get("amsgrad") else set())


def test_what_the_exercise_does_not_cover_goes_to_the_reference():
    mine = []

    class Counting:
        """A learner's SGD and base that record that they ran (and do nothing else)."""

        def step(self, closure=None):
            mine.append("step")

    _install("SGD.step", Counting)
    w = tc.tensor([1.0], requires_grad=True)
    w.grad = tc.tensor([2.0])
    tc.optim.SGD([w], lr=0.1, maximize=True).step()  # maximize: the reference's step
    assert mine == [] and w.item() == pytest.approx(1.2)
    tc.optim.SGD([w], lr=0.1).step()
    assert mine == ["step"]
    ns = _solution("ex04b_1")
    _install("Optimizer", ns["Optimizer"])
    named = tc.optim.SGD([("w", w)], lr=0.1)  # named parameters: the reference's __init__ keeps the names
    assert named.param_groups[0]["param_names"] == ["w"]
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts"):
        tc.optim.SGD(w, lr=0.1)  # a bare tensor: PyTorch's error, from the reference


def test_the_learners_scheduler_base_steps_every_scheduler_and_epoch_stays_the_reference():
    ns = _solution("ex04b_4")
    opt = tc.optim.SGD([tc.zeros(1, requires_grad=True)], lr=0.1)
    reference = [tc.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)]
    want = []
    for _ in range(5):
        opt.step()
        reference[0].step()
        want.append(reference[0].get_last_lr()[0])
    _install("LRScheduler", ns["LRScheduler"])
    _install("CosineAnnealingLR.get_lr", ns["CosineAnnealingLR"])
    opt = tc.optim.SGD([tc.zeros(1, requires_grad=True)], lr=0.1)
    schedule = tc.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    got = []
    for _ in range(5):
        opt.step()
        schedule.step()
        got.append(schedule.get_last_lr()[0])
    assert got == want and seams.calls()["LRScheduler"] >= 10
    cosine = tc.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4)
    with pytest.warns(UserWarning, match="epoch parameter"):
        cosine.step(2)  # step(epoch): the reference's deprecated form
    assert cosine.last_epoch == 2 and cosine.get_last_lr()[0] == pytest.approx(0.05)  # the closed form at 2 of 4


@pytest.mark.parametrize("optimizer_first", [False, True])
def test_pytorchs_warning_of_a_scheduler_stepped_first_stays_with_the_learners_scheduler(optimizer_first):
    """The warning is the framework's, not the exercise's: it fires (with PyTorch 2.13's words, at the caller's
    line) when the first step() after construction comes before optimizer.step(), whoever wrote the base."""
    ns = _solution("ex04b_4")
    _install("LRScheduler", ns["LRScheduler"])
    opt = tc.optim.SGD([tc.zeros(1, requires_grad=True)], lr=0.1)
    schedule = tc.optim.lr_scheduler.StepLR(opt, step_size=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if optimizer_first:
            opt.step()
        schedule.step()
        schedule.step()
    assert seams.calls()["LRScheduler"] >= 3  # the learner's step ran: construction and both steps
    want = [] if optimizer_first else [
        "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, you should "
        "call them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will "
        "result in PyTorch skipping the first value of the learning rate schedule. See more details at "
        "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"]
    assert [str(w.message) for w in caught] == want
    assert all(w.category is UserWarning and w.filename == __file__ for w in caught)
    with warnings.catch_warnings(record=True) as theirs:  # PyTorch warns in the same case, with the same words
        warnings.simplefilter("always")
        topt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
        tschedule = torch.optim.lr_scheduler.StepLR(topt, step_size=1)
        if optimizer_first:
            topt.step()
        tschedule.step()
        tschedule.step()
    assert [str(w.message) for w in theirs] == want


def _warmup_cosine(step):
    """The GPT's shape of schedule as a factor: a linear warmup over 5 steps, then half a cosine to 0.1."""
    if step < 5:
        return (step + 1) / 5
    return 0.1 + 0.45 * (1 + math.cos(math.pi * min(1.0, (step - 5) / 20)))


def _rates(scheduler_cls, optim_module, make, n_steps, *args, **kwargs):
    """Both groups' lr at construction and after each of n_steps (optimizer.step(), then scheduler.step())."""
    opt = optim_module.SGD([{"params": [make()]}, {"params": [make()], "lr": 0.5}], lr=0.1)
    schedule = scheduler_cls(opt, *args, **kwargs)
    rates = [[group["lr"] for group in opt.param_groups]]
    for _ in range(n_steps):
        opt.step()
        schedule.step()
        rates.append([group["lr"] for group in opt.param_groups])
    return rates, schedule


@pytest.mark.parametrize("name, args", [("CosineAnnealingLR", dict(T_max=6, eta_min=0.01)),
                                        ("StepLR", dict(step_size=3, gamma=0.5)),
                                        ("LinearLR", dict(start_factor=0.25, total_iters=4)),
                                        ("MultiplicativeLR", dict(lr_lambda=lambda k: 0.9))])
def test_the_learners_scheduler_base_builds_every_scheduler_with_torchs_rates(name, args):
    """Their __init__ builds the framework's schedulers (in PyTorch's initial mode, so the schedules that compute
    a rate from the previous one start at the optimizer's rates): every rate is torch 2.13's, bit for bit."""
    ns = _solution("ex04b_4")
    _install("LRScheduler", ns["LRScheduler"])
    got, schedule = _rates(getattr(tc.optim.lr_scheduler, name), tc.optim, lambda: tc.zeros(1, requires_grad=True),
                           12, **args)
    want, _ = _rates(getattr(torch.optim.lr_scheduler, name), torch.optim,
                     lambda: torch.zeros(1, requires_grad=True), 12, **args)
    assert got == want
    assert schedule._step_count == 13 and schedule.last_epoch == 12 and schedule.base_lrs == [0.1, 0.5]
    assert seams.calls()["LRScheduler"] == 1 + 13  # their __init__, its step() and the 12 steps


def test_the_learners_scheduler_init_raises_torchs_type_error_and_a_resumed_schedule_stays_the_reference():
    ns = _solution("ex04b_4")
    _install("LRScheduler", ns["LRScheduler"])
    w = tc.zeros(1, requires_grad=True)
    with pytest.raises(TypeError) as mine:
        tc.optim.lr_scheduler.StepLR([w], step_size=2)
    with pytest.raises(TypeError) as theirs:
        torch.optim.lr_scheduler.StepLR([torch.zeros(1)], step_size=2)
    assert str(mine.value) == str(theirs.value) == "list is not an Optimizer"
    assert seams.calls()["LRScheduler"] == 1  # the learner's __init__ raised it
    opt = tc.optim.SGD([w], lr=0.1)
    with pytest.raises(KeyError, match="initial_lr"):  # resuming from last_epoch >= 0: the reference's check
        tc.optim.lr_scheduler.StepLR(opt, step_size=2, last_epoch=3)
    opt.param_groups[0]["initial_lr"] = 0.1
    resumed = tc.optim.lr_scheduler.StepLR(opt, step_size=2, last_epoch=3)
    assert resumed.last_epoch == 4 and resumed._step_count == 1


def test_the_learners_lambda_lr_sets_torchs_rates_and_its_state_dict_resumes_them():
    ns = _solution("ex04b_4")
    _install("LRScheduler", ns["LRScheduler"])
    _install("LambdaLR.__init__", ns["LambdaLR"])
    _install("LambdaLR.get_lr", ns["LambdaLR"])
    for lr_lambda in (_warmup_cosine, [_warmup_cosine, lambda k: 0.95 ** k]):
        got, schedule = _rates(tc.optim.lr_scheduler.LambdaLR, tc.optim, lambda: tc.zeros(1, requires_grad=True),
                               30, lr_lambda)
        want, reference = _rates(torch.optim.lr_scheduler.LambdaLR, torch.optim,
                                 lambda: torch.zeros(1, requires_grad=True), 30, lr_lambda)
        assert got == want and schedule.get_last_lr() == reference.get_last_lr()
    assert seams.calls()["LambdaLR.get_lr"] == 2 * 31 and seams.calls()["LambdaLR.__init__"] == 2
    assert schedule.lr_lambdas[1] is not schedule.lr_lambdas[0] and type(schedule) is tc.optim.lr_scheduler.LambdaLR
    saved = schedule.state_dict()  # LambdaLR's own state_dict (PyTorch's: the functions are not saved)
    assert saved["lr_lambdas"] == [None, None] and saved["last_epoch"] == 30
    opt = tc.optim.SGD([{"params": [tc.zeros(1, requires_grad=True)]},
                        {"params": [tc.zeros(1, requires_grad=True)], "lr": 0.5}], lr=0.1)
    again = tc.optim.lr_scheduler.LambdaLR(opt, [_warmup_cosine, lambda k: 0.95 ** k])
    again.load_state_dict(saved)
    again.step()
    reference.step()
    assert again.get_last_lr() == reference.get_last_lr()
    with pytest.raises(ValueError, match=r"^Expected 2 lr_lambdas, but got 1$"):
        tc.optim.lr_scheduler.LambdaLR(opt, [_warmup_cosine])  # their __init__ raised it
    assert seams.calls()["LambdaLR.__init__"] == 4


def test_the_gpt_milestone_sets_its_lr_at_rates_through_the_learners_lambda_lr():
    """Chapter 10's milestone schedules the learner's lr_at with LambdaLR (factor lr_at / MAX_LR): built by their
    LambdaLR.__init__ on their scheduler base, the rates from their get_lr, lr_at asked per group at construction
    and after each step; the optimizer steps at exactly lr_at's rates (the float32 updates equal the old loop's)."""
    from tinygrad_course.build import gpt_milestone as gm

    assert {"LRScheduler", "LambdaLR.__init__", "LambdaLR.get_lr"} <= set(gm.EARLIER)
    ns = _solution("ex04b_4")
    _install("LRScheduler", ns["LRScheduler"])
    _install("LambdaLR.__init__", ns["LambdaLR"])
    _install("LambdaLR.get_lr", ns["LambdaLR"])
    asked, used = [], []

    def lr_at(step, max_steps, max_lr=3e-3, warmup=20):
        asked.append(step)
        return gm._ref_lr_at(step, max_steps, max_lr, warmup)

    original = tc.optim.AdamW.step

    def recording(self, closure=None):
        used.append([group["lr"] for group in self.param_groups])
        return original(self, closure)

    recording.hooked = True  # the step hooks' wrapper, which the scheduler's warning looks for
    tc.optim.AdamW.step = recording
    try:
        gm.train({**gm.REFERENCE, "lr_at": lr_at}, steps=3)
    finally:
        tc.optim.AdamW.step = original
    assert asked == [0, 0, 1, 1, 2, 2, 3, 3]  # one function for both groups (decayed and not)
    want = [gm.MAX_LR * (gm._ref_lr_at(k, gm.STEPS, gm.MAX_LR, gm.WARMUP) / gm.MAX_LR) for k in range(3)]
    assert used == [[w, w] for w in want]
    assert seams.calls()["LambdaLR.__init__"] == 1 and seams.calls()["LambdaLR.get_lr"] == 4
