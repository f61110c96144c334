"""Chapter 05, learning-rate schedules: checks for the learner's cosine_lr(base_lr, eta_min, step, T_max), the
closed form `CosineAnnealingLR` follows, compared with the framework's scheduler run step by step."""
import math

import numpy as np

import tinygrad_course as tc

from .. import mistakes
from ..registry import exercise


def _scheduler_lrs(base_lr, eta_min, T_max, steps):
    """The learning rates tc.optim.lr_scheduler.CosineAnnealingLR sets after each of `steps` steps."""
    opt = tc.optim.SGD([tc.zeros(1, requires_grad=True)], lr=base_lr)
    schedule = tc.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=T_max, eta_min=eta_min)
    lrs = []
    for _ in range(steps):
        opt.step()
        schedule.step()
        lrs.append(opt.param_groups[0]["lr"])
    return np.array(lrs)


@exercise("05.9", title="a cosine learning-rate schedule", points=2,
          forbidden=["tinygrad_course.optim.lr_scheduler.CosineAnnealingLR"])
def cosine_lr_check(t, cosine_lr):
    for base_lr, eta_min, T_max in ((0.1, 0.0, 10), (3e-3, 1e-4, 7), (1.0, 0.2, 4)):
        steps = np.arange(0, 2 * T_max + 1)
        got = np.array([float(cosine_lr(base_lr, eta_min, int(k), T_max)) for k in steps])
        want = np.array([eta_min + (base_lr - eta_min) * (1 + math.cos(math.pi * k / T_max)) / 2 for k in steps])
        given = f"base_lr={base_lr}, eta_min={eta_min}, T_max={T_max}, step = 0 .. {2 * T_max}"
        t.close(got, want, f"cosine_lr(base_lr, eta_min, step, T_max) for {given}", given=None, mistakes=[
            mistakes.custom(lambda g, e, b=base_lr, m=eta_min: np.allclose(g, b + m - e),
                            "your schedule starts at eta_min and rises: the cosine runs the wrong way",
                            "(1 + cos(pi * step / T_max)) / 2 is 1 at step 0 and 0 at step T_max"),
            mistakes.custom(lambda g, e, b=base_lr, m=eta_min, T=T_max: m > 0 and np.allclose(
                                g, [b * (1 + math.cos(math.pi * k / T)) / 2 for k in steps]),
                            "eta_min is missing: the schedule must end at eta_min, not at 0",
                            "lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * step / T_max)) / 2"),
            mistakes.custom(lambda g, e, b=base_lr, m=eta_min, T=T_max: np.allclose(
                                g, [m + (b - m) * (1 + math.cos(math.pi * k / (T - 1))) / 2 for k in steps]),
                            "the cosine reaches its minimum one step early (T_max - 1 instead of T_max)",
                            "divide by T_max: step T_max is the minimum")])
        t.close(got[1:], _scheduler_lrs(base_lr, eta_min, T_max, 2 * T_max),
                f"your cosine_lr against tc.optim.lr_scheduler.CosineAnnealingLR stepped {2 * T_max} times ({given})",
                rtol=1e-9, atol=1e-12)
