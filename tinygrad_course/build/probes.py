"""Probes: small fixed computations that run each component through the framework (not called directly),
so that a component is checked where it is used. A probe returns plain data (a dict of NumPy arrays);
`compare` decides whether a learner's run matches the reference's.

The same probe runs twice: with the learner's components installed (in the learner's kernel, or in a child
process for the command-line status and the milestones) and with the reference (in a process that never
ran learner code).
"""
from __future__ import annotations

import warnings
import zlib
from collections import OrderedDict

import numpy as np

from .. import factories as F
from .. import nn, optim
from ..nn import init
from ..amp.grad_scaler import GradScaler
from ..autograd.engine import Function
from ..autograd.grad_mode import no_grad
from ..autograd.engine import grad as autograd_grad
from ..autograd.gradcheck import gradcheck, numerical_jacobian
from ..debugging import first_nonfinite_module, grad_stats
from ..generator import Generator, manual_seed
from ..nn.functional import log_softmax, nll_loss
from ..shapes import broadcast_shapes
from ..utils.data.dataloader import DataLoader
from ..utils.data import collate as collate_module
from ..utils.data.sampler import BatchSampler, RandomSampler, SequentialSampler
from . import probes_dtypes
from . import (probes_distributed, probes_engine, probes_factories, probes_losses, probes_ops, probes_parameter,
               probes_random, probes_sampling, probes_schedules, probes_tensor_object, probes_views)
from .components import INIT_FUNCTIONS, MODULE_LIST_METHODS, MODULE_METHODS
from .milestone_runs import resume_run
from .probe_codes import codes as _codes
from .probe_codes import error as _error
from .probes_registration import registrations
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


# chapter 02's ops: each computed through the framework (operators and methods) with broadcasting, a Python
# number and both float dtypes; the output and every input's gradient, and a second derivative
_OP_CALLS = {
    "Add": lambda a, b: (a + b) + (2.5 + a), "Sub": lambda a, b: (a - b) - (1.5 - b),
    "Mul": lambda a, b: (a * b) * 3.0, "Div": lambda a, b: a / (b * b + 1) + 2.0 / (b * b + 1),
    "Pow": lambda a, b: a ** 2 + (a * a + 1) ** 0.5 + b ** 3,
    "Neg": lambda a, b: -a + b, "Exp": lambda a, b: a.exp() * b, "Log": lambda a, b: (a * a + 1).log() + b,
    "Tanh": lambda a, b: a.tanh() * b, "Relu": lambda a, b: a.relu() * b, "Sigmoid": lambda a, b: a.sigmoid() * b,
}


def _op_probe(name):
    def probe():
        out = {}
        for dtype in (np.float32, np.float64):
            manual_seed(1)
            a, b = F.randn(2, 1, 3, dtype=dtype), F.randn(4, 1, dtype=dtype)
            a.requires_grad_(True)
            b.requires_grad_(True)
            y = _OP_CALLS[name](a, b)
            ga, = autograd_grad(y.sum(), a, create_graph=True)
            gga, = autograd_grad(ga.sum(), a, retain_graph=True, allow_unused=True) if ga.requires_grad else (None,)
            y.sum().backward()
            tag = np.dtype(dtype).name
            out.update({f"out_{tag}": _np(y), f"ga_{tag}": _np(a.grad), f"gb_{tag}": _np(b.grad),
                        f"second_{tag}": _np(gga) if gga is not None else np.zeros(1)})
        return out
    return probe


def _reduction_probe(name):
    def probe():
        manual_seed(4)
        out = {}
        for k, (dim, keepdim) in enumerate([(None, False), (1, False), (-1, True), ((0, 2), False)]):
            x = F.randn(2, 3, 4, dtype=np.float64, requires_grad=True)
            reduce = getattr(x, name.lower())
            y = reduce() if dim is None else reduce(dim, keepdim)
            (y * y).sum().backward()
            out.update({f"out{k}": _np(y), f"gx{k}": _np(x.grad)})
        return out
    return probe


