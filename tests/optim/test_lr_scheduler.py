"""Learning-rate schedules produce exactly PyTorch's sequences, and save/restore their state."""
import pickle
import warnings

import pytest
import torch

import tinygrad_course as tc
from tinygrad_course import optim
from tinygrad_course.optim import lr_scheduler as ours_sched

EPOCHS = 40


def _pair(opt_name="SGD", groups=1, **opt_kwargs):
    opt_kwargs.setdefault("lr", 0.1)
    ours = [tc.zeros(2, requires_grad=True) for _ in range(groups)]
    theirs = [torch.zeros(2, requires_grad=True) for _ in range(groups)]
    o = getattr(optim, opt_name)([{"params": [p], "lr": opt_kwargs["lr"] * (i + 1)} for i, p in enumerate(ours)],
                                 **opt_kwargs)
    t = getattr(torch.optim, opt_name)([{"params": [p], "lr": opt_kwargs["lr"] * (i + 1)}
                                        for i, p in enumerate(theirs)], **opt_kwargs)
    return o, t


def _sequence(opt, sched, epochs=EPOCHS, metric=None):
    lrs = [list(sched.get_last_lr())]
    momenta = []
    for e in range(epochs):
        opt.step()
        if metric is None:
            sched.step()
        else:
            sched.step(metric(e))
        lrs.append([g["lr"] for g in opt.param_groups])
        momenta.append([g.get("momentum", g.get("betas", (None,))[0]) for g in opt.param_groups])
        assert sched.get_last_lr() == lrs[-1]
    return lrs, momenta


def _plateau_metric(e):
    return 1.0 / (1 + min(e, 5))


CASES = [
    ("StepLR", dict(step_size=7, gamma=0.5), {}),
    ("MultiStepLR", dict(milestones=[3, 10, 10, 25], gamma=0.3), {}),
    ("ExponentialLR", dict(gamma=0.93), {}),
    ("CosineAnnealingLR", dict(T_max=10, eta_min=0.001), {}),
    ("CosineAnnealingLR", dict(T_max=7), {}),
    ("LinearLR", dict(start_factor=0.2, end_factor=0.9, total_iters=12), {}),
    ("LinearLR", dict(), {}),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=EPOCHS), {}),
    ("OneCycleLR", dict(max_lr=[0.5, 2.0], epochs=4, steps_per_epoch=10, anneal_strategy="linear", three_phase=True),
     {}),
    ("OneCycleLR", dict(max_lr=0.3, total_steps=EPOCHS, pct_start=0.25), {"opt": "Adam"}),
    ("ReduceLROnPlateau", dict(patience=3, factor=0.5, cooldown=2, min_lr=0.01), {"metric": _plateau_metric}),
    ("ReduceLROnPlateau", dict(mode="max", patience=2, threshold_mode="abs", threshold=0.1), {"metric": lambda e: 1.0}),
]


@pytest.mark.parametrize("name,kwargs,extra", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
@pytest.mark.parametrize("groups", [1, 2])
def test_lr_sequence_equals_pytorch(name, kwargs, extra, groups):
    opt_name = extra.get("opt", "SGD")
    opt_kwargs = {"momentum": 0.9} if opt_name == "SGD" else {}
    if isinstance(kwargs.get("max_lr"), list) and groups == 1:
        kwargs = dict(kwargs, max_lr=kwargs["max_lr"][0])
    o, t = _pair(opt_name, groups, **opt_kwargs)
    ours = getattr(ours_sched, name)(o, **kwargs)
    theirs = getattr(torch.optim.lr_scheduler, name)(t, **kwargs)
    metric = extra.get("metric")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = _sequence(o, ours, metric=metric)
        want = _sequence(t, theirs, metric=metric)
    assert got == want


def test_lambda_lr_equals_pytorch():
    o, t = _pair(groups=2)
    fns = [lambda e: 0.95 ** e, lambda e: 1.0 / (1 + e)]
    assert _sequence(o, ours_sched.LambdaLR(o, fns)) == _sequence(t, torch.optim.lr_scheduler.LambdaLR(t, fns))


def test_sequential_lr_equals_pytorch():
    o, t = _pair(groups=2)
    ours = ours_sched.SequentialLR(o, [ours_sched.LinearLR(o, start_factor=0.1, total_iters=5),
                                       ours_sched.CosineAnnealingLR(o, T_max=20)], milestones=[5])
    theirs = torch.optim.lr_scheduler.SequentialLR(t, [torch.optim.lr_scheduler.LinearLR(t, start_factor=0.1, total_iters=5),
                                                       torch.optim.lr_scheduler.CosineAnnealingLR(t, T_max=20)],
                                                   milestones=[5])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _sequence(o, ours, epochs=30) == _sequence(t, theirs, epochs=30)


def test_closed_form_with_epoch_argument_matches_pytorch():
    o, t = _pair()
    ours, theirs = ours_sched.StepLR(o, 3, 0.5), torch.optim.lr_scheduler.StepLR(t, 3, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for epoch in [4, 9, 2]:
            ours.step(epoch)
            theirs.step(epoch)
            assert ours.get_last_lr() == theirs.get_last_lr()


@pytest.mark.parametrize("make", [
    lambda o: ours_sched.CosineAnnealingLR(o, T_max=10),
    lambda o: ours_sched.OneCycleLR(o, max_lr=1.0, total_steps=30),
    lambda o: ours_sched.SequentialLR(o, [ours_sched.ExponentialLR(o, 0.9), ours_sched.StepLR(o, 2)], [4]),
    lambda o: ours_sched.ReduceLROnPlateau(o, patience=1),
])
def test_state_dict_resume_continues_the_same_sequence(make):
    def run(split):
        o = optim.SGD([tc.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
        s = make(o)
        lrs = []
        for e in range(20):
            if e == split:
                sd, osd = pickle.loads(pickle.dumps(s.state_dict())), o.state_dict()
                # the usual checkpoint order: build optimizer and scheduler, then load both states
                o = optim.SGD([tc.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
                s = make(o)
                o.load_state_dict(osd)
                s.load_state_dict(sd)
            o.step()
            s.step(1.0) if isinstance(s, ours_sched.ReduceLROnPlateau) else s.step()
            lrs.append(s.get_last_lr())
        return lrs

    assert run(split=None) == run(split=8)


def test_warns_when_scheduler_steps_before_optimizer():
    o = optim.SGD([tc.zeros(1, requires_grad=True)], lr=0.1)
    s = ours_sched.StepLR(o, 1)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        s.step()


def test_errors_like_pytorch():
    o = optim.SGD([tc.zeros(1, requires_grad=True)], lr=0.1)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        ours_sched.StepLR(object(), 1)
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        ours_sched.ReduceLROnPlateau(o, factor=1.0)
    with pytest.raises(KeyError, match="initial_lr"):
        ours_sched.StepLR(optim.SGD([tc.zeros(1, requires_grad=True)], lr=0.1), 1, last_epoch=3)
    s = ours_sched.OneCycleLR(o, max_lr=1.0, total_steps=2)
    o.step()
    s.step()
    s.step()
    with pytest.raises(ValueError, match="Tried to step 3 times"):
        s.step()
