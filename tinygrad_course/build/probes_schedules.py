"""Build mode's probes of chapter 05's schedules: the scheduler base (`LRScheduler`) through StepLR and
CosineAnnealingLR, `CosineAnnealingLR.get_lr` and `LambdaLR.get_lr`, each a small fixed run of the framework's
schedulers whose rates are compared with the reference's."""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import factories as F
from .. import optim


def lr_scheduler_probe():
    """The scheduler base through StepLR and CosineAnnealingLR: lrs after each step, get_last_lr, and a
    state_dict restored into a fresh scheduler that goes on identically."""
    w = F.zeros(2, requires_grad=True)
    opt = optim.SGD([{"params": [w]}, {"params": [F.zeros(1, requires_grad=True)], "lr": 0.5}], lr=0.1)
    steps = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    lrs = []
    for _ in range(3):
        opt.step()
        steps.step()
        lrs.append(steps.get_last_lr())
    saved = steps.state_dict()
    again = optim.lr_scheduler.StepLR(opt, step_size=5, gamma=0.1)
    again.load_state_dict(saved)
    for _ in range(3):
        opt.step()
        again.step()
        lrs.append([group["lr"] for group in opt.param_groups])
    cosine = cosine_lr_probe()
    with warnings.catch_warnings(record=True) as caught:  # PyTorch's warning of a scheduler stepped too early
        warnings.simplefilter("always")
        early = optim.lr_scheduler.StepLR(optim.SGD([w], lr=0.1), step_size=1)
        early.step()  # before any optimizer.step(): it warns
        ordered_opt = optim.SGD([w], lr=0.1)
        ordered = optim.lr_scheduler.StepLR(ordered_opt, step_size=1)
        ordered_opt.step()
        ordered.step()  # after it: no warning
    warned = [str(c.message).startswith("Detected call of `lr_scheduler.step()` before") for c in caught]
    try:  # PyTorch's TypeError for something that is not an optimizer
        optim.lr_scheduler.StepLR(object(), step_size=1)
        refused = False
    except TypeError as error:
        refused = str(error) == "object is not an Optimizer"
    return {"lrs": np.array(lrs), "epoch": np.array([again.last_epoch, saved["last_epoch"]]),
            "cosine": cosine["lrs"], "last": cosine["last"], "warned": np.array([sum(warned), len(warned)]),
            "refused": np.array([refused])}


def cosine_lr_probe():
    w = F.zeros(2, requires_grad=True)
    opt = optim.SGD([{"params": [w]}, {"params": [F.zeros(1, requires_grad=True)], "lr": 0.5}], lr=0.1)
    schedule = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=6, eta_min=0.01)
    lrs = []
    for _ in range(9):  # past T_max: the cosine comes back up
        opt.step()
        schedule.step()
        lrs.append([group["lr"] for group in opt.param_groups])
    return {"lrs": np.array(lrs), "last": np.array(schedule.get_last_lr())}


def lambda_lr_probe():
    """LambdaLR with one function per group (a linear warmup into a cosine, and a decay), through the
    framework's scheduler: the rates of step 0 and after each step, and get_last_lr."""
    w = F.zeros(2, requires_grad=True)
    opt = optim.SGD([{"params": [w]}, {"params": [F.zeros(1, requires_grad=True)], "lr": 0.5}], lr=0.1)
    warmup = lambda k: (k + 1) / 3 if k < 3 else 0.1 + 0.45 * (1 + math.cos(math.pi * (k - 3) / 5))  # noqa: E731
    schedule = optim.lr_scheduler.LambdaLR(opt, [warmup, lambda k: 0.9 ** k])
    lrs = [[group["lr"] for group in opt.param_groups]]
    for _ in range(8):
        opt.step()
        schedule.step()
        lrs.append([group["lr"] for group in opt.param_groups])
    shared = optim.lr_scheduler.LambdaLR(opt, warmup)  # one function for both groups (from their current lrs)
    try:  # PyTorch's ValueError for a list of the wrong length
        optim.lr_scheduler.LambdaLR(opt, [warmup])
        refused = False
    except ValueError as error:
        refused = str(error) == "Expected 2 lr_lambdas, but got 1"
    return {"lrs": np.array(lrs), "last": np.array(schedule.get_last_lr()), "shared": np.array(shared.get_last_lr()),
            "kept": np.array([len(schedule.lr_lambdas), len(shared.lr_lambdas)]), "refused": np.array([refused])}


PROBES = {"LRScheduler": lr_scheduler_probe, "CosineAnnealingLR.get_lr": cosine_lr_probe,
          "LambdaLR.__init__": lambda_lr_probe, "LambdaLR.get_lr": lambda_lr_probe}
