"""Probes: small fixed computations that run each component through the framework (not called directly),
so that a component is checked where it is used. A probe returns plain data (a dict of NumPy arrays);
`compare` decides whether a learner's run matches the reference's.

The same probe runs twice: with the learner's components installed (in the learner's kernel, or in a child
process for the command-line status and the milestones) and with the reference (in a process that never
ran learner code).
"""
from __future__ import annotations

import numpy as np

from .. import factories as F
from .. import nn, optim
from ..amp.grad_scaler import GradScaler
from ..autograd.engine import Function
from ..autograd.grad_mode import no_grad
from ..autograd.gradcheck import gradcheck, numerical_jacobian
from ..debugging import first_nonfinite_module, grad_stats
from ..generator import Generator, manual_seed
from ..nn.functional import log_softmax, nll_loss
from ..shapes import broadcast_shapes
from ..utils.data.dataloader import DataLoader
from . import probes_distributed
from .milestone_runs import resume_run
from .training_components import classification_dataset, evaluate
from .training_components import init_weights as init_weights_component
from .training_components import make_loaders, to_device, train_step


class _WrongSquare(Function):
    """x ** 2 with a wrong backward (2 x + 1): gradcheck must refuse it."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (2 * x + 1)


def _np(t):
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t, dtype=np.float64)


def contiguous_strides():
    x = F.zeros((2, 3, 4))
    views = [x, x.transpose(0, 2), x[:, 1:, :], x[:, :, ::2], x.unsqueeze(1), F.zeros((0, 3)), x.permute(1, 0, 2)]
    return {"contiguous": np.array([v.is_contiguous() for v in views], dtype=np.float64)}


def broadcast_shapes_probe():
    cases = [((2, 1, 3), (4, 1)), ((5,), (1, 5)), ((), (3, 2)), ((0,), (1,)), ((3, 1), (1, 4))]
    out = [list(broadcast_shapes(a, b)) + [-1] * (4 - len(broadcast_shapes(a, b))) for a, b in cases]
    try:
        broadcast_shapes((2, 3), (4, 3))
        refused = 0.0
    except RuntimeError:
        refused = 1.0
    return {"shapes": np.array(out, dtype=np.float64), "refused": np.array([refused])}


def mul_backward():
    manual_seed(1)
    a, b = F.randn(2, 1, 3, dtype=np.float64), F.randn(4, 1, dtype=np.float64)
    a.requires_grad_(True)
    b.requires_grad_(True)
    (a * b * 3.0).sum().backward()
    c = F.randn(3, requires_grad=True)
    (c * 2.5).sum().backward()
    return {"ga": _np(a.grad), "gb": _np(b.grad), "gc": _np(c.grad)}


def tanh_backward():
    x = F.linspace(-3, 3, 7).reshape(7, 1).requires_grad_(True)
    (x.tanh() * F.arange(7).reshape(7, 1)).sum().backward()
    return {"gx": _np(x.grad)}


def mm_backward():
    manual_seed(2)
    a, b = F.randn(3, 4, requires_grad=True), F.randn(4, 2, requires_grad=True)
    ((a @ b) * F.arange(6).reshape(3, 2)).sum().backward()
    return {"ga": _np(a.grad), "gb": _np(b.grad)}


def topological_sort():
    manual_seed(7)
    w = F.randn(2, requires_grad=True)
    h = w.sigmoid()
    out = (h * h + h.exp() * w + (h * w).sum()).sum()
    out.backward()
    deep = F.tensor(1.5, requires_grad=True)
    y = deep
    for _ in range(500):
        y = y * 1.001
    y.backward()
    return {"gw": _np(w.grad), "gdeep": _np(deep.grad)}


def linear_forward():
    manual_seed(3)
    layer = nn.Linear(4, 3)
    x = F.randn(5, 4, requires_grad=True)
    out = layer(x)
    out.sum().backward()
    return {"out": _np(out), "gx": _np(x.grad), "gw": _np(layer.weight.grad)}


def dropout_forward():
    manual_seed(4)
    layer = nn.Dropout(0.25)
    x = F.ones(4000)
    y = layer(x)
    kept = _np(y) != 0
    layer.eval()
    same = _np(layer(x))
    return {"kept_fraction": np.array([kept.mean()]), "scaled": np.array([float(np.allclose(_np(y)[kept], 1 / 0.75))]),
            "eval_identity": same}


def _train(make_opt, steps=4):
    manual_seed(5)
    w = F.randn(3, 2, requires_grad=True)
    b = F.zeros(2, requires_grad=True)
    x = F.randn(8, 3)
    opt = make_opt([w, b])
    for _ in range(steps):
        opt.zero_grad()
        (((x @ w + b) - 1.0) ** 2).mean().backward()
        opt.step()
    return {"w": _np(w), "b": _np(b)}


def sgd_step():
    heavy = _train(lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9))
    every = _train(lambda ps: optim.SGD([{"params": ps[:1], "nesterov": True, "momentum": 0.8},
                                         {"params": ps[1:], "dampening": 0.3}], lr=0.05, momentum=0.5,
                                        weight_decay=0.01))
    plain = _train(lambda ps: optim.SGD(ps, lr=0.2), steps=2)
    return {**heavy, **{f"every_{k}": v for k, v in every.items()}, **{f"plain_{k}": v for k, v in plain.items()}}


def momentum_update_probe():
    return _train(lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9))


def adam_step():
    plain = _train(lambda ps: optim.Adam(ps, lr=0.05))
    l2 = _train(lambda ps: optim.Adam([{"params": ps[:1]}, {"params": ps[1:], "lr": 0.02}], lr=0.05,
                                      betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1))
    decoupled = _train(lambda ps: optim.AdamW(ps, lr=0.05, weight_decay=0.1))
    return {**plain, **{f"l2_{k}": v for k, v in l2.items()}, **{f"w_{k}": v for k, v in decoupled.items()}}


def optimizer_base():
    """The base's bookkeeping, through the framework's SGD and RMSprop: groups from dicts with defaults,
    add_param_group, zero_grad both ways, state_dict's layout and a restore that continues the run."""
    manual_seed(5)
    w, b, extra = F.randn(3, 2, requires_grad=True), F.zeros(2, requires_grad=True), F.randn(2, requires_grad=True)
    x = F.randn(8, 3)

    def loss():
        return (((x @ w + b) - 1.0) ** 2).mean() + (extra ** 2).sum()

    opt = optim.SGD([{"params": [w]}, {"params": iter([b]), "lr": 0.05}], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": extra, "momentum": 0.0})
    for _ in range(2):
        opt.zero_grad()
        loss().backward()
        opt.step()
    opt.zero_grad(set_to_none=False)
    zeroed = np.array([float(p.grad.abs().sum()) for p in (w, b, extra)])
    saved = opt.state_dict()
    layout = np.array([len(saved["param_groups"]), *[i for g in saved["param_groups"] for i in g["params"]],
                       *sorted(saved["state"]), saved["param_groups"][1]["lr"], saved["param_groups"][2]["momentum"],
                       saved["param_groups"][0]["dampening"]], dtype=np.float64)
    twin = optim.SGD([{"params": [w]}, {"params": [b]}, {"params": [extra]}], lr=1.0)
    twin.load_state_dict(saved)
    for _ in range(2):
        twin.zero_grad()
        loss().backward()
        twin.step()
    rms = _train(lambda ps: optim.RMSprop(ps, lr=0.01, momentum=0.5))
    return {"w": _np(w), "b": _np(b), "extra": _np(extra), "zeroed": zeroed, "layout": layout,
            "none": np.array([float(all(p.grad is not None for p in (w, b, extra)))]),
            "lrs": np.array([g["lr"] for g in twin.param_groups]), "rms_w": rms["w"], "rms_b": rms["b"]}


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
    return {"lrs": np.array(lrs), "epoch": np.array([again.last_epoch, saved["last_epoch"]]),
            "cosine": cosine["lrs"], "last": cosine["last"]}


def clip_grad_norm():
    manual_seed(6)
    ps = [F.randn(3, requires_grad=True), F.randn(2, 2, requires_grad=True)]
    (ps[0].sum() * 4 + (ps[1] ** 2).sum() * 3).backward()
    norm = nn.utils.clip_grad_norm_(ps, 1.0)
    inf_norm = nn.utils.clip_grad_norm_(iter(ps), 0.5, norm_type=float("inf"))
    one = F.randn(4, requires_grad=True)
    one.grad = F.ones(4)
    single = nn.utils.clip_grad_norm_(one, 1.0, norm_type=1)
    return {"norm": np.array([float(norm), float(inf_norm), float(single)]), "g0": _np(ps[0].grad),
            "g1": _np(ps[1].grad), "one": _np(one.grad), "tensor": np.array([hasattr(norm, "_data")])}


def default_collate():
    manual_seed(7)
    samples = [(F.randn(2, 3), i % 3, 0.5 * i) for i in range(5)]
    xb, yb, wb = next(iter(DataLoader(samples, batch_size=4)))  # no collate_fn: the loader collates
    return {"x": _np(xb), "y": _np(yb), "w": _np(wb), "dtypes": np.array([yb.dtype.itemsize, wb.dtype.itemsize])}


def checkpoint():
    return resume_run()


def storage_index():
    x = F.arange(30.0)
    cases = [((2, 3), (3, 1), 0), ((3, 2), (1, 3), 2), ((2, 2, 2), (12, 4, 1), 5), ((4,), (7,), 9), ((5, 0), (1, 1), 29),
             ((3, 3), (10, 1), 8), ((2, 2), (15, 14), 1), ((1,), (1,), 30)]
    values, refused = [], []
    for size, stride, offset in cases:
        try:
            values.append(x.as_strided(size, stride, offset).sum().item())
            refused.append(0.0)
        except RuntimeError:
            values.append(0.0)
            refused.append(1.0)
    return {"sums": np.array(values), "refused": np.array(refused)}


def pick():
    manual_seed(8)
    logits = F.randn(6, 5, dtype=np.float64, requires_grad=True)
    target = F.tensor([0, 4, 2, 2, 1, 3])
    logp = log_softmax(logits, 1)
    losses = [nll_loss(logp, target, reduction=r) for r in ("mean", "sum", "none")]
    (losses[0] + losses[2][1]).backward()
    return {"mean": _np(losses[0]), "sum": _np(losses[1]), "none": _np(losses[2]), "grad": _np(logits.grad)}


def numerical_grad():
    manual_seed(9)
    x = F.randn(3, 2, dtype=np.float64, requires_grad=True)
    w = F.randn(2, dtype=np.float64, requires_grad=True)
    jac = numerical_jacobian(lambda a, b: (a * b).tanh().sum(0), (x, w), 0, 0, 1e-6)
    right = gradcheck(lambda a, b: (a @ b).exp(), (x, w), raise_exception=False)
    wrong = gradcheck(lambda a: _WrongSquare.apply(a), (w,), raise_exception=False)
    return {"jacobian": jac, "verdicts": np.array([right, wrong], dtype=np.float64), "x": _np(x)}


def init_weights():
    manual_seed(10)
    model = nn.Sequential(nn.Linear(200, 150), nn.ReLU(), nn.Linear(150, 40), nn.LayerNorm(40))
    model.apply(init_weights_component)
    w0, w1 = _np(model[0].weight), _np(model[2].weight)
    return {"std": np.array([w0.std() / np.sqrt(2 / 200), w1.std() / np.sqrt(2 / 150)]),
            "mean": np.array([w0.mean(), w1.mean()]), "bias": np.concatenate([_np(model[0].bias), _np(model[2].bias)]),
            "norm_untouched": np.concatenate([_np(model[3].weight), _np(model[3].bias)])}


def classification_dataset_probe():
    data = classification_dataset(np.arange(12).reshape(6, 2), ["dog", "cat", "emu", "cat", "dog", "cat"])
    items = [data[i] for i in range(len(data))]
    return {"len": np.array([len(data)]), "x": np.stack([_np(x) for x, _ in items]),
            "y": np.array([int(y) for _, y in items]), "float32": np.array([items[0][0].dtype.itemsize == 4])}


def steps_per_epoch():
    cases = [(10, 3, False), (10, 3, True), (9, 3, False), (9, 3, True), (1, 5, False), (1, 5, True), (0, 2, False),
             (100, 1, True)]
    return {"steps": np.array([len(DataLoader(list(range(n)), batch_size=b, drop_last=d)) for n, b, d in cases])}


def make_loaders_probe():
    train, val = make_loaders(list(range(10)), list(range(100, 107)), 4, 3)
    epochs = [np.concatenate([_np(b) for b in train]) for _ in range(2)]
    again, _ = make_loaders(list(range(10)), list(range(100, 107)), 4, 3)
    return {"covers": np.array([sorted(e.tolist()) == list(range(10)) for e in epochs], dtype=np.float64),
            "shuffled": np.array([epochs[0].tolist() != list(range(10)), epochs[0].tolist() != epochs[1].tolist()]),
            "seeded": np.array([np.concatenate([_np(b) for b in again]).tolist() == epochs[0].tolist()]),
            "batches": np.array([len(train), len(val)]), "val": np.concatenate([_np(b) for b in val])}


def to_device_probe():
    a, b = F.ones(2), F.zeros(3)
    moved = to_device({"x": (a, [b, 3]), "name": "batch"}, "cpu")
    x, rest = moved["x"]
    return {"structure": np.array([isinstance(moved, dict), isinstance(moved["x"], tuple), isinstance(rest, list),
                                   rest[1] == 3, moved["name"] == "batch", x.device.type == "cpu"], dtype=np.float64),
            "values": np.concatenate([_np(x), _np(rest[0])])}


def train_step_probe():
    manual_seed(11)
    model = nn.Linear(3, 2)
    opt = optim.SGD(model.parameters(), lr=0.1)
    x, y = F.randn(5, 3), F.randn(5, 2)
    losses = [train_step(model, opt, lambda out, target: ((out - target) ** 2).mean(), x, y) for _ in range(3)]
    return {"losses": np.array(losses), "w": _np(model.weight), "b": _np(model.bias),
            "float": np.array([all(isinstance(v, float) for v in losses)])}


def evaluate_probe():
    manual_seed(12)
    model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 3))
    data = [(F.randn(4), i % 3) for i in range(10)]
    loss, acc = evaluate(model, DataLoader(data, batch_size=4))
    return {"result": np.array([loss, acc]), "eval_mode": np.array([not model.training])}