def matmul_probe():
    manual_seed(2)
    a, b = F.randn(3, 4, requires_grad=True), F.randn(4, 2, requires_grad=True)
    ((a @ b) * F.arange(6).reshape(3, 2)).sum().backward()
    x, w = F.randn(2, 3, 4, dtype=np.float64, requires_grad=True), F.randn(4, 5, dtype=np.float64, requires_grad=True)
    p, q = F.randn(2, 3, 4, requires_grad=True), F.randn(2, 4, 2, requires_grad=True)
    (x @ w).tanh().sum().backward()
    (p.bmm(q) ** 2).sum().backward()
    return {"ga": _np(a.grad), "gb": _np(b.grad), "gx": _np(x.grad), "gw": _np(w.grad), "gp": _np(p.grad),
            "gq": _np(q.grad)}


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


def backward_pass():
    manual_seed(8)
    w = F.randn(3, requires_grad=True)
    x = F.randn(4, 3)
    h = (x * w).tanh()
    out = (h * h + h.exp() * w + (h @ w).sum()).sum()
    out.backward()
    w2 = F.randn(2, 2, dtype=np.float64, requires_grad=True)
    (w2 @ w2).sum().backward()
    (w2 * 3.0).sum().backward()  # accumulates into w2.grad
    kept = (w2 * w2).sum()
    kept.backward(retain_graph=True)
    kept.backward()
    try:
        kept.backward()  # freed by the pass before
        freed = 0.0
    except RuntimeError:
        freed = 1.0
    return {"gw": _np(w.grad), "gw2": _np(w2.grad), "freed": np.array([freed])}


def linear_forward():
    manual_seed(3)
    layer = nn.Linear(4, 3)
    x = F.randn(5, 4, requires_grad=True)
    out = layer(x)
    out.sum().backward()
    plain = nn.Linear(6, 2, bias=False, dtype=np.float64)
    plain.reset_parameters()  # drawn again: the same bounds
    settings = [layer.in_features, layer.out_features, plain.bias is None, plain.weight.dtype.itemsize,
                len(list(plain.parameters())), float(np.abs(_np(plain.weight)).max() <= 1 / np.sqrt(6))]
    return {"out": _np(out), "gx": _np(x.grad), "gw": _np(layer.weight.grad), "w": _np(layer.weight),
            "b": _np(layer.bias), "settings": np.array(settings, dtype=np.float64), "shape": np.array(plain.weight.shape)}


def layers_probe():
    """nn.Sequential of nn.Linear, nn.Tanh and nn.ReLU: forward, backward, indexing, slicing, names."""
    manual_seed(21)
    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 4), nn.ReLU(), nn.Linear(4, 2))
    named = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.ReLU())]))
    x = F.randn(6, 3, requires_grad=True)
    out = named(model(x))
    (out * F.arange(12.0).reshape(6, 2)).sum().backward()
    tail = model[1:3]
    y = F.linspace(-2, 2, 5)
    same = nn.ReLU(inplace=True)(y)
    flags = [model[0] is model._modules["0"], model[-1] is model._modules["4"], isinstance(tail, nn.Sequential),
             len(tail) == 2, tail[0] is model[1], same is y]
    return {"out": _np(out), "gx": _np(x.grad), "g0": _np(model[0].weight.grad), "flags": np.array(flags, dtype=np.float64),
            "names": _codes(list(model._modules) + list(tail._modules) + list(named._modules)), "relu": _np(y),
            "tanh": _np(nn.Tanh()(F.linspace(-3, 3, 7))), "outside": _error(lambda: model[5])}


def layer_norm_probe():
    """nn.LayerNorm: forward and gradients with a learned scale and shift, over two dims, without affine."""
    manual_seed(22)
    norm = nn.LayerNorm(6)
    with no_grad():
        norm.weight.copy_(F.linspace(0.5, 2.0, 6))
        norm.bias.copy_(F.linspace(-1.0, 1.0, 6))
    x = (F.randn(4, 3, 6) * 3 + 2).requires_grad_(True)
    out = norm(x)
    (out * F.arange(72.0).reshape(4, 3, 6)).sum().backward()
    plain = nn.LayerNorm((3, 6), elementwise_affine=False, eps=1e-3)
    wide = nn.LayerNorm(5, bias=False, dtype=np.float64)
    settings = [plain.weight is None, plain.bias is None, wide.bias is None, wide.weight.dtype.itemsize,
                *norm.normalized_shape, *plain.normalized_shape, plain.eps, len(list(norm.parameters()))]
    return {"out": _np(out), "gx": _np(x.grad), "gw": _np(norm.weight.grad), "gb": _np(norm.bias.grad),
            "plain": _np(plain(x.detach())), "settings": np.array(settings, dtype=np.float64)}


