"""tc.amp.GradScaler against torch.amp.GradScaler("cpu"): scale, unscale_, the inf/NaN check that skips
a step, backoff and growth of the scale, state_dict, and the errors for calls in the wrong order."""
import pickle
import warnings

import numpy as np
import pytest
import torch

import tinygrad_course as tc


def _params(seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(3).astype(np.float32)]
    ours = [tc.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    return ours, theirs


def _loss(m, params, x, poison):
    w, b = params
    out = ((x @ w.T + b) ** 2).mean()
    return out * poison  # poison = inf or nan makes every gradient non-finite


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the poisoned steps compute inf - inf
@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
def test_a_training_run_matches_torch_step_for_step(opt_name):
    ours, theirs = _params()
    kwargs = dict(lr=0.05) if opt_name == "SGD" else dict(lr=0.01)
    opt = getattr(tc.optim, opt_name)(ours, **kwargs)
    topt = getattr(torch.optim, opt_name)(theirs, **kwargs)
    scaler = tc.amp.GradScaler("cpu", init_scale=2.0 ** 8, growth_interval=3)
    tscaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 8, growth_interval=3)
    rng = np.random.default_rng(1)
    poisons = [1.0, float("inf"), 1.0, 1.0, 1.0, 1.0, float("nan"), 1.0, 1.0, 1.0, 1.0]
    for step, poison in enumerate(poisons):
        xa = rng.standard_normal((5, 4)).astype(np.float32)
        opt.zero_grad()
        topt.zero_grad()
        scaled = scaler.scale(_loss(tc, ours, tc.tensor(xa), poison))
        tscaled = tscaler.scale(_loss(torch, theirs, torch.tensor(xa), poison))
        np.testing.assert_allclose(scaled.item(), tscaled.item(), rtol=1e-5)
        scaled.backward()
        tscaled.backward()
        scaler.step(opt)
        tscaler.step(topt)
        scaler.update()
        tscaler.update()
        assert scaler.get_scale() == tscaler.get_scale(), f"scale differs after step {step}"
        assert scaler.state_dict() == tscaler.state_dict()
        for p, tp in zip(ours, theirs):
            np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_skipped_step_leaves_parameters_and_backs_off():
    ours, _ = _params()
    before = [p.detach().numpy().copy() for p in ours]
    opt = tc.optim.SGD(ours, lr=0.1)
    scaler = tc.amp.GradScaler("cpu")
    scaler.scale(_loss(tc, ours, tc.ones(2, 4), float("inf"))).backward()
    assert scaler.step(opt) is None
    scaler.update()
    for p, b in zip(ours, before):
        np.testing.assert_array_equal(p.detach().numpy(), b)
    assert scaler.get_scale() == 2.0 ** 15


def test_unscale_divides_the_gradients_like_torch():
    ours, theirs = _params()
    scaler, tscaler = tc.amp.GradScaler("cpu", init_scale=1024.0), torch.amp.GradScaler("cpu", init_scale=1024.0)
    opt, topt = tc.optim.SGD(ours, lr=0.1), torch.optim.SGD(theirs, lr=0.1)
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    scaler.scale(_loss(tc, ours, tc.tensor(x), 1.0)).backward()
    tscaler.scale(_loss(torch, theirs, torch.tensor(x), 1.0)).backward()
    scaler.unscale_(opt)
    tscaler.unscale_(topt)
    for p, tp in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-6)
    # clipping between unscale_ and step sees true gradient sizes; step does not unscale again
    scaler.step(opt)
    tscaler.step(topt)
    for p, tp in zip(ours, theirs):
        np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=1e-6)


def test_scale_of_an_iterable_and_a_bad_type():
    scaler = tc.amp.GradScaler("cpu", init_scale=4.0)
    a, b = scaler.scale([tc.tensor(1.0), tc.tensor(2.0)])
    assert (a.item(), b.item()) == (4.0, 8.0)
    pair = scaler.scale((tc.tensor(1.0),))
    assert isinstance(pair, tuple)
    with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable of Tensors"):
        scaler.scale(3.0)


def _torch_error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e), str(e)
    return None


def _both(action):
    """Run `action(scaler, optimizer, params, lib)` on both frameworks; return their (type, message)."""
    results = []
    for lib, Scaler in ((tc, tc.amp.GradScaler), (torch, torch.amp.GradScaler)):
        p = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1)
        scaler = Scaler("cpu")
        results.append(_torch_error(lambda: action(scaler, opt, p, lib)))
    return results