def update_scale_probe():
    w = F.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.01)
    scaler = GradScaler("cpu", init_scale=8.0, growth_interval=2)
    scales = []
    for bad in (False, False, False, True, False, False, True, True):
        opt.zero_grad()
        scaler.scale((w * (float("inf") if bad else 1.0)).sum()).backward()
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
    return {"scales": np.array(scales), "w": _np(w)}


def grad_norms_probe():
    manual_seed(13)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    model[2].bias.requires_grad_(False)
    model(F.randn(5, 3)).pow(2).sum().backward()
    return {"norms": np.array([np.nan if s.norm is None else s.norm for s in grad_stats(model)])}


def first_nonfinite_probe():
    manual_seed(14)
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 2), nn.Softmax(dim=1))
    names = ["0", "1", "2", "3"]
    clean = first_nonfinite_module(model, F.randn(4, 2))
    with no_grad():
        model[2].bias[0] = float("nan")
    found = first_nonfinite_module(model, F.randn(4, 2))
    hooks = sum(len(m._forward_hooks) for m in model.modules())
    return {"found": np.array([-1 if clean is None else names.index(clean), names.index(found) if found in names else -2]),
            "hooks_left": np.array([hooks])}


def conv2d_probe():
    manual_seed(15)
    layers = [nn.Conv2d(2, 3, 3, padding=1), nn.Conv2d(3, 2, 2, stride=2)]
    x = F.randn(2, 2, 6, 6, dtype=np.float64).requires_grad_(True)
    for layer in layers:
        layer.double()
    out = layers[1](layers[0](x).tanh())
    (out * F.arange(out.numel(), dtype=np.float64).reshape(out.shape)).sum().backward()
    return {"out": _np(out), "gx": _np(x.grad), **{f"g{i}w": _np(l.weight.grad) for i, l in enumerate(layers)},
            **{f"g{i}b": _np(l.bias.grad) for i, l in enumerate(layers)}}


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