def _probe_net(seed):
    manual_seed(seed)
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Sequential(nn.Linear(4, 2), nn.BatchNorm1d(2)))
    net.register_buffer("steps", F.zeros(()))
    net.register_buffer("cache", F.ones(2), persistent=False)
    net.scale = nn.Parameter(F.ones(1))
    net.note = 3.0
    return net


def module_probe():
    """nn.Module's machinery on the framework's own layers: registration, traversal, state, modes."""
    net = _probe_net(18)
    fresh = nn.Module()
    fields = [fresh.training, fresh._parameters == {}, fresh._buffers == {}, fresh._modules == {},
              fresh._non_persistent_buffers_set == set(), "note" in net.__dict__, "scale" not in net.__dict__,
              net.scale is net._parameters["scale"], net.steps is net._buffers["steps"], net[2] is net._modules["2"]]
    changed = _probe_net(20)
    changed.scale = None  # a parameter's name keeps its place, now empty
    fields += ["scale" in changed._parameters, changed.scale is None]
    changed.steps = F.full((), 5.0)  # a buffer's name: the buffer is replaced
    fields += [float(changed._buffers["steps"]) == 5.0]
    changed.note = nn.Parameter(F.ones(2))  # a plain attribute replaced by a parameter: out of __dict__
    fields += ["note" not in changed.__dict__, changed.note is changed._parameters["note"]]
    errors = [_error(lambda: setattr(net[0], "weight", F.ones(4, 3)), message=False), _error(lambda: net.missing),
              _error(lambda: nn.Module.__new__(nn.Module).register_buffer("x", F.ones(1)), message=False)]
    registered = registrations(net)
    tied = nn.Sequential(net[0], nn.Tanh(), net[0])
    names = [n for n, _ in net.named_parameters()]
    walk = [n for n, _ in net.named_parameters(prefix="model", recurse=True)]
    top = [n for n, _ in net[2].named_parameters(recurse=False)] + [n for n, _ in net[2][0].named_parameters(recurse=False)]
    modules = [n or "." for n, _ in net.named_modules()] + [n or "." for n, _ in tied.named_modules(prefix="t")]
    children = [n for n, _ in net.named_children()] + [type(m).__name__ for m in net.children()]
    counts = [len(list(net.parameters())), len(list(tied.parameters())), len(list(net.modules())),
              len(list(tied.modules())), len(list(tied.children())), len(list(net.parameters(recurse=False)))]
    state = net.state_dict()
    keys = list(state)
    detached = [not v.requires_grad for v in state.values()] + [net.state_dict(keep_vars=True)["0.weight"] is net[0].weight]
    other = _probe_net(19)
    result = other.load_state_dict(net.state_dict())
    loaded = np.concatenate([_np(v).reshape(-1) for v in other.state_dict().values()])
    partial = {k: v for k, v in net.state_dict().items() if k != "0.bias"}
    partial["head.weight"] = F.zeros(2)
    loose = other.load_state_dict(partial, strict=False)
    misses = [_error(lambda: other.load_state_dict(partial)),
              _error(lambda: other.load_state_dict({**net.state_dict(), "0.weight": F.zeros(3, 3)}))]
    order = []
    returned = net.apply(lambda m: order.append(type(m).__name__))
    modes = [net.eval() is net, *[m.training for m in net.modules()], net.train() is net,
             *[m.training for m in net.modules()], net.train(False) is net, net[2][1].training, returned is net]
    net.train()
    net(F.randn(5, 3)).sum().backward()
    net.zero_grad(set_to_none=False)
    zeroed = [float(np.abs(_np(p.grad)).sum()) for p in net.parameters()]
    net.zero_grad()
    cleared = [p.grad is None for p in net.parameters()]
    return {"fields": np.array(fields, dtype=np.float64), "errors": np.concatenate(errors), "registered": registered,
            "names": _codes(names + walk + top), "modules": _codes(modules), "children": _codes(children),
            "counts": np.array(counts), "keys": _codes(keys), "values": np.concatenate([_np(v).reshape(-1) for v in state.values()]),
            "detached": np.array(detached, dtype=np.float64), "loaded": loaded,
            "result": _codes([repr(result), str(list(loose.missing_keys)), str(list(loose.unexpected_keys))], 80),
            "misses": np.concatenate(misses), "apply": _codes(order), "modes": np.array(modes, dtype=np.float64),
            "zeroed": np.array(zeroed), "cleared": np.array(cleared, dtype=np.float64)}


