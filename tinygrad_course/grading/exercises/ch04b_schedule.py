"""Chapter 04b, learning-rate schedules: checks for the learner's `LRScheduler` base and `CosineAnnealingLR` and
`LambdaLR` on it (04b.4), in PyTorch's shape: the rates set at construction and after each step, compared with the
framework's scheduler step by step, `get_last_lr`, `base_lrs` and `initial_lr`, a `state_dict` restored into
a fresh scheduler that goes on identically, and PyTorch's errors (an optimizer that is not one, a list of
lr_lambdas of the wrong length)."""
import math

import numpy as np

import tinygrad_course as tc

from .. import mistakes
from ..registry import exercise


def _optimizer(*lrs):
    """An SGD with one group per learning rate (the tensors are never stepped)."""
    return tc.optim.SGD([{"params": [tc.zeros(1, requires_grad=True)], "lr": lr} for lr in lrs], lr=lrs[0])


def _lrs(make_schedule, lrs, n_steps):
    """The first group's learning rate after each of `n_steps` scheduler steps."""
    opt = _optimizer(*lrs)
    schedule = make_schedule(opt)
    found = []
    for _ in range(n_steps):
        opt.step()
        schedule.step()
        found.append([group["lr"] for group in opt.param_groups])
    return np.array(found)


def _cosine_mistakes(base_lr, eta_min, T_max, steps):
    return [
        mistakes.custom(lambda g, e: np.allclose(g, base_lr + eta_min - e),
                        "your schedule starts at eta_min and rises: the cosine runs the wrong way",
                        "(1 + cos(pi * last_epoch / T_max)) / 2 is 1 at step 0 and 0 at step T_max"),
        mistakes.custom(lambda g, e: eta_min > 0 and np.allclose(
                            g, [base_lr * (1 + math.cos(math.pi * k / T_max)) / 2 for k in steps]),
                        "eta_min is missing: the schedule must end at eta_min, not at 0",
                        "lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * last_epoch / T_max)) / 2"),
        mistakes.custom(lambda g, e: np.allclose(
                            g, [eta_min + (base_lr - eta_min) * (1 + math.cos(math.pi * k / (T_max - 1))) / 2
                                for k in steps]),
                        "the cosine reaches its minimum one step early (T_max - 1 instead of T_max)",
                        "divide by T_max: step T_max is the minimum"),
        mistakes.custom(lambda g, e: np.allclose(
                            g, [eta_min + (base_lr - eta_min) * (1 + math.cos(math.pi * (k + 1) / T_max)) / 2
                                for k in steps]),
                        "every rate is one step ahead: last_epoch was advanced twice, or the rates were computed "
                        "before it was advanced", "step(): last_epoch += 1 first, then set the lrs from get_lr()"),
        mistakes.custom(lambda g, e: np.allclose(
                            g, [eta_min + (base_lr - eta_min) * (1 + math.cos(math.pi * (k - 1) / T_max)) / 2
                                for k in steps]),
                        "every rate is one step behind: __init__ did not set the rates of step 0 (one self.step() "
                        "from last_epoch = -1), or get_lr() was called before last_epoch was advanced",
                        "__init__ ends with self.step(); step(): last_epoch += 1 first, then the lrs from get_lr()")]


def _warmup_cosine(step):
    """A factor of 1/4, 2/4, 3/4, 1 over four warmup steps, then half a cosine down to 0.1 at step 10 (the
    shape of chapter 10's GPT schedule)."""
    if step < 4:
        return (step + 1) / 4
    return 0.1 + 0.45 * (1 + math.cos(math.pi * min(1.0, (step - 4) / 6)))


def _lambda_mistakes(base_lrs, fns, n_steps):
    def factors(shift=0):
        return np.array([[fn(k + shift) for fn in fns] for k in range(1, n_steps + 1)])

    def compounded():
        lrs, rows = [lr * fn(0) for lr, fn in zip(base_lrs, fns)], []  # from the rates of step 0
        for k in range(1, n_steps + 1):
            lrs = [lr * fn(k) for lr, fn in zip(lrs, fns)]
            rows.append(lrs)
        return np.array(rows)

    return [
        mistakes.custom(lambda g, e: np.allclose(g, factors()),
                        "your rates are the lambda's values themselves: lr_lambda gives a factor, not a rate",
                        "each group's rate is its base_lr times lr_lambda(self.last_epoch)"),
        mistakes.custom(lambda g, e: np.allclose(g, compounded()),
                        "each step multiplies the current lr by the factor, so the factors compound (that is "
                        "MultiplicativeLR): LambdaLR scales the base rate",
                        "base_lr * lr_lambda(self.last_epoch) for each base_lr in self.base_lrs, not group['lr'] * ..."),
        mistakes.custom(lambda g, e: np.allclose(g, np.array(base_lrs) * factors(1)),
                        "every rate is one step ahead: the lambda was called with last_epoch + 1",
                        "lr_lambda(self.last_epoch): step() has already advanced it")]