def batch_indices_probe():
    data = list(range(100, 110))
    plain = [_np(b).tolist() for b in DataLoader(data, batch_size=3)]
    dropped = [_np(b).tolist() for b in DataLoader(data, batch_size=3, drop_last=True)]
    shuffled = DataLoader(data, batch_size=4, shuffle=True, generator=Generator().manual_seed(2))
    order = np.concatenate([_np(b) for b in shuffled])
    pad = lambda bs: [b + [-1] * (3 - len(b)) for b in bs]  # noqa: E731
    return {"plain": np.array(pad(plain)), "dropped": np.array(dropped), "shuffled": order,
            "lengths": np.array([len(plain), len(dropped), len(shuffled)])}


def log_softmax_probe():
    manual_seed(17)
    x = F.randn(4, 5, dtype=np.float64)
    with no_grad():
        x[1] += 800.0  # exp overflows unless the maximum is subtracted first
    x.requires_grad_(True)
    rows, cols = log_softmax(x, 1), log_softmax(x, 0)
    weight = F.arange(20, dtype=np.float64).reshape(4, 5)
    ((rows * weight).sum() + (cols * weight.flip(0)).sum()).backward()
    return {"rows": _np(rows), "cols": _np(cols), "gx": _np(x.grad)}


def max_pool2d_probe():
    manual_seed(16)
    x = F.randn(2, 3, 7, 6, dtype=np.float64)
    with no_grad():
        x[0, 0, :2, :2] = 1.0  # a tie: the gradient goes to the first maximum, as PyTorch's
    x.requires_grad_(True)
    outs = [nn.MaxPool2d(2)(x), nn.MaxPool2d(3, stride=2)(x)]
    sum((o * F.arange(o.numel(), dtype=np.float64).reshape(o.shape)).sum() for o in outs).backward()
    return {"out2": _np(outs[0]), "out3": _np(outs[1]), "gx": _np(x.grad)}