def dropout_forward():
    manual_seed(4)
    layer = nn.Dropout(0.25)
    x = F.ones(4000)
    y = layer(x)
    kept = _np(y) != 0
    layer.eval()
    same = _np(layer(x))
    settings = [layer.p, layer.inplace, nn.Dropout(0.1, inplace=True).inplace, nn.Dropout2d(0.3).p,
                float(_np(nn.Dropout(1.0)(x)).sum())]
    return {"kept_fraction": np.array([kept.mean()]), "scaled": np.array([float(np.allclose(_np(y)[kept], 1 / 0.75))]),
            "eval_identity": same, "settings": np.array(settings, dtype=np.float64),
            "refused": _error(lambda: nn.Dropout(1.5))}


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
    ams = _train(lambda ps: optim.AdamW(ps, lr=0.05, weight_decay=0.1, amsgrad=True))
    return {**plain, **{f"l2_{k}": v for k, v in l2.items()}, **{f"w_{k}": v for k, v in decoupled.items()},
            **{f"ams_{k}": v for k, v in ams.items()}}


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


def init_probe():
    """nn.init through the framework: nn.Linear's and nn.Conv2d's default draws (kaiming_uniform_ with
    a=sqrt(5), the bias bound from the fans), and each initialiser on its own after a fixed seed."""
    manual_seed(11)
    linear, conv = nn.Linear(6, 4), nn.Conv2d(2, 3, 3)
    w = F.empty(5, 4, 2)
    out = {"linear": np.concatenate([_np(linear.weight).ravel(), _np(linear.bias)]),
           "conv": np.concatenate([_np(conv.weight).ravel(), _np(conv.bias)]),
           "fans": np.array([*init._calculate_fan_in_and_fan_out(w), *init._calculate_fan_in_and_fan_out(conv.weight)]),
           "uniform": _np(init.uniform_(w, -0.5, 2.0)).ravel(), "normal": _np(init.normal_(w, 1.0, 3.0)).ravel(),
           "kaiming": _np(init.kaiming_uniform_(w, mode="fan_out", nonlinearity="relu")).ravel(),
           "xavier": _np(init.xavier_uniform_(w, gain=2.0)).ravel(), "zeros": _np(init.zeros_(w)).ravel()}
    out["errors"] = _error(lambda: init._calculate_fan_in_and_fan_out(F.empty(3)), width=96)
    return out


def embedding_probe():
    """nn.Embedding through the framework: the table drawn, a lookup of repeated indices and its gradient
    (through a head tied to the table), a padding row, a table from from_pretrained."""
    manual_seed(12)
    emb = nn.Embedding(7, 3)
    idx = F.tensor([[1, 4, 4, 0], [6, 1, 2, 2]])
    out = emb(idx)
    (out @ emb.weight.T).pow(2).sum().backward()
    padded = nn.Embedding(5, 2, padding_idx=-1)
    pretrained = nn.Embedding.from_pretrained(F.arange(6.0).reshape(3, 2))
    return {"out": _np(out), "grad": _np(emb.weight.grad), "padded": _np(padded.weight),
            "settings": np.array([padded.padding_idx, emb.embedding_dim, emb.num_embeddings]),
            "pretrained": _np(pretrained(F.tensor([2, 0]))), "frozen": np.array([pretrained.weight.requires_grad]),
            "errors": _error(lambda: nn.Embedding(4, 2, padding_idx=4), width=64)}


