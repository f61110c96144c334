"""The core suite's checks rerun per device: every op's value and gradient, layers, losses, optimizers and
a short training run, computed on `device` and compared with the same computation on the CPU.

On a machine without a GPU only the "cpu" cases run (CPU against itself: this keeps the harness honest);
with CuPy and a GPU the "cuda" cases (marked `gpu`) prove the one-code-path claim.
"""
import numpy as np
import pytest

import tinygrad_course as tc
import tinygrad_course.nn.functional as F
from devices import DEVICES, assert_close_across_devices, to_numpy


def _arrays(shapes, seed=0, positive=False):
    rng = np.random.default_rng(seed)
    out = []
    for s in shapes:
        a = rng.standard_normal(s)
        out.append((np.abs(a) + 0.5 if positive else a).astype(np.float32))
    return out


def _run(fn, arrays, device, dtype=tc.float32):
    """fn(*tensors) on `device`: the output and the gradient of every input (for a random upstream grad)."""
    inputs = [tc.tensor(a, dtype=dtype).to(device).requires_grad_() for a in arrays]
    out = fn(*inputs)
    upstream = tc.tensor(np.random.default_rng(99).standard_normal(tuple(out.shape)).astype(np.float32),
                         dtype=out.dtype).to(device)
    out.backward(upstream)
    return out, [t.grad for t in inputs]


def _compare(fn, shapes, device, rtol=1e-4, atol=1e-5, positive=False, dtype=tc.float32):
    arrays = _arrays(shapes, positive=positive)
    ref_out, ref_grads = _run(fn, arrays, "cpu", dtype)
    out, grads = _run(fn, arrays, device, dtype)
    assert out.device.type == tc.device(device).type
    assert_close_across_devices(ref_out, out, rtol, atol, "output")
    for i, (r, g) in enumerate(zip(ref_grads, grads)):
        assert (r is None) == (g is None)
        if r is not None:
            assert g.device == out.device, "gradients live on the input's device"
            assert_close_across_devices(r, g, rtol, atol, f"grad of input {i}")


