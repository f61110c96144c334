"""ConstantLR, MultiplicativeLR, PolynomialLR, CosineAnnealingWarmRestarts, CyclicLR and ChainedScheduler give
exactly PyTorch's lr (and momentum) sequences, save and restore their state, and raise PyTorch's errors."""
import pickle
import warnings

import pytest
import torch

import tinygrad_course as tc
from tinygrad_course import optim
from tinygrad_course.optim import lr_scheduler as ours_sched

theirs_sched = torch.optim.lr_scheduler
EPOCHS = 30


def _pair(opt_name="SGD", groups=2, **opt_kwargs):
    opt_kwargs.setdefault("lr", 0.1)
    if opt_name == "SGD":
        opt_kwargs.setdefault("momentum", 0.9)

    def build(lib, mod):
        params = [lib.zeros(2, requires_grad=True) for _ in range(groups)]
        return getattr(mod, opt_name)([{"params": [p], "lr": opt_kwargs["lr"] * (i + 1)} for i, p in enumerate(params)],
                                      **opt_kwargs)

    return build(tc, optim), build(torch, torch.optim)


def _momentum(group):
    return group["betas"][0] if "betas" in group else group.get("momentum")


def _sequence(opt, sched, epochs=EPOCHS, epoch_arg=None):
    out = [(list(sched.get_last_lr()), [_momentum(g) for g in opt.param_groups])]
    for e in range(epochs):
        opt.step()
        sched.step() if epoch_arg is None else sched.step(epoch_arg(e))
        lrs = [g["lr"] for g in opt.param_groups]
        assert sched.get_last_lr() == lrs
        out.append((lrs, [_momentum(g) for g in opt.param_groups]))
    return out


class Halving:
    """A callable object (its state is saved by state_dict, unlike a plain function's)."""

    def __init__(self):
        self.factor = 0.5

    def __call__(self, x):
        return self.factor ** x


CASES = [
    ("ConstantLR", dict(factor=0.5, total_iters=4), {}),
    ("ConstantLR", dict(), {}),
    ("MultiplicativeLR", dict(lr_lambda=lambda e: 0.95), {}),
    ("MultiplicativeLR", dict(lr_lambda=[lambda e: 0.9, lambda e: 1.0 - 0.01 * e]), {}),
    ("PolynomialLR", dict(total_iters=12, power=2.0), {}),
    ("PolynomialLR", dict(), {}),
    ("CosineAnnealingWarmRestarts", dict(T_0=5, T_mult=2, eta_min=0.01), {}),
    ("CosineAnnealingWarmRestarts", dict(T_0=7), {}),
    ("CosineAnnealingWarmRestarts", dict(T_0=4, T_mult=2), {"epoch_arg": lambda e: e * 0.37}),
    ("CosineAnnealingWarmRestarts", dict(T_0=3), {"epoch_arg": lambda e: 1.3 * e}),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=4), {}),
    ("CyclicLR", dict(base_lr=[0.01, 0.02], max_lr=0.2, step_size_up=3, step_size_down=5, mode="triangular2"), {}),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=5, mode="exp_range", gamma=0.9), {}),
    ("CyclicLR", dict(base_lr=0.001, max_lr=0.01, step_size_up=4, base_momentum=0.7, max_momentum=0.95),
     {"opt": "Adam"}),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=3, cycle_momentum=False), {"opt": "Adagrad"}),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=3, scale_fn=Halving(), scale_mode="iterations"), {}),
]


@pytest.mark.parametrize("name,kwargs,extra", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
@pytest.mark.parametrize("groups", [1, 2])
def test_lr_and_momentum_sequences_equal_pytorch(name, kwargs, extra, groups):
    if groups == 1:
        kwargs = {k: (v[0] if isinstance(v, list) else v) for k, v in kwargs.items()}
    o, t = _pair(extra.get("opt", "SGD"), groups)
    ours, theirs = getattr(ours_sched, name)(o, **kwargs), getattr(theirs_sched, name)(t, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = _sequence(o, ours, epoch_arg=extra.get("epoch_arg"))
        want = _sequence(t, theirs, epoch_arg=extra.get("epoch_arg"))
    assert got == want


def _chain(lib_sched, o, with_optimizer):
    parts = [lib_sched.ConstantLR(o, factor=0.1, total_iters=3), lib_sched.ExponentialLR(o, gamma=0.9)]
    return lib_sched.ChainedScheduler(parts, optimizer=o) if with_optimizer else lib_sched.ChainedScheduler(parts)


@pytest.mark.parametrize("with_optimizer", [False, True])
def test_chained_scheduler_equals_pytorch(with_optimizer):
    o, t = _pair()
    assert _sequence(o, _chain(ours_sched, o, with_optimizer)) == _sequence(t, _chain(theirs_sched, t, with_optimizer))


def test_sequential_lr_over_the_new_schedulers_equals_pytorch():
    def build(lib_sched, o):
        return lib_sched.SequentialLR(o, [lib_sched.ConstantLR(o, factor=0.2, total_iters=4),
                                          lib_sched.PolynomialLR(o, total_iters=10, power=1.5),
                                          lib_sched.CosineAnnealingWarmRestarts(o, T_0=4)], milestones=[5, 12])

    o, t = _pair()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _sequence(o, build(ours_sched, o)) == _sequence(t, build(theirs_sched, t))


@pytest.mark.parametrize("name,kwargs", [("ConstantLR", dict(factor=0.25, total_iters=3)),
                                         ("PolynomialLR", dict(total_iters=6, power=3.0))])
def test_epoch_argument_uses_the_closed_form_like_pytorch(name, kwargs):
    o, t = _pair()
    ours, theirs = getattr(ours_sched, name)(o, **kwargs), getattr(theirs_sched, name)(t, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for epoch in [4, 1, 9, 2, 0]:
            ours.step(epoch)
            theirs.step(epoch)
            assert ours.get_last_lr() == theirs.get_last_lr()


RESUMABLE = [
    lambda o, lib: lib.ConstantLR(o, factor=0.5, total_iters=6),
    lambda o, lib: lib.MultiplicativeLR(o, lr_lambda=Halving()),
    lambda o, lib: lib.PolynomialLR(o, total_iters=15, power=2.0),
    lambda o, lib: lib.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.001),
    lambda o, lib: lib.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3, mode="triangular2"),
    lambda o, lib: lib.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3, scale_fn=Halving()),
    lambda o, lib: lib.ChainedScheduler([lib.ConstantLR(o, factor=0.1, total_iters=4), lib.ExponentialLR(o, 0.9)]),
]