def module_list_probe():
    """nn.ModuleList through the framework: registration, append, extend, indexing, slicing, iteration."""
    manual_seed(13)
    blocks = nn.ModuleList([nn.Linear(2, 3), nn.Tanh()])
    blocks.append(nn.Linear(3, 2)).extend([nn.ReLU(), nn.Linear(2, 2)])
    x = F.randn(4, 2)
    for block in blocks:
        x = block(x)
    tail = blocks[1:3]
    names = [name for name, _ in blocks.named_parameters()]
    return {"out": _np(x), "len": np.array([len(blocks), len(tail), len(nn.ModuleList())]),
            "names": _codes(names + list(tail._modules), 16),
            "same": np.array([blocks[-1] is blocks[4], tail[0] is blocks[1], type(tail) is nn.ModuleList]),
            "errors": np.concatenate([_error(lambda: blocks[5], width=64),
                                      _error(lambda: blocks.extend(3), width=96)[:, :64]])}


def classification_dataset_probe():
    data = classification_dataset(np.arange(12).reshape(6, 2), ["dog", "cat", "emu", "cat", "dog", "cat"])
    items = [data[i] for i in range(len(data))]
    return {"len": np.array([len(data)]), "x": np.stack([_np(x) for x, _ in items]),
            "y": np.array([int(y) for _, y in items]), "float32": np.array([items[0][0].dtype.itemsize == 4])}


def batch_sampler_len_probe():
    cases = [(10, 3, False), (10, 3, True), (9, 3, False), (9, 3, True), (1, 5, False), (1, 5, True), (0, 2, False),
             (100, 1, True)]
    return {"steps": np.array([len(DataLoader(list(range(n)), batch_size=b, drop_last=d)) for n, b, d in cases]),
            "direct": np.array([len(BatchSampler(range(n), b, d)) for n, b, d in cases])}


def _batches(loader):
    """Every batch of one epoch of a loader of numbers, as one row per batch padded with -1."""
    rows = [_np(b).reshape(-1).tolist() for b in loader]
    width = max((len(r) for r in rows), default=0)
    return np.array([r + [-1] * (width - len(r)) for r in rows]).reshape(len(rows), width)


def sequential_sampler_probe():
    sampler = SequentialSampler(list(range(100, 105)))
    return {"twice": np.array([list(sampler), list(sampler)]), "batches": _batches(DataLoader(range(7), batch_size=3)),
            "empty": np.array([len(list(SequentialSampler([])))]),
            "len": np.array([len(SequentialSampler([])), len(sampler), len(DataLoader(range(7), batch_size=None))])}


def random_sampler_probe():
    loader = DataLoader(range(10), batch_size=4, shuffle=True, generator=Generator().manual_seed(2))
    manual_seed(3)
    unseeded = list(RandomSampler(range(6)))  # without a generator: one seeded from the default generator
    more = RandomSampler(range(7), num_samples=10, generator=Generator().manual_seed(4))
    return {"epoch1": _batches(loader), "epoch2": _batches(loader), "unseeded": np.array(unseeded),
            "num_samples": np.array([list(more), list(more)])}


def _error_codes(build, cases):
    """For each kwargs: 0 when build(**kwargs) succeeds, else its exception's message as a number (crc32), the
    sign telling TypeError (-) from ValueError (+)."""
    codes = []
    for kwargs in cases:
        try:
            build(**kwargs)
            codes.append(0.0)
        except (TypeError, ValueError) as error:
            codes.append((-1.0 if isinstance(error, TypeError) else 1.0) * zlib.crc32(str(error).encode()))
    return np.array(codes)


def random_sampler_init_probe():
    g = Generator().manual_seed(1)
    kept = RandomSampler(range(6), replacement=True, num_samples=9, generator=g)
    growing = [0, 1, 2]
    dynamic = RandomSampler(growing)
    growing.append(3)
    errors = _error_codes(lambda **kw: RandomSampler(**kw), [
        dict(data_source=range(3), replacement=1), dict(data_source=range(3), num_samples=0),
        dict(data_source=range(3), num_samples=1.5), dict(data_source=[]), dict(data_source=[], replacement="no"),
        dict(data_source=range(3), num_samples=2)])
    return {"kept": np.array([kept.replacement is True, kept._num_samples == 9, kept.generator is g,
                              kept.num_samples == 9, dynamic.num_samples == 4, dynamic._num_samples is None],
                             dtype=np.float64), "len": np.array([len(kept), len(dynamic)]),
            "errors": errors, "epoch": _batches(DataLoader(range(7), batch_size=3, shuffle=True,
                                                           generator=Generator().manual_seed(3)))}