ELEMENTWISE = {
    "add": (lambda a, b: a + b, [(3, 4), (4,)]),
    "sub": (lambda a, b: a - b * 2, [(3, 4), (3, 1)]),
    "mul": (lambda a, b: a * b, [(2, 3, 4), (3, 4)]),
    "div": (lambda a, b: a / b, [(3, 4), (3, 4)]),
    "pow": (lambda a: a ** 3, [(3, 4)]),
    "pow_tensor": (lambda a, b: a.abs() ** b, [(3, 4), (3, 4)]),
    "exp_log": (lambda a: a.exp() + (a * a + 1).log(), [(5,)]),
    "sqrt_rsqrt": (lambda a: (a * a + 1).sqrt() + (a * a + 1).rsqrt(), [(5,)]),
    "trig": (lambda a: a.sin() * a.cos() + a.tanh(), [(6,)]),
    "sigmoid_relu": (lambda a: a.sigmoid() + a.relu(), [(6,)]),
    "abs_neg_sign": (lambda a: a.abs() - (-a) * a.sign(), [(6,)]),
    "clamp": (lambda a: a.clamp(-0.5, 0.5), [(10,)]),
    "maximum_where": (lambda a, b: tc.maximum(a, b) + tc.where(a > b, a, b * 2), [(4, 4), (4, 4)]),
    "scalar_ops": (lambda a: 2 - a / 3 + 1.5 * a, [(3,)]),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise(name, device):
    fn, shapes = ELEMENTWISE[name]
    _compare(fn, shapes, device, positive=name in ("div", "pow_tensor"))


REDUCTIONS = {
    "sum_dim": lambda a: a.sum(1),
    "sum_all": lambda a: a.sum(),
    "mean_keepdim": lambda a: a.mean((0, 2), keepdim=True),
    "max_dim": lambda a: a.max(1).values,
    "amax": lambda a: a.amax(-1),
    "var_std": lambda a: a.var(1) + a.std(0).sum(),
    "prod": lambda a: a.prod(2),
    "cumsum": lambda a: a.cumsum(1),
    "softmax": lambda a: a.softmax(-1),
    "log_softmax": lambda a: a.log_softmax(1),
    "logsumexp": lambda a: a.logsumexp(2),
    "norm": lambda a: a.norm(),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions(name, device):
    _compare(REDUCTIONS[name], [(3, 4, 5)], device)


MOVEMENT = {
    "view_permute": lambda a: a.view(4, 15).t().reshape(3, 20).permute(1, 0),
    "transpose_contiguous": lambda a: a.transpose(0, 2).contiguous().flatten(),
    "basic_index": lambda a: a[1:, ::2, -1],
    "advanced_index_repeats": lambda a: a[[0, 2, 0, 0], :, [1, 1, 3, 1]],
    "bool_mask": lambda a: a[a > 0],
    "cat_stack": lambda a: tc.cat([a, a * 2], 1).sum(1) + tc.stack([a, a], 0).sum((0, 2)),
    "gather": lambda a: a.gather(2, tc.tensor([[[0, 4, 4]] * 4] * 3).to(a.device)),
    "scatter_add": lambda a: tc.zeros(3, 4, 2).to(a.device).scatter_add(2, tc.tensor([[[0, 1, 1, 0, 1]] * 4] * 3).to(a.device), a),
    "masked_fill": lambda a: a.masked_fill(a < 0, 0.0),
    "expand_flip_repeat": lambda a: a[:, :1].expand(3, 4, 5).flip(1).repeat(1, 2, 1),
    "unbind_split": lambda a: sum(t.sum() for t in a.unbind(1)) + a.split(2, 2)[1].sum(),
    "index_select_narrow": lambda a: a.index_select(1, tc.tensor([3, 0, 3]).to(a.device)).narrow(2, 1, 3),
    "triu": lambda a: a[0].triu(1),
}


@pytest.mark.parametrize("name", sorted(MOVEMENT))
def test_movement_and_indexing(name, device):
    _compare(MOVEMENT[name], [(3, 4, 5)], device)


MATMUL = {
    "mm": (lambda a, b: a @ b, [(5, 4), (4, 3)]),
    "mv": (lambda a, b: a @ b, [(5, 4), (4,)]),
    "dot": (lambda a, b: a @ b, [(4,), (4,)]),
    "bmm_broadcast": (lambda a, b: a @ b, [(2, 5, 4), (4, 3)]),
    "batched": (lambda a, b: tc.bmm(a, b), [(2, 5, 4), (2, 4, 3)]),
    "linear": (lambda x, w, b: F.linear(x, w, b), [(8, 4), (3, 4), (3,)]),
}


@pytest.mark.parametrize("name", sorted(MATMUL))
def test_matmul(name, device):
    fn, shapes = MATMUL[name]
    _compare(fn, shapes, device)


NN_FUNCTIONAL = {
    "conv2d": (lambda x, w, b: F.conv2d(x, w, b, stride=1, padding=1), [(2, 3, 7, 7), (4, 3, 3, 3), (4,)]),
    "conv2d_strided_groups": (lambda x, w: F.conv2d(x, w, stride=2, padding=1, groups=2),
                              [(2, 4, 8, 8), (6, 2, 3, 3)]),
    "max_pool2d": (lambda x: F.max_pool2d(x, 2), [(2, 3, 6, 6)]),
    "avg_pool2d": (lambda x: F.avg_pool2d(x, 3, stride=2, padding=1), [(2, 3, 7, 7)]),
    "adaptive_avg_pool2d": (lambda x: F.adaptive_avg_pool2d(x, (2, 3)), [(2, 3, 7, 8)]),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (5,), w, b), [(4, 3, 5), (5,), (5,)]),
    "batch_norm_train": (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), [(8, 3, 4, 4), (3,), (3,)]),
    "gelu": (lambda x: F.gelu(x), [(64, 33)]),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), [(64, 33)]),
    "silu_leaky": (lambda x: F.silu(x) + F.leaky_relu(x, 0.2), [(5, 6)]),
    "embedding": (lambda w: F.embedding(tc.tensor([[1, 2, 1], [0, 1, 4]]).to(w.device), w), [(5, 3)]),
    "pad_unfold": (lambda x: F.unfold(F.pad(x, (1, 1, 2, 0)), 2), [(1, 2, 4, 4)]),
}


@pytest.mark.parametrize("name", sorted(NN_FUNCTIONAL))
def test_nn_functional(name, device):
    fn, shapes = NN_FUNCTIONAL[name]
    _compare(fn, shapes, device)