@pytest.mark.parametrize("make", RESUMABLE, ids=range(len(RESUMABLE)))
def test_state_dict_resume_continues_the_same_sequence(make):
    def run(split):
        o = optim.SGD([tc.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
        s = make(o, ours_sched)
        lrs = []
        for e in range(20):
            if e == split:
                sd, osd = pickle.loads(pickle.dumps(s.state_dict())), o.state_dict()
                o = optim.SGD([tc.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
                s = make(o, ours_sched)
                o.load_state_dict(osd)
                s.load_state_dict(sd)
            o.step()
            s.step()
            lrs.append((s.get_last_lr(), o.param_groups[0]["momentum"]))
        return lrs

    assert run(split=None) == run(split=7)


@pytest.mark.parametrize("make", RESUMABLE, ids=range(len(RESUMABLE)))
def test_state_dict_keys_match_pytorch(make):
    o, t = _pair(groups=1)
    ours, theirs = make(o, ours_sched), make(t, theirs_sched)
    sd, tsd = ours.state_dict(), theirs.state_dict()
    private = {"_get_lr_called_within_step"}  # PyTorch's guard flag for calling get_lr() outside step()
    assert set(sd) == set(tsd) - private
    for key in ("_scale_fn_custom", "lr_lambdas"):
        if key in tsd:
            assert sd[key] == tsd[key]


def test_errors_like_pytorch():
    o = optim.SGD([tc.zeros(1, requires_grad=True)], lr=0.1)
    t = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    adagrad = (optim.Adagrad([tc.zeros(1, requires_grad=True)]),
               torch.optim.Adagrad([torch.zeros(1, requires_grad=True)]))
    cases = [
        (lambda lib, o: lib.ConstantLR(o, factor=1.5), ValueError),
        (lambda lib, o: lib.MultiplicativeLR(o, lr_lambda=[lambda e: 1.0, lambda e: 1.0]), ValueError),
        (lambda lib, o: lib.MultiplicativeLR(o, lr_lambda=0.9), TypeError),
        (lambda lib, o: lib.CosineAnnealingWarmRestarts(o, T_0=0), ValueError),
        (lambda lib, o: lib.CosineAnnealingWarmRestarts(o, T_0=2.5), ValueError),
        (lambda lib, o: lib.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0), ValueError),
        (lambda lib, o: lib.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="0"), ValueError),
        (lambda lib, o: lib.CosineAnnealingWarmRestarts(o, T_0=2).step(-1), ValueError),
        (lambda lib, o: lib.CyclicLR(o, 0.01, 0.1, mode="sine"), ValueError),
        (lambda lib, o: lib.CyclicLR(o, [0.01, 0.02], 0.1), ValueError),
        (lambda lib, o: lib.ChainedScheduler([]), ValueError),
        (lambda lib, o: lib.ChainedScheduler([lib.ReduceLROnPlateau(o)]), ValueError),
        (lambda lib, o: lib.ChainedScheduler([object()], optimizer=o), TypeError),
    ]
    for make, error in cases:
        with pytest.raises(error) as ours:
            make(ours_sched, o)
        with pytest.raises(error) as theirs:
            make(theirs_sched, t)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(ValueError) as ours:
        ours_sched.CyclicLR(adagrad[0], 0.01, 0.1)
    with pytest.raises(ValueError) as theirs:
        theirs_sched.CyclicLR(adagrad[1], 0.01, 0.1)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("name", ["ConstantLR", "MultiplicativeLR", "PolynomialLR", "CosineAnnealingWarmRestarts",
                                  "CyclicLR", "ChainedScheduler", "LambdaLR", "LinearLR", "OneCycleLR", "SequentialLR"])
def test_signature_equals_pytorch(name):
    import inspect

    def signature(fn):
        return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]

    assert signature(getattr(ours_sched, name)) == signature(getattr(theirs_sched, name))
    assert name in ours_sched.__all__
