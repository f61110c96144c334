"""Optimizers match PyTorch step for step (float32), for every option; plus the Optimizer API."""
import copy

import numpy as np
import pytest
import torch

import tinygrad_course as tc
from tinygrad_course import optim

SHAPES = [(5, 3), (3,)]
STEPS = 12

CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.5, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1)),
    ("Adam", dict(lr=0.02, amsgrad=True)),
    ("Adam", dict(lr=0.02, amsgrad=True, weight_decay=0.05, maximize=True)),
    ("Adam", dict(lr=0.01, betas=(0.3, 0.99))),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.3, amsgrad=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, momentum=0.5, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, centered=True)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.9, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5, eps=1e-6)),
    ("Adagrad", dict(lr=0.1, maximize=True)),
]


def _grad_fn(rng_seed):
    """Gradients that depend on the current values (so trajectories diverge if any step differs)."""
    rng = np.random.default_rng(rng_seed)
    noise = [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(STEPS)]
    targets = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]

    def grads(step, values):
        return [np.tanh(np.float32(3) * (v - t) * np.abs(v)) + np.float32(0.5) * n
                for v, t, n in zip(values, targets, noise[step])]

    return grads


def _initial(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in SHAPES]


def _run_tc(name, kwargs, steps=STEPS, groups=None):
    params = [tc.tensor(a.copy(), requires_grad=True) for a in _initial()]
    opt = getattr(optim, name)(groups(params) if groups else params, **kwargs)
    grads = _grad_fn(1)
    for k in range(steps):
        for p, g in zip(params, grads(k, [p.detach().cpu().numpy() for p in params])):
            p.grad = tc.tensor(g)
        opt.step()
    return params, opt


def _run_torch(name, kwargs, steps=STEPS, groups=None):
    params = [torch.tensor(a.copy(), requires_grad=True) for a in _initial()]
    opt = getattr(torch.optim, name)(groups(params) if groups else params, **kwargs)
    grads = _grad_fn(1)
    for k in range(steps):
        for p, g in zip(params, grads(k, [p.detach().cpu().numpy() for p in params])):
            p.grad = torch.tensor(g)
        opt.step()
    return params, opt


def _assert_params_equal(ours, theirs):
    for a, b in zip(ours, theirs):
        assert a.dtype == tc.float32
        np.testing.assert_allclose(a.detach().cpu().numpy(), b.detach().cpu().numpy(), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=[f"{n}-{k}" for n, k in CONFIGS])
def test_parameters_match_pytorch_after_n_steps(name, kwargs):
    ours, opt = _run_tc(name, kwargs)
    theirs, topt = _run_torch(name, kwargs)
    _assert_params_equal(ours, theirs)
    # the state has the same entries, with the same values
    for i, p in enumerate(ours):
        s, ts = opt.state[p], topt.state[theirs[i]]
        assert set(s) == set(ts)
        for key in s:
            if isinstance(ts[key], torch.Tensor):
                want = ts[key].cpu().numpy().astype(np.float64)
                scale = max(1.0, float(np.abs(want).max()))
                np.testing.assert_allclose(np.asarray(s[key].cpu().numpy(), dtype=np.float64), want,
                                           rtol=2e-6, atol=2e-6 * scale)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_defaults_and_state_dict_layout_match_pytorch(name):
    ours, opt = _run_tc(name, dict(lr=0.01), steps=2)
    theirs, topt = _run_torch(name, dict(lr=0.01), steps=2)
    assert opt.defaults == topt.defaults
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert sd["param_groups"] == tsd["param_groups"]
    assert list(sd["state"]) == list(tsd["state"])
    for k in sd["state"]:
        assert list(sd["state"][k]) == list(tsd["state"][k])