def batch_sampler_init_probe():
    kept = BatchSampler(range(5), 2, True)
    errors = _error_codes(lambda **kw: BatchSampler(range(5), **kw), [
        dict(batch_size=0, drop_last=False), dict(batch_size=True, drop_last=False),
        dict(batch_size=2.0, drop_last=False), dict(batch_size=np.int64(2), drop_last=False),
        dict(batch_size=2, drop_last=1), dict(batch_size=-3, drop_last=None), dict(batch_size=3, drop_last=True)])
    return {"kept": np.array([list(kept.sampler) == list(range(5)), kept.batch_size == 2, kept.drop_last is True],
                             dtype=np.float64), "errors": errors,
            "batches": _batches(DataLoader(range(7), batch_size=3, drop_last=True))}


def dataloader_iter_probe():
    data = [{"x": F.tensor([float(i), -float(i)]), "y": i % 3} for i in range(9)]
    loader = DataLoader(data, batch_size=4, shuffle=True, generator=Generator().manual_seed(5))
    epochs = [[(_np(b["x"]), _np(b["y"])) for b in loader] for _ in range(2)]
    manual_seed(6)
    unseeded = _batches(DataLoader(range(8), batch_size=3, shuffle=True))
    single = [_np(v).tolist() for v in DataLoader([np.array([i, i + 1]) for i in range(3)], batch_size=None)]
    given = _batches(DataLoader(range(20), batch_sampler=[[3, 1], [7], [0, 2, 4]]))
    dropped = _batches(DataLoader(range(7), batch_size=2, drop_last=True, sampler=[6, 5, 4, 3, 2, 1, 0]))
    return {**{f"x{e}_{i}": x for e, epoch in enumerate(epochs) for i, (x, _) in enumerate(epoch)},
            **{f"y{e}_{i}": y for e, epoch in enumerate(epochs) for i, (_, y) in enumerate(epoch)},
            "unseeded": unseeded, "single": np.array(single), "given": given, "dropped": dropped}


def dataloader_init_probe():
    g = Generator().manual_seed(7)
    kinds = {SequentialSampler: 0, RandomSampler: 1, BatchSampler: 2, type(None): 3, list: 4}
    collates = {collate_module.default_collate: 0, collate_module.default_convert: 1, len: 2}
    options = [dict(batch_size=4), dict(batch_size=4, shuffle=True, generator=g), dict(batch_size=None),
               dict(batch_size=3, drop_last=True, sampler=[5, 4, 3, 2, 1]), dict(batch_sampler=[[3, 1], [7]]),
               dict(batch_size=2, collate_fn=len), dict(batch_size=4, shuffle=None)]
    built = []
    for kwargs in options:
        loader = DataLoader(list(range(10)), **kwargs)
        built.append([kinds.get(type(loader.sampler), 9), kinds.get(type(loader.batch_sampler), 9),
                      -1 if loader.batch_size is None else loader.batch_size, float(loader.drop_last),
                      collates.get(loader.collate_fn, 9), float(loader.generator is kwargs.get("generator")),
                      float(loader.batch_sampler is None or loader.batch_sampler is kwargs.get("batch_sampler")
                            or loader.batch_sampler.sampler is loader.sampler), len(loader)])
    errors = []
    for kwargs in (dict(sampler=[0], shuffle=True), dict(batch_sampler=[[0]], batch_size=2),
                   dict(batch_sampler=[[0]], shuffle=True), dict(batch_sampler=[[0]], sampler=[0]),
                   dict(batch_sampler=[[0]], drop_last=True), dict(batch_size=None, drop_last=True)):
        try:
            DataLoader(list(range(10)), **kwargs)
            errors.append(0.0)
        except ValueError as error:
            errors.append(float(zlib.crc32(str(error).encode())))  # the message, as a number to compare
    frozen = DataLoader(list(range(10)), batch_size=2)
    refused = _error_codes(lambda attr, val: setattr(frozen, attr, val), [
        dict(attr="batch_size", val=3), dict(attr="sampler", val=[0]), dict(attr="dataset", val=[]),
        dict(attr="persistent_workers", val=True), dict(attr="collate_fn", val=len), dict(attr="note", val=1)])
    refused = np.append(refused, [frozen.collate_fn is len, frozen.note == 1])
    return {"built": np.array(built, dtype=np.float64), "errors": np.array(errors), "frozen": refused,
            "batches": _batches(DataLoader(list(range(10)), batch_size=4, shuffle=True,
                                           generator=Generator().manual_seed(8)))}