PROBES = {"CosineAnnealingLR.get_lr": cosine_lr_probe, "BatchSampler.__iter__": batch_indices_probe, "log_softmax": log_softmax_probe, "Conv2d.forward": conv2d_probe, "MaxPool2d.forward": max_pool2d_probe, "contiguous_strides": contiguous_strides, "broadcast_shapes": broadcast_shapes_probe,
          "Mul.backward": mul_backward, "Tanh.backward": tanh_backward, "Mm.backward": mm_backward, "topological_sort": topological_sort,
          "Linear.forward": linear_forward, "Dropout.forward": dropout_forward, "SGD.step": sgd_step,
          "Adam.step": adam_step, "clip_grad_norm_": clip_grad_norm,
          "default_collate": default_collate, "save_checkpoint": checkpoint,
          "load_checkpoint": checkpoint, "storage_index": storage_index, "pick": pick,
          "numerical_grad": numerical_grad, "init_weights": init_weights, "ClassificationDataset": classification_dataset_probe,
          "steps_per_epoch": steps_per_epoch, "make_loaders": make_loaders_probe, "to_device": to_device_probe,
          "train_step": train_step_probe, "evaluate": evaluate_probe, "update_scale": update_scale_probe,
          "momentum_update": momentum_update_probe, "Optimizer": optimizer_base,
          "LRScheduler": lr_scheduler_probe, "grad_norms": grad_norms_probe, "first_nonfinite_module": first_nonfinite_probe,
          **probes_distributed.PROBES}
# random components are compared by what must hold, not value by value
_TOLERANCE = {"Dropout.forward": {"kept_fraction": 0.03}, "init_weights": {"std": 0.05, "mean": 0.01}}


def compare(name: str, learner: dict, expected: dict, exact: bool = False) -> str | None:
    """None when the learner's probe output matches the reference's (bit for bit with `exact`), else what
    differs (in words)."""
    for key, want in expected.items():
        got = learner.get(key)
        if got is None:
            return f"{key}: missing"
        got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
        if got.shape != want.shape:
            return f"{key}: shape {got.shape}, expected {want.shape}"
        atol = _TOLERANCE.get(name, {}).get(key, 1e-5)
        same = np.array_equal(got, want, equal_nan=True) if exact else np.allclose(got, want, rtol=1e-4, atol=atol,
                                                                                   equal_nan=True)
        if not same:
            worst = int(np.argmax(np.abs(got - want).reshape(-1))) if got.size else 0
            return (f"{key}: element {tuple(int(i) for i in np.unravel_index(worst, got.shape)) if got.ndim else ()} is "
                    f"{got.reshape(-1)[worst]:.6g}, expected {want.reshape(-1)[worst]:.6g}")
    return None