def test_per_group_options_match_pytorch():
    def groups(ps):
        return [{"params": [ps[0]], "lr": 0.05, "momentum": 0.5}, {"params": [ps[1]]}]

    ours, opt = _run_tc("SGD", dict(lr=0.1, momentum=0.9), groups=groups)
    theirs, _ = _run_torch("SGD", dict(lr=0.1, momentum=0.9), groups=groups)
    _assert_params_equal(ours, theirs)
    assert opt.param_groups[0]["lr"] == 0.05 and opt.param_groups[1]["lr"] == 0.1
    assert opt.param_groups[0]["momentum"] == 0.5 and opt.param_groups[1]["momentum"] == 0.9


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "Adagrad"])
def test_load_state_dict_continues_identically(name):
    kwargs = dict(lr=0.01, momentum=0.9) if name in ("SGD", "RMSprop") else dict(lr=0.01)
    full, _ = _run_tc(name, kwargs, steps=STEPS)
    # run half, copy params and optimizer state into fresh objects, run the rest
    params = [tc.tensor(a.copy(), requires_grad=True) for a in _initial()]
    opt = getattr(optim, name)(params, **kwargs)
    grads = _grad_fn(1)
    for k in range(STEPS // 2):
        for p, g in zip(params, grads(k, [p.detach().cpu().numpy() for p in params])):
            p.grad = tc.tensor(g)
        opt.step()
    saved = copy.deepcopy(opt.state_dict())
    params2 = [tc.tensor(p.detach().cpu().numpy().copy(), requires_grad=True) for p in params]
    opt2 = getattr(optim, name)(params2, **kwargs)
    opt2.load_state_dict(saved)
    for k in range(STEPS // 2, STEPS):
        for p, g in zip(params2, grads(k, [p.detach().cpu().numpy() for p in params2])):
            p.grad = tc.tensor(g)
        opt2.step()
    for a, b in zip(params2, full):
        np.testing.assert_array_equal(a.detach().cpu().numpy(), b.detach().cpu().numpy())
    # loading copied the state: stepping opt2 did not change the saved dict
    assert saved["state"][0] is not opt2.state[params2[0]]


def test_load_state_dict_from_pytorch_layout():
    theirs, topt = _run_torch("Adam", dict(lr=0.01), steps=3)
    tsd = topt.state_dict()
    converted = {"state": {k: {n: tc.tensor(v.numpy()) for n, v in s.items()} for k, s in tsd["state"].items()},
                 "param_groups": tsd["param_groups"]}
    params = [tc.tensor(p.detach().cpu().numpy(), requires_grad=True) for p in theirs]
    opt = optim.Adam(params, lr=0.5)
    opt.load_state_dict(converted)
    assert opt.param_groups[0]["lr"] == 0.01
    assert float(opt.state[params[0]]["step"]) == 3.0


def test_load_state_dict_errors():
    a, b = tc.zeros(2, requires_grad=True), tc.zeros(3, requires_grad=True)
    opt = optim.SGD([a, b], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": []})
    with pytest.raises(ValueError, match="doesn't match the size"):
        opt.load_state_dict({"state": {}, "param_groups": [{"lr": 0.1, "params": [0]}]})


def test_state_moves_to_parameter_dtype():
    p = tc.zeros(3, dtype=tc.float64, requires_grad=True)
    opt = optim.Adam([p], lr=0.1)
    opt.load_state_dict({"state": {0: {"step": tc.tensor(1.0), "exp_avg": tc.ones(3), "exp_avg_sq": tc.ones(3)}},
                         "param_groups": [dict(opt.param_groups[0], params=[0])]})
    assert opt.state[p]["exp_avg"].dtype == tc.float64
    assert opt.state[p]["step"].dtype == tc.float32


def test_zero_grad_set_to_none_and_zeros():
    p = tc.ones(3, requires_grad=True)
    opt = optim.SGD([p], lr=0.1)
    (p * 2).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert p.grad is not None and p.grad.tolist() == [0.0, 0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None


def test_params_without_grad_are_skipped_and_step_returns_closure_loss():
    a, b = tc.ones(2, requires_grad=True), tc.ones(2, requires_grad=True)
    opt = optim.Adam([a, b], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (a * a).sum()
        loss.backward()
        return loss

    with tc.no_grad():
        loss = opt.step(closure)  # closure runs with grad enabled even under no_grad
    assert loss.item() == 2.0
    assert b.tolist() == [1.0, 1.0] and b not in opt.state
    assert a.tolist() != [1.0, 1.0]


def test_step_bumps_version_so_stale_saved_tensors_are_detected():
    p = tc.ones(3, requires_grad=True)
    opt = optim.SGD([p], lr=0.1)
    y = (p * p).sum()
    p.grad = tc.ones(3)
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_construction_errors_like_pytorch():
    p = tc.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="iterable of Tensors"):
        optim.SGD(p, lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate"):
        optim.Adam([p], lr=-1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
        optim.Adam([p], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Nesterov momentum requires"):
        optim.SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([p * 2], lr=0.1)
    opt = optim.SGD([p], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [p]})
    with pytest.raises(TypeError, match="ordered collections"):
        opt.add_param_group({"params": {tc.zeros(1, requires_grad=True)}})


def test_add_param_group_fills_defaults_and_named_params():
    a, b = tc.zeros(2, requires_grad=True), tc.zeros(2, requires_grad=True)
    opt = optim.SGD([("a", a)], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": b, "lr": 0.01})
    assert opt.param_groups[0]["param_names"] == ["a"]
    assert opt.param_groups[1]["params"] == [b] or opt.param_groups[1]["params"][0] is b
    assert opt.param_groups[1]["lr"] == 0.01 and opt.param_groups[1]["momentum"] == 0.9


def test_repr_lists_group_options_like_pytorch():
    p = torch.zeros(2, requires_grad=True)
    ours = optim.Adam([tc.zeros(2, requires_grad=True)], lr=0.1)
    assert repr(ours) == repr(torch.optim.Adam([p], lr=0.1))