_TARGET = np.array([0, 3, 1, 3, 2, 0, -100, 1])


def _target(device):
    return tc.tensor(_TARGET).to(device)


LOSSES = {
    "cross_entropy": lambda x: F.cross_entropy(x, _target(x.device).clamp(0, 3)),
    "cross_entropy_ignore_smoothing": lambda x: F.cross_entropy(x, _target(x.device), label_smoothing=0.1),
    "cross_entropy_weight_sum": lambda x: F.cross_entropy(x, _target(x.device).clamp(0, 3), reduction="sum",
                                                          weight=tc.tensor([1.0, 2.0, 0.5, 1.0]).to(x.device)),
    "cross_entropy_none": lambda x: F.cross_entropy(x, _target(x.device).clamp(0, 3), reduction="none"),
    "cross_entropy_probabilities": lambda x: F.cross_entropy(x, x.detach().softmax(1) * 0.5 + 0.125),
    "nll_loss": lambda x: F.nll_loss(F.log_softmax(x, 1), _target(x.device).clamp(0, 3)),
    "mse_l1": lambda x: F.mse_loss(x, x.detach() * 0.5) + F.l1_loss(x, tc.zeros(8, 4).to(x.device)),
    "bce": lambda x: F.binary_cross_entropy(x.sigmoid(), (x.detach() > 0).float()),
    "bce_with_logits": lambda x: F.binary_cross_entropy_with_logits(x, (x.detach() > 0).float()),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_losses(name, device):
    _compare(LOSSES[name], [(8, 4)], device)


@pytest.mark.parametrize("name", ["mul", "div", "exp_log", "trig"])
def test_gradcheck_in_float64_on_device(name, device):
    fn, shapes = ELEMENTWISE[name]
    inputs = [tc.tensor(a, dtype=tc.float64).to(device).requires_grad_()
              for a in _arrays(shapes, positive=name == "div")]
    assert tc.autograd.gradcheck(fn, tuple(inputs))


def test_float64_and_integer_dtypes_survive_the_trip(device):
    for dtype in (tc.float64, tc.int64, tc.int32, tc.bool, tc.float16):
        t = tc.tensor([1, 0, 1], dtype=dtype).to(device)
        assert t.dtype is dtype and t.cpu().dtype is dtype
        assert t.cpu().tolist() == [1, 0, 1] or dtype is tc.bool and t.cpu().tolist() == [True, False, True]


def test_factories_and_random_on_device(device):
    for t in (tc.zeros(2, 3, device=device), tc.ones(2, device=device), tc.arange(5, device=device),
              tc.full((2,), 3.0, device=device), tc.eye(3, device=device), tc.randn(4, device=device),
              tc.rand(4, device=device), tc.randint(0, 5, (3,), device=device), tc.empty(2, device=device),
              tc.linspace(0, 1, 5, device=device)):
        assert t.device.type == tc.device(device).type
    tc.manual_seed(0)
    a = tc.randn(100, device=device)
    tc.manual_seed(0)
    b = tc.randn(100, device=device)
    np.testing.assert_array_equal(to_numpy(a), to_numpy(b))  # seeding is reproducible on each device


def test_inplace_ops_and_version_counter(device):
    x = tc.zeros(3, device=device)
    x.add_(1).mul_(3)
    x[1] = 7.0
    assert x.cpu().tolist() == [3.0, 7.0, 3.0] and x._version[0] == 3


# ---- layers, optimizers, training ----------------------------------------------------------------------
def _model():
    # No conv bias before BatchNorm: its true gradient is zero, so the rounding noise left in it would be
    # amplified into steps of size lr by Adam-like optimizers and differ from device to device.
    tc.manual_seed(0)
    return tc.nn.Sequential(
        tc.nn.Conv2d(1, 4, 3, padding=1, bias=False), tc.nn.BatchNorm2d(4), tc.nn.ReLU(), tc.nn.MaxPool2d(2),
        tc.nn.Flatten(), tc.nn.Linear(4 * 4 * 4, 16), tc.nn.LayerNorm(16), tc.nn.GELU(), tc.nn.Dropout(0.0),
        tc.nn.Linear(16, 3))


def _batch(seed=0, n=16):
    rng = np.random.default_rng(seed)
    return tc.tensor(rng.standard_normal((n, 1, 8, 8)).astype(np.float32)), tc.tensor(rng.integers(0, 3, n))


def test_module_to_moves_parameters_and_buffers(device):
    model = _model()
    params = list(model.parameters())
    assert model.to(device) is model
    assert [id(p) for p in model.parameters()] == [id(p) for p in params]  # moved in place, like PyTorch
    for t in list(model.parameters()) + list(model.buffers()):
        assert t.device.type == tc.device(device).type
    x, y = _batch()
    out = model(x.to(device))
    assert out.device.type == tc.device(device).type


def test_state_dict_moves_back_to_cpu(device):
    model = _model().to(device)
    state = {k: v.cpu() for k, v in model.state_dict().items()}
    fresh = _model()
    fresh.load_state_dict(state)
    x, _ = _batch()
    assert_close_across_devices(fresh(x), model(x.to(device)), 1e-4, 1e-5, "model output")


OPTIMIZERS = {
    "SGD": dict(lr=0.1),
    "SGD_momentum_nesterov": dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3),
    "Adam": dict(lr=0.01),
    "Adam_amsgrad_decay": dict(lr=0.01, amsgrad=True, weight_decay=0.1),
    "AdamW": dict(lr=0.01, weight_decay=0.05),
    "RMSprop": dict(lr=0.01, momentum=0.5),
    "Adagrad": dict(lr=0.1),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizers_step_the_same_on_each_device(name, device):
    cls = getattr(tc.optim, name.split("_")[0])
    results = {}
    for dev in ("cpu", device):
        model = _model().to(dev)
        opt = cls(model.parameters(), **OPTIMIZERS[name])
        for step in range(4):
            x, y = _batch(step)
            opt.zero_grad()
            F.cross_entropy(model(x.to(dev)), y.to(dev)).backward()
            opt.step()
        for state in opt.state.values():
            for value in state.values():
                if isinstance(value, tc.Tensor) and value.ndim:
                    assert value.device.type == tc.device(dev).type, "optimizer state lives with its parameter"
        results[dev] = [p.detach() for p in model.parameters()]
    for i, (a, b) in enumerate(zip(results["cpu"], results[device])):
        assert_close_across_devices(a, b, 1e-3, 1e-4, f"parameter {i} after 4 steps")


def test_a_short_training_run_matches_the_cpu(device):
    losses = {}
    for dev in ("cpu", device):
        model = _model().to(dev)
        opt = tc.optim.AdamW(model.parameters(), lr=0.01)
        history = []
        x, y = _batch(0, 64)
        x, y = x.to(dev), y.to(dev)
        for _ in range(30):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            history.append(loss.item())
        losses[dev] = history
    np.testing.assert_allclose(losses[device], losses["cpu"], rtol=1e-3, atol=1e-4)
    assert losses[device][-1] < 0.5 * losses[device][0]


def test_set_default_device_places_new_tensors_and_layers(device):
    tc.set_default_device(device)
    try:
        assert tc.get_default_device().type == tc.device(device).type
        made = [tc.zeros(2), tc.tensor([1.0]), tc.tensor(tc.ones(2, device="cpu")), tc.arange(3), tc.randn(2),
                tc.full((2,), 3.0), tc.as_tensor(np.ones(2)), tc.nn.Linear(2, 3).weight, tc.nn.BatchNorm1d(2).running_mean]
        assert all(t.device.type == tc.device(device).type for t in made)
        cpu = tc.ones(2, device="cpu")
        assert tc.zeros_like(cpu).device.type == "cpu" and tc.from_numpy(np.ones(2)).device.type == "cpu"
    finally:
        tc.set_default_device(None)
    assert tc.zeros(2).device == tc.device("cpu") and tc.get_default_device() == tc.device("cpu")


@pytest.mark.parametrize("index", [[3], [0, -4], [[1], [5]]], ids=["high", "low", "2-d"])
def test_out_of_range_index_arrays_raise_like_torch_on_every_device(index, device):
    import torch

    x = tc.arange(6.0, device=device).reshape(2, 3)
    i = tc.tensor(index, device=device)
    with pytest.raises(IndexError) as theirs:
        torch.arange(6.0).reshape(2, 3)[:, torch.tensor(index)]
    with pytest.raises(IndexError) as ours:
        x[:, i]
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(IndexError, match="out of bounds for dimension 0 with size 3"):  # torch's numbering
        x[:, i] = 1.0


def test_gather_scatter_index_select_check_indices_on_every_device(device):
    x = tc.zeros(2, 3, device=device)
    for call in (lambda: x.gather(1, tc.tensor([[3]], device=device)),
                 lambda: x.scatter(1, tc.tensor([[-1]], device=device), 1.0),
                 lambda: x.index_select(1, tc.tensor([5], device=device))):
        with pytest.raises(RuntimeError, match="out of"):
            call()


def test_random_numbers_are_drawn_on_the_device_and_reproducible(device):
    def draw(generator=None):
        x = tc.empty(500, device=device)
        return [tc.rand(4, device=device, generator=generator), tc.randn(4, device=device, generator=generator),
                tc.randint(0, 10, (4,), device=device, generator=generator),
                tc.randperm(6, device=device, generator=generator), x.uniform_(-2, 2, generator=generator),
                tc.bernoulli(tc.full((4,), 0.5, device=device), generator=generator),
                F.dropout(tc.ones(200, device=device), 0.25)]

    tc.manual_seed(3)
    first = draw()
    tc.manual_seed(3)
    second = draw()
    for a, b in zip(first, second):
        assert a.device.type == tc.device(device).type
        np.testing.assert_array_equal(to_numpy(a), to_numpy(b))
    uniform, mask = to_numpy(first[4]), to_numpy(first[6])
    assert uniform.min() >= -2 and uniform.max() < 2 and abs(uniform.mean()) < 0.3
    assert set(np.unique(mask)) <= {0.0, np.float32(1 / 0.75)} and 0.6 < (mask > 0).mean() < 0.9
    assert sorted(to_numpy(first[3]).tolist()) == list(range(6))
    g = tc.Generator(device=device).manual_seed(5)
    a = tc.randn(3, device=device, generator=g)
    g.manual_seed(5)
    np.testing.assert_array_equal(to_numpy(a), to_numpy(tc.randn(3, device=device, generator=g)))


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "cpu"])
def test_a_generator_must_live_on_the_tensors_device_type(device):
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator but found 'cpu'"):
        tc.rand(2, device=device, generator=tc.Generator())
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but found 'cuda'"):
        tc.rand(2, generator=tc.Generator(device=device))