@exercise("04b.4", title="the scheduler base and two schedules", points=3,
          forbidden=["tinygrad_course.optim.lr_scheduler.CosineAnnealingLR",
                     "tinygrad_course.optim.lr_scheduler.LambdaLR",
                     "tinygrad_course.optim.lr_scheduler.LRScheduler"])
def scheduler_check(t, LRScheduler, CosineAnnealingLR, LambdaLR):
    t.true(all(isinstance(cls, type) for cls in (LRScheduler, CosineAnnealingLR, LambdaLR))
           and issubclass(CosineAnnealingLR, LRScheduler) and issubclass(LambdaLR, LRScheduler),
           "CosineAnnealingLR and LambdaLR to be subclasses of your LRScheduler",
           hint="class CosineAnnealingLR(LRScheduler): its __init__ keeps T_max and eta_min, then calls "
                "super().__init__(optimizer, last_epoch); LambdaLR's keeps self.lr_lambdas first")
    for base_lr, eta_min, T_max in ((0.1, 0.0, 10), (3e-3, 1e-4, 7), (1.0, 0.2, 4)):
        steps = np.arange(1, 2 * T_max + 1)
        got = _lrs(lambda o: CosineAnnealingLR(o, T_max=T_max, eta_min=eta_min), [base_lr], 2 * T_max)[:, 0]
        want = _lrs(lambda o: tc.optim.lr_scheduler.CosineAnnealingLR(o, T_max=T_max, eta_min=eta_min), [base_lr],
                    2 * T_max)[:, 0]
        t.close(got, want, f"the lr after each of {2 * T_max} steps of CosineAnnealingLR(opt, T_max={T_max}, "
                f"eta_min={eta_min}) from lr={base_lr} (compared with tc.optim.lr_scheduler.CosineAnnealingLR)",
                rtol=1e-9, atol=1e-12, mistakes=_cosine_mistakes(base_lr, eta_min, T_max, steps))
    opt = _optimizer(0.1, 0.5)
    schedule = CosineAnnealingLR(opt, T_max=10, eta_min=0.01)
    t.equal([group["lr"] for group in opt.param_groups], [0.1, 0.5], "each group's lr right after "
            "CosineAnnealingLR(opt, T_max=10, eta_min=0.01) is made (step 0 of the schedule is the start)",
            hint="__init__ calls self.step() once with last_epoch = -1, so it sets the rates of step 0: base_lr")
    t.equal([group.get("initial_lr") for group in opt.param_groups], [0.1, 0.5], "each group's 'initial_lr'",
            hint="group.setdefault('initial_lr', group['lr']) for every group, then base_lrs from them")
    t.equal(list(getattr(schedule, "base_lrs", [])), [0.1, 0.5], "schedule.base_lrs")
    t.equal(getattr(schedule, "last_epoch", None), 0, "schedule.last_epoch after construction",
            hint="last_epoch starts at -1 and the step() of __init__ makes it 0")
    t.equal(getattr(schedule, "_step_count", None), 1, "schedule._step_count after construction (the step() of "
            "__init__ counted)", why="the framework reads it to warn, as PyTorch does, when the first step() after "
            "construction comes before optimizer.step()",
            hint="__init__ sets self._step_count = 0 before its self.step(), and step() adds 1")
    got = _lrs(lambda o: CosineAnnealingLR(o, T_max=6), [0.1, 0.5], 6)
    want = _lrs(lambda o: tc.optim.lr_scheduler.CosineAnnealingLR(o, T_max=6), [0.1, 0.5], 6)
    t.close(got, want, "both groups' lr after each of 6 steps (groups with lr 0.1 and 0.5, T_max=6)", rtol=1e-9,
            mistakes=[mistakes.custom(lambda g, e: np.allclose(g[:, 1], e[:, 0]),
                                      "the second group follows the first group's schedule",
                                      "one base_lr per group: zip(self.optimizer.param_groups, self.get_lr())")])
    opt = _optimizer(0.1, 0.5)
    schedule = CosineAnnealingLR(opt, T_max=6)
    for _ in range(2):
        schedule.step()
    t.equal(getattr(schedule, "_step_count", None), 3, "schedule._step_count after construction and 2 steps",
            hint="every step() counts itself: self._step_count += 1")
    last = schedule.get_last_lr()
    t.equal(list(last) if isinstance(last, (list, tuple)) else last, [group["lr"] for group in opt.param_groups],
            "get_last_lr() after 2 steps (each group's current lr)")
    saved = schedule.state_dict()
    t.true(isinstance(saved, dict) and "optimizer" not in saved and saved.get("last_epoch") == 2
           and list(saved.get("base_lrs", [])) == [0.1, 0.5],
           "state_dict() to be a dict of the scheduler's attributes (last_epoch 2, base_lrs), without the optimizer",
           hint="{key: value for key, value in self.__dict__.items() if key != 'optimizer'}")
    again = CosineAnnealingLR(_optimizer(0.1, 0.5), T_max=99)
    again.optimizer = opt
    again.load_state_dict(saved)
    for s in (schedule, again):
        s.step()
    t.equal(again.get_last_lr(), schedule.get_last_lr(),
            "the lrs of a fresh CosineAnnealingLR(T_max=99) after load_state_dict() of one stepped twice, then one "
            "step each", hint="load_state_dict: self.__dict__.update(state_dict) restores T_max and last_epoch")
    error = t.raises(TypeError, CosineAnnealingLR, [tc.zeros(1)], T_max=4,
                     what="CosineAnnealingLR([a tensor], T_max=4), given a list instead of an optimizer",
                     hint="__init__ starts with: if not isinstance(optimizer, tc.optim.Optimizer): raise TypeError(...)")
    t.equal(str(error), "list is not an Optimizer", "the TypeError's message (PyTorch's words)",
            hint='f"{type(optimizer).__name__} is not an Optimizer"')
    # LambdaLR: one function for every group, then one function per group
    got = _lrs(lambda o: LambdaLR(o, _warmup_cosine), [0.1, 0.5], 12)
    want = _lrs(lambda o: tc.optim.lr_scheduler.LambdaLR(o, _warmup_cosine), [0.1, 0.5], 12)
    t.close(got, want, "both groups' lr after each of 12 steps of LambdaLR(opt, warmup_cosine) (a linear warmup "
            "over 4 steps, then a cosine to a tenth; groups with lr 0.1 and 0.5), compared with "
            "tc.optim.lr_scheduler.LambdaLR", rtol=1e-12, atol=0,
            mistakes=_lambda_mistakes([0.1, 0.5], [_warmup_cosine] * 2, 12))
    opt = _optimizer(0.1, 0.5)
    schedule = LambdaLR(opt, _warmup_cosine)
    t.equal([group["lr"] for group in opt.param_groups], [0.025, 0.125], "each group's lr right after "
            "LambdaLR(opt, warmup_cosine) is made (base_lr times warmup_cosine(0) = 1/4)",
            hint="__init__ keeps self.lr_lambdas before super().__init__(optimizer, last_epoch), whose step() asks "
                 "get_lr() for the rates of step 0")
    fns = [_warmup_cosine, lambda k: 0.9 ** k]
    got = _lrs(lambda o: LambdaLR(o, fns), [0.1, 0.5], 6)
    want = _lrs(lambda o: tc.optim.lr_scheduler.LambdaLR(o, fns), [0.1, 0.5], 6)
    t.close(got, want, "both groups' lr after each of 6 steps of LambdaLR(opt, [warmup_cosine, lambda k: 0.9 ** k]) "
            "(one function per group)", rtol=1e-12, atol=0,
            mistakes=[mistakes.custom(lambda g, e: np.allclose(g[:, 1], 0.5 / 0.1 * e[:, 0]),
                                      "the second group follows the first group's function",
                                      "a list gives one function per group: self.lr_lambdas = list(lr_lambda)"),
                      *_lambda_mistakes([0.1, 0.5], fns, 6)])
    error = t.raises(ValueError, LambdaLR, _optimizer(0.1, 0.5), [_warmup_cosine],
                     what="LambdaLR(opt, [one function]) for an optimizer with 2 groups",
                     hint="a list (or tuple) must hold one function per group")
    t.equal(str(error), "Expected 2 lr_lambdas, but got 1", "the ValueError's message (PyTorch's words)",
            hint='f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}"')