def _backward(scaler, p):
    scaler.scale((p * 2).sum()).backward()


ORDER_ERRORS = {
    "unscale twice": lambda s, o, p, lib: (_backward(s, p), s.unscale_(o), s.unscale_(o)),
    "unscale after step": lambda s, o, p, lib: (_backward(s, p), s.step(o), s.unscale_(o)),
    "step twice": lambda s, o, p, lib: (_backward(s, p), s.step(o), s.step(o)),
    "closure": lambda s, o, p, lib: (_backward(s, p), s.step(o, closure=lambda: None)),
    "update before scale": lambda s, o, p, lib: s.update(),
    "step before scale": lambda s, o, p, lib: s.step(o),
    "empty state dict": lambda s, o, p, lib: s.load_state_dict({}),
    "fp16 gradients": lambda s, o, p, lib: _half_param_unscale(s, o, lib),
}


def _half_param_unscale(scaler, opt, lib):
    half = lib.ones(2, dtype=lib.float16, requires_grad=True)
    half.grad = lib.ones(2, dtype=lib.float16)
    opt.add_param_group({"params": [half]})
    scaler.scale(lib.ones(1))
    scaler.unscale_(opt)


@pytest.mark.parametrize("case", sorted(ORDER_ERRORS))
def test_errors_match_torch(case):
    ours, theirs = _both(ORDER_ERRORS[case])
    assert theirs is not None
    assert ours == theirs


def test_growth_and_backoff_factor_validation():
    with pytest.raises(AssertionError, match="growth factor must be > 1.0"):
        tc.amp.GradScaler("cpu", growth_factor=1.0)
    with pytest.raises(AssertionError, match="backoff factor must be < 1.0"):
        tc.amp.GradScaler("cpu", backoff_factor=1.0)


def test_disabled_scaler_is_transparent():
    ours, _ = _params()
    opt = tc.optim.SGD(ours, lr=0.1)
    scaler = tc.amp.GradScaler("cpu", enabled=False)
    loss = _loss(tc, ours, tc.ones(2, 4), 1.0)
    assert scaler.scale(loss) is loss
    loss.backward()
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 1.0 and scaler.state_dict() == {} and not scaler.is_enabled()


@pytest.mark.skipif(tc.cuda.is_available(), reason="checks the behaviour without a GPU")
def test_cuda_scaler_without_a_gpu_warns_and_disables_like_torch():
    with pytest.warns(UserWarning, match="CUDA is not available.  Disabling."):
        scaler = tc.amp.GradScaler()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert torch.amp.GradScaler().is_enabled() is scaler.is_enabled() is False


def test_state_dict_round_trip_and_pickle():
    scaler = tc.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    p = tc.ones(2, requires_grad=True)
    opt = tc.optim.SGD([p], lr=0.1)
    for _ in range(3):
        scaler.scale(p.sum()).backward()
        scaler.step(opt)
        scaler.update()
    state = scaler.state_dict()
    assert state == {"scale": 16.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 2,
                     "_growth_tracker": 1}
    fresh = tc.amp.GradScaler("cpu")
    fresh.load_state_dict(state)
    assert fresh.state_dict() == state
    clone = pickle.loads(pickle.dumps(scaler))
    assert clone.state_dict() == state
    torch_scaler = torch.amp.GradScaler("cpu")
    torch_scaler.load_state_dict(state)
    assert torch_scaler.state_dict() == state


def test_update_with_a_new_scale():
    scaler = tc.amp.GradScaler("cpu")
    scaler.scale(tc.ones(1))
    scaler.update(new_scale=4.0)
    assert scaler.get_scale() == 4.0
    scaler.update(new_scale=tc.tensor(2.0))
    assert scaler.get_scale() == 2.0
    with pytest.raises(AssertionError, match="new_scale should be a float"):
        scaler.update(new_scale=tc.tensor([1.0, 2.0]))


def test_growth_stops_at_float32_overflow():
    scaler = tc.amp.GradScaler("cpu", init_scale=2.0 ** 127, growth_interval=1)
    p = tc.ones(1, requires_grad=True)
    opt = tc.optim.SGD([p], lr=0.0)
    scaler.scale(p.sum()).backward()
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 2.0 ** 127
