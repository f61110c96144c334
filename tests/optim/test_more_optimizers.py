"""Adamax, NAdam, RAdam, Adadelta, ASGD, Rprop and LBFGS match PyTorch step for step (parameters and every
state entry), keep PyTorch's defaults, state_dict layout and errors, and resume from a saved state."""
import copy

import numpy as np
import pytest
import torch

import tinygrad_course as tc
from tinygrad_course import optim

SHAPES = [(4, 3), (5,)]
STEPS = 10

CONFIGS = [
    ("Adamax", dict(lr=0.05)),
    ("Adamax", dict(lr=0.02, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("Adamax", dict(lr=0.02, maximize=True)),
    ("NAdam", dict(lr=0.02)),
    ("NAdam", dict(lr=0.02, betas=(0.8, 0.95), weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.02, weight_decay=0.2, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict(lr=0.02)),
    ("RAdam", dict(lr=0.02, betas=(0.5, 0.6))),  # rho_t passes 5 within a few steps: both branches run
    ("RAdam", dict(lr=0.02, betas=(0.7, 0.8), weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict(lr=0.02, betas=(0.7, 0.8), weight_decay=0.1)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1)),
    ("Adadelta", dict(lr=0.5, maximize=True)),
    ("ASGD", dict(lr=0.05)),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=3, weight_decay=0.1)),  # averaging starts after t0
    ("ASGD", dict(lr=0.05, t0=0, maximize=True)),
    ("Rprop", dict(lr=0.01)),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.08))),
    ("Rprop", dict(lr=0.01, maximize=True)),
]


def _grads_for(step, values):
    """Gradients that depend on the current values (trajectories diverge if any update differs), with noise
    that flips signs now and then (so Rprop's shrink branch runs)."""
    rng = np.random.default_rng(100 + step)
    return [np.tanh(np.float32(2) * v - np.float32(0.3))
            + np.float32(0.7) * rng.standard_normal(v.shape).astype(np.float32) for v in values]


def _initial(dtype=np.float32):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype(dtype) for s in SHAPES]


def _numpy(x):
    return x.detach().cpu().numpy() if isinstance(x, (tc.Tensor, torch.Tensor)) else np.asarray(x)


def _assert_close(ours, theirs, rtol, what):
    want = _numpy(theirs).astype(np.float64)
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    np.testing.assert_allclose(_numpy(ours).astype(np.float64), want, rtol=rtol, atol=rtol * scale, err_msg=what)


def _pair(name, kwargs, dtype=np.float32):
    ours = [tc.tensor(a.copy(), requires_grad=True) for a in _initial(dtype)]
    theirs = [torch.tensor(a.copy(), requires_grad=True) for a in _initial(dtype)]
    return ours, getattr(optim, name)(ours, **kwargs), theirs, getattr(torch.optim, name)(theirs, **kwargs)


def _step_both(k, ours, opt, theirs, topt):
    for p, q, g in zip(ours, theirs, _grads_for(k, [_numpy(q) for q in theirs])):
        p.grad = tc.tensor(g)
        q.grad = torch.tensor(g)
    opt.step()
    topt.step()


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=[f"{n}-{k}" for n, k in CONFIGS])
def test_parameters_and_state_match_pytorch_every_step(name, kwargs):
    ours, opt, theirs, topt = _pair(name, kwargs)
    for k in range(STEPS):
        _step_both(k, ours, opt, theirs, topt)
        for i, (p, q) in enumerate(zip(ours, theirs)):
            assert p.dtype == tc.float32
            _assert_close(p, q, 3e-6, f"param {i} after step {k + 1}")
            s, ts = opt.state[p], topt.state[q]
            assert list(s) == list(ts)
            for key, value in ts.items():
                assert s[key].shape == tuple(value.shape) and s[key].dtype == getattr(tc, str(value.dtype)[6:])
                if value.dim() == 0:  # step counters and scalars stay on the host, like PyTorch's
                    assert s[key].device.type == "cpu"
                else:
                    assert s[key].device == p.device
                _assert_close(s[key], value, 3e-6, f"state[{key!r}] of param {i} after step {k + 1}")


@pytest.mark.parametrize("name", ["Adamax", "NAdam", "RAdam", "Adadelta", "Rprop"])
def test_float64_parameters_match_pytorch_closely(name):
    ours, opt, theirs, topt = _pair(name, dict(lr=0.03), dtype=np.float64)
    for k in range(STEPS):
        _step_both(k, ours, opt, theirs, topt)
    for p, q in zip(ours, theirs):
        assert p.dtype == tc.float64 and opt.state[p]["step"].dtype == tc.float32
        _assert_close(p, q, 1e-12, name)


NAMES = ["Adamax", "NAdam", "RAdam", "Adadelta", "ASGD", "Rprop"]