def test_prod_gradient_with_zeros_on_every_device(device):
    data = np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 4.0], [1.0, 5.0, 6.0]], dtype=np.float32)
    grads = {}
    for dev in ("cpu", device):
        x = tc.tensor(data, device=dev, requires_grad=True)
        (x.prod(1).sum() + x.prod()).backward()
        grads[dev] = x.grad
    assert_close_across_devices(grads["cpu"], grads[device], what="prod gradient with zeros")


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "cpu"])
def test_bfloat16_on_cuda_raises_a_clear_error(device):
    for make in (lambda: tc.zeros(2, dtype=tc.bfloat16, device=device), lambda: tc.ones(2, dtype=tc.bfloat16).to(device),
                 lambda: tc.ones(2, device=device).to(tc.bfloat16), lambda: tc.tensor([1.0], dtype=tc.bfloat16, device=device)):
        with pytest.raises(RuntimeError, match="CuPy has no bfloat16 arrays"):
            make()


@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_samples_follow_the_probabilities_on_every_device(replacement, device):
    tc.manual_seed(0)
    probs = tc.tensor([[0.1, 0.0, 0.6, 0.3], [0.0, 0.0, 1.0, 3.0]], device=device)
    draws = [tc.multinomial(probs, 2, replacement) for _ in range(400)]
    assert draws[0].device.type == tc.device(device).type and draws[0].dtype is tc.int64
    samples = np.stack([to_numpy(d) for d in draws])  # (400, 2 rows, 2 samples)
    assert not (samples[:, 0] == 1).any() and not np.isin(samples[:, 1], [0, 1]).any()  # probability 0
    if not replacement:
        assert (samples[:, :, 0] != samples[:, :, 1]).all()
    first = np.bincount(samples[:, 0, 0], minlength=4) / 400  # the first draw follows the probabilities
    np.testing.assert_allclose(first, [0.1, 0.0, 0.6, 0.3], atol=0.08)
    # more samples than non-zero categories, without replacement: the zero-probability ones come last
    last = tc.multinomial(tc.tensor([0.5, 0.0, 0.5], device=device), 3)
    assert to_numpy(last)[2] == 1