def dataloader_len_probe():
    loaders = [DataLoader(range(10), batch_size=3), DataLoader(range(10), batch_size=3, drop_last=True),
               DataLoader(range(10), batch_size=None), DataLoader(range(20), batch_sampler=[[1, 2], [3]]),
               DataLoader(range(10), batch_size=4, sampler=[1, 2, 3]), DataLoader(range(10), batch_size=4, shuffle=True)]
    return {"lengths": np.array([len(loader) for loader in loaders])}


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


PROBES = {"BatchSampler.__iter__": batch_indices_probe, "log_softmax": log_softmax_probe, "Conv2d.forward": conv2d_probe, "MaxPool2d.forward": max_pool2d_probe, "contiguous_strides": contiguous_strides, "broadcast_shapes": broadcast_shapes_probe,
          **{name: _op_probe(name) for name in _OP_CALLS}, "Matmul": matmul_probe, "Sum": _reduction_probe("Sum"),
          "Mean": _reduction_probe("Mean"), "topological_sort": topological_sort, "backward_pass": backward_pass,
          "Linear.forward": linear_forward, "Linear.__init__": linear_forward, "Linear.reset_parameters": linear_forward,
          **{f"Module.{attr}": module_probe for attr, _ in MODULE_METHODS},
          "LayerNorm.__init__": layer_norm_probe, "LayerNorm.forward": layer_norm_probe,
          **{name: layers_probe for name in ("Tanh.forward", "ReLU.forward", "Sequential.__init__", "Sequential.forward",
                                              "Sequential.__getitem__")}, "Dropout.forward": dropout_forward, "Dropout.__init__": dropout_forward, "SGD.step": sgd_step,
          "Adam.step": adam_step, "clip_grad_norm_": clip_grad_norm,
          "default_collate": default_collate, "save_checkpoint": checkpoint,
          "load_checkpoint": checkpoint, "storage_index": storage_index, "pick": pick,
          "numerical_grad": numerical_grad, "init_weights": init_weights,
          **{f"init.{name}": init_probe for name, _ in INIT_FUNCTIONS},
          **{name: embedding_probe for name in ("Embedding.__init__", "Embedding.reset_parameters", "Embedding.forward")},
          **{f"ModuleList.{attr}": module_list_probe for attr, _ in MODULE_LIST_METHODS}, "ClassificationDataset": classification_dataset_probe,
          "BatchSampler.__len__": batch_sampler_len_probe, "SequentialSampler.__iter__": sequential_sampler_probe,
          "SequentialSampler.__init__": sequential_sampler_probe, "RandomSampler.__init__": random_sampler_init_probe,
          "RandomSampler.num_samples": random_sampler_init_probe, "SequentialSampler.__len__": sequential_sampler_probe,
          "RandomSampler.__len__": random_sampler_init_probe, "BatchSampler.__init__": batch_sampler_init_probe,
          "RandomSampler.__iter__": random_sampler_probe, "DataLoader.__iter__": dataloader_iter_probe,
          "DataLoader.__len__": dataloader_len_probe, "DataLoader.__init__": dataloader_init_probe, "DataLoader.__setattr__": dataloader_init_probe, "make_loaders": make_loaders_probe, "to_device": to_device_probe,
          "train_step": train_step_probe, "evaluate": evaluate_probe, "update_scale": update_scale_probe,
          "momentum_update": momentum_update_probe, "Optimizer": optimizer_base,
          "grad_norms": grad_norms_probe, "first_nonfinite_module": first_nonfinite_probe,
          **probes_distributed.PROBES, **probes_factories.PROBES, **probes_parameter.PROBES, **probes_views.PROBES,
          **probes_engine.PROBES, **probes_ops.PROBES, **probes_losses.PROBES, **probes_schedules.PROBES,
          **probes_random.PROBES, **probes_tensor_object.PROBES, **probes_dtypes.PROBES,
          **probes_sampling.PROBES}
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