@pytest.mark.parametrize("name", NAMES + ["LBFGS"])
def test_defaults_param_groups_and_repr_match_pytorch(name):
    ours, opt, theirs, topt = _pair(name, {})
    assert opt.defaults == topt.defaults
    assert [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups] == \
        [{k: v for k, v in g.items() if k != "params"} for g in topt.param_groups]
    assert repr(opt) == repr(topt)


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_layout_matches_pytorch(name):
    ours, opt, theirs, topt = _pair(name, dict(lr=0.01))
    for k in range(2):
        _step_both(k, ours, opt, theirs, topt)
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert sd["param_groups"] == tsd["param_groups"]
    assert list(sd["state"]) == list(tsd["state"]) == [0, 1]
    for k in sd["state"]:
        assert list(sd["state"][k]) == list(tsd["state"][k])


def _run_tc(params, opt, steps):
    for k in steps:
        for p, g in zip(params, _grads_for(k, [_numpy(p) for p in params])):
            p.grad = tc.tensor(g)
        opt.step()


@pytest.mark.parametrize("name", NAMES)
def test_load_state_dict_into_a_fresh_optimizer_continues_identically(name):
    kwargs = dict(lr=0.02, t0=2) if name == "ASGD" else dict(lr=0.02)
    straight = [tc.tensor(a, requires_grad=True) for a in _initial()]
    _run_tc(straight, getattr(optim, name)(straight, **kwargs), range(STEPS))

    first = [tc.tensor(a, requires_grad=True) for a in _initial()]
    opt = getattr(optim, name)(first, **kwargs)
    _run_tc(first, opt, range(STEPS // 2))
    saved = copy.deepcopy(opt.state_dict())
    resumed = [tc.tensor(_numpy(p), requires_grad=True) for p in first]
    opt2 = getattr(optim, name)(resumed, lr=0.5)
    opt2.load_state_dict(saved)
    assert opt2.param_groups[0]["lr"] == 0.02
    _run_tc(resumed, opt2, range(STEPS // 2, STEPS))
    for a, b in zip(resumed, straight):
        assert a.device == b.device
        np.testing.assert_array_equal(_numpy(a), _numpy(b))
    for key, value in opt2.state[resumed[0]].items():
        assert value is not saved["state"][0][key]  # loading copied the state
        assert value.device == (resumed[0].device if value.dim() else tc.device("cpu"))


@pytest.mark.parametrize("name,kwargs,match", [
    ("Adamax", dict(lr=-1.0), "Invalid learning rate: -1.0"),
    ("Adamax", dict(betas=(0.9, 1.0)), "Invalid beta parameter at index 1: 1.0"),
    ("NAdam", dict(momentum_decay=-1), "Invalid momentum_decay value: -1"),
    ("NAdam", dict(betas=(-0.1, 0.9)), "Invalid beta parameter at index 0: -0.1"),
    ("RAdam", dict(eps=-1), "Invalid epsilon value: -1"),
    ("RAdam", dict(weight_decay=-0.5), "Invalid weight_decay value: -0.5"),
    ("Adadelta", dict(rho=1.5), "Invalid rho value: 1.5"),
    ("Adadelta", dict(lr=-2), "Invalid learning rate: -2"),
    ("ASGD", dict(weight_decay=-1), "Invalid weight_decay value: -1"),
    ("Rprop", dict(etas=(1.5, 1.2)), "Invalid eta values: 1.5, 1.2"),
    ("LBFGS", dict(lr=-1.0), "Invalid learning rate: -1.0"),
])
def test_bad_hyper_parameters_raise_like_pytorch(name, kwargs, match):
    for lib, mod in ((tc, optim), (torch, torch.optim)):
        with pytest.raises(ValueError) as info:
            getattr(mod, name)([lib.zeros(2, requires_grad=True)], **kwargs)
        assert str(info.value) == match


# ---- LBFGS --------------------------------------------------------------------------------------------

_RNG = np.random.default_rng(3)
_M = _RNG.standard_normal((6, 6))
_A = _M @ _M.T / 6 + np.eye(6)
_B = _RNG.standard_normal(6)


def _lbfgs_problem(lib, mod, dtype, **kwargs):
    """A smooth convex loss over two parameters (a quadratic plus a quartic), with its LBFGS and closure."""
    x = lib.tensor(np.zeros((2, 3), dtype=dtype), requires_grad=True)
    y = lib.tensor(np.ones(3, dtype=dtype), requires_grad=True)
    a, b = lib.tensor(_A.astype(dtype)), lib.tensor(_B.astype(dtype))
    opt = mod.LBFGS([x, y], **kwargs)

    def closure():
        opt.zero_grad()
        z = lib.cat([x.reshape(-1)[:3], y])
        loss = 0.5 * (z * (a @ z)).sum() - (b * z).sum() + 0.1 * (x ** 4).sum()
        loss.backward()
        return loss

    return [x, y], opt, closure


def _rosenbrock_problem(lib, mod, dtype, **kwargs):
    x = lib.tensor(np.array([-1.2, 1.0, -0.5, 0.8], dtype=dtype), requires_grad=True)
    opt = mod.LBFGS([x], **kwargs)

    def closure():
        opt.zero_grad()
        loss = ((1 - x[:-1]) ** 2).sum() + 100 * ((x[1:] - x[:-1] ** 2) ** 2).sum()
        loss.backward()
        return loss

    return [x], opt, closure


LBFGS_CASES = [
    (_lbfgs_problem, np.float64, dict(), 1e-12),
    (_lbfgs_problem, np.float64, dict(max_iter=5, history_size=3), 1e-12),
    (_lbfgs_problem, np.float64, dict(line_search_fn="strong_wolfe"), 1e-12),
    (_lbfgs_problem, np.float64, dict(line_search_fn="strong_wolfe", max_iter=4, history_size=2), 1e-12),
    (_lbfgs_problem, np.float32, dict(max_iter=1), 1e-6),
    (_lbfgs_problem, np.float32, dict(max_iter=1, line_search_fn="strong_wolfe"), 1e-6),
    (_rosenbrock_problem, np.float64, dict(lr=0.5, history_size=5), 1e-7),
    (_rosenbrock_problem, np.float64, dict(line_search_fn="strong_wolfe"), 1e-7),
]


@pytest.mark.parametrize("problem,dtype,kwargs,tol", LBFGS_CASES,
                         ids=[f"{c[0].__name__}-{c[1].__name__}-{c[2]}" for c in LBFGS_CASES])
def test_lbfgs_matches_pytorch(problem, dtype, kwargs, tol):
    ours, opt, closure = problem(tc, optim, dtype, **kwargs)
    theirs, topt, tclosure = problem(torch, torch.optim, dtype, **kwargs)
    for step in range(4):
        loss, tloss = opt.step(closure), topt.step(tclosure)
        assert isinstance(loss, tc.Tensor) and loss.grad_fn is not None  # the first closure's loss, as in torch
        assert abs(loss.item() - tloss.item()) <= tol * max(1.0, abs(tloss.item()))
        for p, q in zip(ours, theirs):
            _assert_close(p, q, tol, f"step {step}")
        s, ts = opt.state[ours[0]], topt.state[theirs[0]]
        assert sorted(s) == sorted(ts)
        assert (s["func_evals"], s["n_iter"]) == (ts["func_evals"], ts["n_iter"])
        assert len(s["old_dirs"]) == len(ts["old_dirs"]) and len(s["ro"]) == len(ts["ro"])
        _assert_close(s["d"], ts["d"], tol * 1e3, "direction")
        assert s["d"].device == ours[0].device and s["prev_flat_grad"].device == ours[0].device


def test_lbfgs_state_dict_round_trip_continues_identically():
    straight, opt, closure = _lbfgs_problem(tc, optim, np.float64, max_iter=3, history_size=4)
    for _ in range(4):
        opt.step(closure)
    first, opt1, closure1 = _lbfgs_problem(tc, optim, np.float64, max_iter=3, history_size=4)
    for _ in range(2):
        opt1.step(closure1)
    saved = copy.deepcopy(opt1.state_dict())
    assert list(saved["state"]) == [0]
    resumed, opt2, closure2 = _lbfgs_problem(tc, optim, np.float64, max_iter=3, history_size=4)
    with tc.no_grad():
        for p, q in zip(resumed, first):
            p.copy_(q)
    opt2.load_state_dict(saved)
    for _ in range(2):
        opt2.step(closure2)
    for a, b in zip(resumed, straight):
        np.testing.assert_array_equal(_numpy(a), _numpy(b))


def test_lbfgs_errors_like_pytorch():
    p, q = tc.zeros(2, requires_grad=True), tc.zeros(1, requires_grad=True)
    with pytest.raises(ValueError, match=r"LBFGS doesn't support per-parameter options \(parameter groups\)"):
        optim.LBFGS([{"params": [p]}, {"params": [q]}])
    with pytest.raises(TypeError, match="closure"):
        optim.LBFGS([p]).step()
    ours, opt, closure = _lbfgs_problem(tc, optim, np.float64, line_search_fn="armijo")
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)


def test_lbfgs_stops_at_once_when_the_gradient_is_already_zero():
    p = tc.ones(3, requires_grad=True)
    opt = optim.LBFGS([p])

    def closure():
        opt.zero_grad()
        loss = ((p - 1) ** 2).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 0.0
    assert opt.state[p] == {"func_evals": 1, "n_iter": 0}


def _signature(fn):
    import inspect

    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize("name", NAMES + ["LBFGS"])
def test_constructor_signature_equals_pytorch(name):
    assert _signature(getattr(optim, name)) == _signature(getattr(torch.optim, name))
    assert name in optim.__all__
