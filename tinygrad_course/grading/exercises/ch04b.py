"""Chapter 04b (optimizers): checks for the learner's `Optimizer` base (04b.1), `SGD` on it (04b.2) and `Adam`
with `AdamW` (04b.3), in PyTorch's shape (the schedulers, 04b.4, are in ch04b_schedule.py).

The base is checked under an SGD of the check's own (PyTorch's rule on the learner's base) on what it keeps
(param_groups with the defaults filled in, state, zero_grad both ways, add_param_group) and on its state_dict:
PyTorch's layout, and a restore into fresh objects that goes on exactly as the uninterrupted run. The steps are compared with `tc.optim` after every single update of a real
model, so the first wrong update is the one named (optimizer_steps.py), then option by option, then trained.
"""
import numpy as np

import tinygrad_course as tc

from .. import mistakes
from ..registry import exercise
from . import ch04b_schedule  # noqa: F401  (registers 04b.4: the scheduler base, the cosine schedule and LambdaLR)
from . import optimizer_steps as steps
from .ch03 import digits


def _mlp(seed=0, hidden=32):
    tc.manual_seed(seed)
    return tc.nn.Sequential(tc.nn.Linear(64, hidden), tc.nn.ReLU(), tc.nn.Linear(hidden, 10))


def _run_optimizer(make_optimizer, n_steps=6, seed=0, model=None, opt=None, start=0):
    """(model, optimizer, every parameter flattened) after `n_steps` steps on fixed digit batches."""
    model = _mlp(seed) if model is None else model
    opt = make_optimizer(model.parameters()) if opt is None else opt
    for k in range(start, start + n_steps):
        opt.zero_grad()
        steps.backward_on_batch(model, k)
        opt.step()
    return model, opt, steps.flat_params(model)


def _trained_loss(make_optimizer, n_steps=80):
    model = _mlp(1)
    opt = make_optimizer(model.parameters())
    X, y = digits(0, 512)
    for i in range(n_steps):
        opt.zero_grad()
        tc.nn.functional.cross_entropy(model(X[(i % 8) * 64:(i % 8 + 1) * 64]), y[(i % 8) * 64:(i % 8 + 1) * 64]).backward()
        opt.step()
    with tc.no_grad():
        return float(tc.nn.functional.cross_entropy(model(X), y).item())


def _state_vector(t, opt, model, keys) -> dict:
    """{key: every parameter's opt.state[p][key], flattened into one vector}, failing with what is missing:
    an optimizer keeps its state in `self.state[p]`, so that `state_dict()` and a checkpoint carry it."""
    state = getattr(opt, "state", None)
    found = {key: [] for key in keys}
    for name, p in model.named_parameters():
        entry = state.get(p) if hasattr(state, "get") else None
        for key in keys:
            if not isinstance(entry, dict) or key not in entry:
                t.fail(f"opt.state[p][{key!r}] for parameter {name!r}",
                       f"not found: keep each parameter's state in self.state, keyed by the parameter, as "
                       f"self.state[p][{key!r}]", hint="self.state is a defaultdict(dict) made by Optimizer.__init__; "
                       "in step(), `state = self.state[p]` and fill it; tc.optim uses the same keys, so "
                       "state_dict() and a checkpoint carry your state")
            value = entry[key]
            found[key].append(np.asarray(value.detach().numpy() if hasattr(value, "detach") else value,
                                         dtype=np.float64).ravel())
    return {key: np.concatenate(parts) for key, parts in found.items()}


def _same_tensors(got, want) -> bool:
    return isinstance(got, list) and len(got) == len(want) and all(a is b for a, b in zip(got, want))


# --- 04b.1: the base, and 04b.2: SGD on it ----------------------------------------------------------------------------------------
def _check_groups(t, SGD):
    w, b, extra = tc.zeros(2, requires_grad=True), tc.zeros(3, requires_grad=True), tc.zeros(1, requires_grad=True)
    opt = SGD(iter([w, b]), lr=0.1)
    groups = getattr(opt, "param_groups", None)
    t.true(isinstance(groups, list) and len(groups) == 1 and isinstance(groups[0], dict),
           f"opt.param_groups to be a list of one dict for SGD(iter([w, b]), lr=0.1) (got {groups!r:.80})",
           hint="a list of tensors becomes one group: [{'params': list_of_tensors}], then add_param_group fills it in")
    got = groups[0].get("params")
    t.true(_same_tensors(got, [w, b]), "param_groups[0]['params'] to be the list [w, b]: the generator's own tensors, "
           "in order", why="the list is empty: the generator was used up before it was stored" if got == [] else None,
           hint="param_group['params'] = list(params) (a single tensor becomes [tensor])")
    defaults = dict(lr=0.1, momentum=0, dampening=0, weight_decay=0, nesterov=False)
    t.equal({k: groups[0].get(k, "missing") for k in defaults}, defaults,
            "the options of param_groups[0] for SGD(params, lr=0.1)",
            hint="SGD.__init__ passes every option to Optimizer.__init__ as `defaults`; add_param_group copies each "
                 "default the group does not set: param_group.setdefault(name, default)")
    opt = SGD([{"params": [w]}, {"params": [b], "lr": 0.01, "momentum": 0.5}], lr=0.1, momentum=0.9)
    got = [(g.get("lr"), g.get("momentum"), g.get("nesterov")) for g in opt.param_groups]
    t.equal(got, [(0.1, 0.9, False), (0.01, 0.5, False)],
            "(lr, momentum, nesterov) of each group of SGD([{'params': [w]}, {'params': [b], 'lr': 0.01, "
            "'momentum': 0.5}], lr=0.1, momentum=0.9)",
            why="the second group's own options were replaced by the defaults" if got[1:2] == [(0.1, 0.9, False)] else None,
            hint="a group's own options win: fill in only what it does not set (setdefault, not update)")
    opt.add_param_group({"params": extra})
    last = opt.param_groups[-1]
    t.true(len(opt.param_groups) == 3 and _same_tensors(last.get("params"), [extra]) and last.get("lr") == 0.1,
           "add_param_group({'params': extra}) to add a third group [extra] (a single tensor becomes a list) with "
           "lr=0.1 from the defaults", hint="add_param_group wraps a lone tensor in a list, fills in the defaults "
           "and appends the group")
    t.raises(ValueError, opt.add_param_group, {"params": [w]},
             what="add_param_group({'params': [w]}) where w is already in the first group",
             hint='raise ValueError("some parameters appear in more than one parameter group")')
    t.raises(ValueError, SGD, [], lr=0.1, what="SGD([], lr=0.1)",
             hint='raise ValueError("optimizer got an empty parameter list")')
    state = getattr(opt, "state", None)
    try:
        entry = state[tc.zeros(1)] if state is not None else None
    except (KeyError, TypeError):
        entry = None
    t.true(entry == {}, "opt.state[p] of a parameter without state to be an empty dict",
           why="opt.state raised KeyError for a new parameter" if isinstance(state, dict) and entry is None else None,
           hint="self.state = collections.defaultdict(dict), as PyTorch: every parameter starts with an empty dict")


def _check_zero_grad(t, SGD):
    w, b = tc.zeros(2, requires_grad=True), tc.zeros(3, requires_grad=True)
    opt = SGD([{"params": [w]}, {"params": [b]}], lr=0.1)
    w.grad, b.grad = tc.ones(2), tc.ones(3)
    opt.zero_grad()
    t.true(w.grad is None and b.grad is None, "zero_grad() to set the gradient of every parameter of every group "
           "to None", why="only the first group's gradients were reset" if w.grad is None and b.grad is not None else
           None, hint="set_to_none=True is the default: loop over self.param_groups and their 'params'")
    w.grad = grad = tc.ones(2)
    opt.zero_grad(set_to_none=False)
    t.true(w.grad is grad and float(grad.abs().sum()) == 0.0,
           "zero_grad(set_to_none=False) to fill each gradient with zeros in place (the same tensor, now zeros)",
           why="the gradient became None although set_to_none=False" if w.grad is None else None,
           hint="with set_to_none=False: p.grad.zero_()")


def _grouped(cls):
    """Two groups (the second with its own lr and dampening), momentum 0.9: what the state_dict is taken of."""
    def make(ps):
        ps = list(ps)
        return cls([{"params": ps[:2]}, {"params": ps[2:], "lr": 0.05, "dampening": 0.1}], lr=0.1, momentum=0.9)
    return make


_FRESH = {}


def _restarted_buffers_run():
    """The reference's 6 steps where the momentum buffers start again after step 3 (a restore that lost them)."""
    if "flat" not in _FRESH:
        model, _, _ = _run_optimizer(_grouped(tc.optim.SGD), n_steps=3)
        _FRESH["flat"] = _run_optimizer(None, 3, model=model, opt=_grouped(tc.optim.SGD)(model.parameters()),
                                        start=3)[2]
    return _FRESH["flat"]


def _check_state_dict(t, SGD):
    """PyTorch's layout, compared with tc.optim.SGD's after the same run, then a restore into a fresh model and
    optimizer that must go on exactly, bit for bit, as an uninterrupted run."""
    model, opt, _ = _run_optimizer(_grouped(SGD), n_steps=3)
    _, ref_opt, _ = _run_optimizer(_grouped(tc.optim.SGD), n_steps=3)
    saved, want = opt.state_dict(), ref_opt.state_dict()
    t.true(isinstance(saved, dict) and set(saved) == {"state", "param_groups"},
           f"state_dict() to return a dict with the keys 'state' and 'param_groups' (got {type(saved).__name__}"
           f"{' with ' + repr(sorted(map(str, saved))) if isinstance(saved, dict) else ''})")
    keys = list(saved["state"]) if isinstance(saved["state"], dict) else None
    t.true(keys is not None and all(isinstance(k, int) for k in keys),
           "the keys of state_dict()['state'] to be integers: the position of each parameter counted through the "
           "groups in order", why="the keys are the parameter tensors themselves, but a checkpoint must load into "
           "another model's tensors" if keys and isinstance(keys[0], tc.Tensor) else None,
           hint="number the parameters 0, 1, 2, ... through the groups; 'params' of each saved group is the list "
                "of its parameters' numbers")
    t.equal(sorted(keys), sorted(want["state"]), "the parameter numbers in state_dict()['state'] (every parameter "
            "with a momentum buffer)")
    groups = saved["param_groups"]
    t.equal([g.get("params") for g in groups], [g["params"] for g in want["param_groups"]],
            "'params' of each group in state_dict()['param_groups']", why="the groups hold tensors, not numbers"
            if groups and any(isinstance(p, tc.Tensor) for p in groups[0].get("params", [])) else None,
            hint="each saved group is the group's options with 'params' replaced by the parameters' numbers")
    options = ["lr", "momentum", "dampening", "weight_decay", "nesterov"]
    t.equal([{k: g.get(k) for k in options} for g in groups], [{k: g[k] for k in options} for g in want["param_groups"]],
            "the options of each group in state_dict()['param_groups']")
    buffers = np.concatenate([np.asarray(saved["state"][k]["momentum_buffer"].detach().numpy()).ravel()
                              for k in sorted(keys)])
    ref_buffers = np.concatenate([want["state"][k]["momentum_buffer"].numpy().ravel() for k in sorted(keys)])
    t.close(buffers, ref_buffers, "the momentum buffers in state_dict()['state'] after 3 steps", rtol=1e-4, atol=1e-6)
    # a fresh model (other weights, then the saved ones) and a fresh optimizer (another lr, no state) load it
    resumed = _mlp(7)
    with tc.no_grad():
        for p, q in zip(resumed.parameters(), model.parameters()):
            p.copy_(q)
    params = list(resumed.parameters())
    other = SGD([{"params": params[:2]}, {"params": params[2:]}], lr=1.0)
    other.load_state_dict(saved)
    t.true([g.get("lr") for g in other.param_groups] == [0.1, 0.05] and
           all(_same_tensors(g.get("params"), params[2 * i:2 * i + 2]) for i, g in enumerate(other.param_groups)),
           "after load_state_dict, each group to hold this optimizer's own parameters with the saved options "
           f"(lr {[g.get('lr') for g in other.param_groups]}, expected [0.1, 0.05])",
           hint="each group becomes the saved group's options with 'params' = this optimizer's own group's params")
    got = _run_optimizer(None, 3, model=resumed, opt=other, start=3)[2]
    uninterrupted = _run_optimizer(_grouped(SGD), n_steps=6)[2]
    restarted = _restarted_buffers_run()
    t.close(got, uninterrupted, "the parameters after 3 steps, state_dict(), load_state_dict() into a fresh "
            "optimizer over another model's tensors and 3 more steps (compared with 6 uninterrupted steps, bit for "
            "bit)", rtol=0, atol=0,
            mistakes=[mistakes.custom(lambda g, e: np.allclose(g, restarted, rtol=1e-5, atol=1e-7),
                                      "the momentum buffers were not restored: the resumed run started them again",
                                      "load_state_dict maps each saved number to this optimizer's parameter in the "
                                      "same position and sets self.state[p] to the saved buffers"),
                      mistakes.custom(lambda g, e: np.allclose(g, e, rtol=1e-5, atol=1e-7),
                                      "close, but not bit for bit: a restore must give exactly the saved numbers",
                                      "restore the saved tensors themselves (or exact copies), do not recompute them")])


class _SGDVariant:
    """tc.optim.SGD's rule with one typical `mistake`, run to recognise a learner's mistake by its result."""

    def __init__(self, params, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, mistake=""):
        self.params, self.lr, self.momentum, self.dampening = list(params), lr, momentum, dampening
        self.weight_decay, self.nesterov, self.mistake, self.buffers = weight_decay, nesterov, mistake, {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        with tc.no_grad():
            for p in self.params:
                g = p.grad
                if self.weight_decay and self.mistake != "no weight decay":
                    g = g + self.weight_decay * p
                if self.momentum:
                    buf = self.buffers.get(id(p))
                    damp = 0.0 if self.mistake == "no dampening" else self.dampening
                    if buf is None:
                        buf = g * (1 - damp) if self.mistake == "first step dampened" else g.clone()
                    else:
                        buf = self.momentum * buf + (1 - damp) * g
                    self.buffers[id(p)] = buf
                    g = g + self.momentum * buf if self.nesterov and self.mistake != "no nesterov" else buf
                p -= self.lr * g


_SGD_OPTIONS = [
    (dict(momentum=0.0, weight_decay=0.1), {
        "no weight decay": ("weight_decay was ignored", "with weight_decay, the gradient is g + weight_decay * p")}),
    (dict(momentum=0.9, weight_decay=0.1), {
        "no weight decay": ("weight_decay was ignored", "with weight_decay, the gradient is g + weight_decay * p")}),
    (dict(momentum=0.9, dampening=0.5), {
        "no dampening": ("dampening was ignored: the gradient was added to the velocity whole",
                         "with dampening: v = momentum * v + (1 - dampening) * g"),
        "first step dampened": ("the first step was dampened too: PyTorch's first velocity is the gradient itself",
                                "on the first step v = g (a clone); only later steps use (1 - dampening) * g")}),
    (dict(momentum=0.9, nesterov=True), {
        "no nesterov": ("nesterov=True was ignored: the step followed the velocity (heavy-ball momentum)",
                        "Nesterov steps along g + momentum * v (after v is updated), not v")}),
]


def _check_sgd_options(t, SGD):
    for options, known in _SGD_OPTIONS:
        text = ", ".join(f"{k}={v}" for k, v in options.items())
        got = _run_optimizer(lambda ps: SGD(ps, lr=0.1, **options))[2]
        want = _run_optimizer(lambda ps: tc.optim.SGD(ps, lr=0.1, **options))[2]
        found = [mistakes.custom(lambda g, e, m=m: np.allclose(g, _run_optimizer(
                     lambda ps: _SGDVariant(ps, lr=0.1, mistake=m, **options))[2], rtol=1e-4, atol=1e-6), why, fix)
                 for m, (why, fix) in known.items()]
        t.close(got, want, f"all parameters after 6 steps of SGD(model.parameters(), lr=0.1, {text}) (compared with "
                "tc.optim.SGD)", rtol=1e-4, atol=1e-5, mistakes=found)


def _step_by_step(t, opt, model, ref_grads, ref_params, call, reference, mistakes_of):
    """Six steps of the learner's `opt` on `model`, each compared with the reference run: the gradients
    before the step (a stale one named), then every parameter after it (`mistakes_of(k, before, grad)` names
    the optimizer's own mistakes)."""
    for k in range(1, len(ref_params) + 1):
        t.context = f"step {k} of {call} on a 64-32-10 MLP"
        before = steps.flat_params(model)
        opt.zero_grad()
        steps.backward_on_batch(model, k - 1)
        grad = steps.flat_grads(model)
        t.close(grad, ref_grads[k - 1], f"the gradients before step {k} (after your opt.zero_grad() and a new "
                "backward pass)", rtol=1e-4, atol=1e-6,
                mistakes=[*steps.stale_gradient(ref_grads[k - 2] if k > 1 else None), steps.locate(model)])
        opt.step()
        t.close(steps.flat_params(model), ref_params[k - 1], f"all parameters after step {k} (compared with {reference})",
                rtol=1e-4, atol=1e-5, mistakes=mistakes_of(k, before, grad))
    t.context = ""


def _sgd_on(Optimizer):
    """PyTorch's SGD (04b.2's rule, written here) on the learner's `Optimizer`: what the base's check steps with."""

    class SGD(Optimizer):
        def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False):
            super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                          nesterov=nesterov))

        def step(self, closure=None):
            with tc.no_grad():
                for group in self.param_groups:
                    momentum = group["momentum"]
                    for p in group["params"]:
                        if p.grad is None:
                            continue
                        g = p.grad if group["weight_decay"] == 0 else p.grad + group["weight_decay"] * p
                        if momentum != 0:
                            state = self.state[p]
                            if "momentum_buffer" not in state:
                                buf = state["momentum_buffer"] = g.clone()
                            else:
                                buf = state["momentum_buffer"]
                                buf.mul_(momentum).add_(g, alpha=1 - group["dampening"])
                            g = g + momentum * buf if group["nesterov"] else buf
                        p.add_(g, alpha=-group["lr"])

    return SGD


@exercise("04b.1", title="the optimizer base", points=2,
          forbidden=["tinygrad_course.optim.Optimizer", "tinygrad_course.optim.optimizer.Optimizer"])
def optimizer_base_check(t, Optimizer):
    t.true(isinstance(Optimizer, type), f"Optimizer to be a class (got {type(Optimizer).__name__})",
           hint="class Optimizer: with __init__(self, params, defaults), add_param_group, zero_grad, state_dict "
                "and load_state_dict")
    SGD = _sgd_on(Optimizer)  # PyTorch's step on your base: what is checked here is the base's bookkeeping
    _check_groups(t, SGD)
    _check_zero_grad(t, SGD)
    _check_state_dict(t, SGD)
    final = _trained_loss(lambda ps: SGD(ps, lr=0.05, momentum=0.9))
    t.true(final < 0.3, f"80 steps of an SGD on your base (lr=0.05, momentum=0.9) to bring the digits' loss below "
                        f"0.3 (got {final:.3f})")


@exercise("04b.2", title="SGD", points=2,
          forbidden=["tinygrad_course.optim.SGD", "tinygrad_course.optim.Optimizer",
                     "tinygrad_course.optim.optimizer.Optimizer"])
def sgd_check(t, SGD):
    base = next((b for b in getattr(SGD, "__mro__", ())[1:] if b.__name__ == "Optimizer"), None)
    t.true(isinstance(SGD, type) and base is not None, "SGD to be a subclass of your Optimizer",
           hint="class SGD(Optimizer): its __init__ calls super().__init__(params, defaults)")
    groups = getattr(SGD([tc.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9), "param_groups", None)
    defaults = dict(lr=0.1, momentum=0.9, dampening=0, weight_decay=0, nesterov=False)
    t.equal({k: groups[0].get(k, "missing") for k in defaults} if isinstance(groups, list) and groups else groups,
            defaults, "the options of param_groups[0] for SGD(params, lr=0.1, momentum=0.9)",
            hint="SGD.__init__ passes every option to super().__init__(params, defaults) as a dict: "
                 "dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov)")
    # one update at a time against tc.optim.SGD's run from the same start on the same batches
    lr, momentum = 0.1, 0.9
    ref_grads, ref_params = steps.reference_run(_mlp(0), lambda ps: tc.optim.SGD(ps, lr=lr, momentum=momentum))
    velocities = steps.sgd_velocities(ref_grads, momentum)
    model = _mlp(0)
    opt = SGD(model.parameters(), lr=lr, momentum=momentum)
    _step_by_step(t, opt, model, ref_grads, ref_params, "SGD(model.parameters(), lr=0.1, momentum=0.9)",
                  "tc.optim.SGD(lr=0.1, momentum=0.9)",
                  lambda k, before, grad: steps.sgd_mistakes(k, before, grad, velocities[k - 1], lr, momentum, model))
    last = momentum * velocities[-1] + ref_grads[-1]
    t.close(_state_vector(t, opt, model, ("momentum_buffer",))["momentum_buffer"], last,
            "opt.state[p][\"momentum_buffer\"] after 6 steps, for every parameter p (the velocity)", rtol=1e-4, atol=1e-5)
    plain = _run_optimizer(lambda ps: tc.optim.SGD(ps, lr=0.1))[2]
    t.close(_run_optimizer(lambda ps: SGD(ps, lr=0.1))[2], plain, what="SGD(params, lr=0.1) with the default "
            "momentum=0", rtol=1e-4, atol=1e-5,
            mistakes=[mistakes.custom(lambda g, e: True, "with momentum=0 your optimizer does not do plain SGD",
                                      "with momentum 0 keep no buffer: the step is p -= lr * grad")])
    _check_sgd_options(t, SGD)
    t.equal(SGD([tc.zeros(1, requires_grad=True)], lr=0.1).step(lambda: 1.5), 1.5,
            "what step(closure) returns", hint="step(closure) calls closure() (under tc.enable_grad()) first and "
            "returns its loss; step() without a closure returns None")
    final = _trained_loss(lambda ps: SGD(ps, lr=0.05, momentum=0.9))
    t.true(final < 0.3, f"80 steps of your SGD (lr=0.05, momentum=0.9) to bring the digits' loss below 0.3 "
                        f"(got {final:.3f})")


# --- 04b.3: Adam and AdamW ----------------------------------------------------------------------------------
def _check_weight_decay(t, Adam, AdamW):
    runs = {"Adam(lr=0.01, weight_decay=0.1)": (lambda ps: Adam(ps, lr=0.01, weight_decay=0.1),
                                                lambda ps: tc.optim.Adam(ps, lr=0.01, weight_decay=0.1)),
            "AdamW(lr=0.01, weight_decay=0.1)": (lambda ps: AdamW(ps, lr=0.01, weight_decay=0.1),
                                                 lambda ps: tc.optim.AdamW(ps, lr=0.01, weight_decay=0.1)),
            "AdamW(lr=0.01) with its default weight_decay=0.01": (lambda ps: AdamW(ps, lr=0.01),
                                                                  lambda ps: tc.optim.AdamW(ps, lr=0.01))}
    plain = _run_optimizer(lambda ps: tc.optim.Adam(ps, lr=0.01))[2]
    as_l2 = _run_optimizer(lambda ps: tc.optim.Adam(ps, lr=0.01, weight_decay=0.1))[2]
    as_decoupled = _run_optimizer(lambda ps: tc.optim.AdamW(ps, lr=0.01, weight_decay=0.1))[2]
    without_lr = _run_optimizer(lambda ps: tc.optim.AdamW(ps, lr=0.01, weight_decay=10.0))[2]
    for text, (mine, reference) in runs.items():
        decoupled = text.startswith("AdamW")
        t.close(_run_optimizer(mine)[2], _run_optimizer(reference)[2],
                f"all parameters after 6 steps of {text} (compared with tc.optim)", rtol=1e-4, atol=1e-5, mistakes=[
                    mistakes.custom(lambda g, e: np.allclose(g, plain, rtol=1e-5, atol=1e-7),
                                    "weight_decay was ignored", "weight decay needs weight_decay != 0 to change "
                                    "the step"),
                    mistakes.custom(lambda g, e, d=decoupled: np.allclose(g, as_l2 if d else as_decoupled,
                                                                          rtol=1e-5, atol=1e-7),
                                    "AdamW's decay was added to the gradient (L2, Adam's way) instead of shrinking the "
                                    "weights" if decoupled else "Adam's weight decay shrank the weights (AdamW's "
                                    "way) instead of being added to the gradient",
                                    "Adam: g = g + weight_decay * p; AdamW (decoupled_weight_decay=True): "
                                    "p *= 1 - lr * weight_decay, before the update"),
                    mistakes.custom(lambda g, e, d=decoupled: d and text.endswith("0.1)") and
                                    np.allclose(g, without_lr, rtol=1e-5, atol=1e-7),
                                    "the weights shrank by weight_decay, not by lr * weight_decay",
                                    "p *= 1 - lr * weight_decay")])


def _check_amsgrad(t, Adam, AdamW):
    plain = _run_optimizer(lambda ps: tc.optim.Adam(ps, lr=0.01), n_steps=12)[2]
    current = _run_optimizer(lambda ps: _AmsgradOfCurrentV(ps, lr=0.01, amsgrad=True), n_steps=12)[2]
    ignored = [mistakes.custom(lambda g, e: np.allclose(g, plain, rtol=1e-5, atol=1e-7),
                               "amsgrad was ignored: the step divides by the current v",
                               "with amsgrad, keep max_exp_avg_sq = max(max_exp_avg_sq, v) and divide by its root"),
               mistakes.custom(lambda g, e: np.allclose(g, current, rtol=1e-5, atol=1e-7),
                               "the maximum was written into exp_avg_sq itself, so the average v no longer decays",
                               "keep the maximum apart, in state['max_exp_avg_sq']; exp_avg_sq stays the average")]
    for text, mine, reference in (
            ("Adam(lr=0.01, amsgrad=True)", lambda ps: Adam(ps, lr=0.01, amsgrad=True),
             lambda ps: tc.optim.Adam(ps, lr=0.01, amsgrad=True)),
            ("AdamW(lr=0.01, weight_decay=0.1, amsgrad=True)", lambda ps: AdamW(ps, lr=0.01, weight_decay=0.1,
                                                                                amsgrad=True),
             lambda ps: tc.optim.AdamW(ps, lr=0.01, weight_decay=0.1, amsgrad=True))):
        model, opt, got = _run_optimizer(mine, n_steps=12)
        t.close(got, _run_optimizer(reference, n_steps=12)[2], f"all parameters after 12 steps of {text} (compared "
                "with tc.optim)", rtol=1e-4, atol=1e-5, mistakes=ignored)
    kept = _state_vector(t, opt, model, ("max_exp_avg_sq",))["max_exp_avg_sq"]
    t.true(kept is not None and np.all(kept >= 0), "opt.state[p]['max_exp_avg_sq'] (tc.optim.Adam's key) to hold "
           "the largest v of each coordinate", hint="state['max_exp_avg_sq'] = tc.zeros_like(p) on the first step")


class _AmsgradOfCurrentV(tc.optim.Adam):
    """The mistake of writing the maximum into exp_avg_sq itself (`v = max(v_max, v)` kept as the average)."""

    def step(self, closure=None):
        super().step(closure)
        for state in self.state.values():
            state["exp_avg_sq"].copy_(state["max_exp_avg_sq"])


@exercise("04b.3", title="Adam and AdamW", points=4,
          forbidden=["tinygrad_course.optim.Adam", "tinygrad_course.optim.AdamW"])
def adam_check(t, Adam, AdamW):
    t.true(isinstance(AdamW, type) and isinstance(Adam, type) and issubclass(AdamW, Adam),
           "AdamW to be a subclass of your Adam", hint="class AdamW(Adam): its __init__ calls super().__init__(..., "
           "decoupled_weight_decay=True)")
    lr = 0.01
    ref_grads, ref_params = steps.reference_run(_mlp(0), lambda ps: tc.optim.Adam(ps, lr=lr))
    states = steps.AdamState.before_each_step(ref_grads)
    model = _mlp(0)
    opt = Adam(model.parameters(), lr=lr)
    groups = getattr(opt, "param_groups", None)
    t.true(isinstance(groups, list) and groups and all(k in groups[0] for k in ("lr", "betas", "eps", "weight_decay",
                                                                                "amsgrad", "decoupled_weight_decay")),
           "Adam(params, lr=0.01).param_groups[0] to hold every option (lr, betas, eps, weight_decay, amsgrad, "
           "decoupled_weight_decay)", hint="Adam.__init__ passes its options as the defaults to "
           "super().__init__(params, defaults); step() reads them from each group")
    _step_by_step(t, opt, model, ref_grads, ref_params, "Adam(model.parameters(), lr=0.01)", "tc.optim.Adam(lr=0.01)",
                  lambda k, before, grad: steps.adam_mistakes(k, before, grad, states[k - 1], lr, model))
    kept = _state_vector(t, opt, model, ("step", "exp_avg", "exp_avg_sq"))
    m, v = states[-1].m, states[-1].v
    g = ref_grads[-1]
    count = next(iter(opt.state.values()))["step"]
    t.true(isinstance(count, tc.Tensor) and count.dim() == 0 and np.all(kept["step"] == 6),
           f"opt.state[p]['step'] to be a 0-d tensor counting the steps (6), as tc.optim.Adam keeps it (got "
           f"{count!r:.60})", hint="state['step'] = tc.tensor(0.0) on the first step, then state['step'] += 1; "
           "t = state['step'].item() (a checkpoint of yours then loads into tc.optim.Adam too)")
    t.close(kept["exp_avg"], 0.9 * m + 0.1 * g, "opt.state[p][\"exp_avg\"] after 6 steps (the first moment m)",
            rtol=1e-4, atol=1e-6)
    t.close(kept["exp_avg_sq"], 0.999 * v + 0.001 * g * g,
            "opt.state[p][\"exp_avg_sq\"] after 6 steps (the second moment v)", rtol=1e-4, atol=1e-8)
    betas = _run_optimizer(lambda ps: Adam(ps, lr=0.02, betas=(0.8, 0.99), eps=1e-6))[2]
    betas_ref = _run_optimizer(lambda ps: tc.optim.Adam(ps, lr=0.02, betas=(0.8, 0.99), eps=1e-6))[2]
    t.close(betas, betas_ref, what="parameters with lr=0.02, betas=(0.8, 0.99), eps=1e-6", rtol=1e-4, atol=1e-5,
            mistakes=[mistakes.custom(lambda g, e: True, "with betas=(0.8, 0.99) and eps=1e-6 your Adam differs, "
                                                         "while the defaults matched: an argument is ignored",
                                      "use the betas and eps of each group, not fixed numbers")])
    t.close(_run_optimizer(_two_groups(Adam))[2], _run_optimizer(_two_groups(tc.optim.Adam))[2],
            "parameters with two groups, the second with lr=0.001", rtol=1e-4, atol=1e-5,
            mistakes=[mistakes.custom(lambda g, e: True, "the second group's lr was not used",
                                      "read lr (and every option) from each group inside the loop over "
                                      "self.param_groups")])
    _check_weight_decay(t, Adam, AdamW)
    _check_amsgrad(t, Adam, AdamW)
    final = _trained_loss(lambda ps: Adam(ps, lr=0.01))
    t.true(final < 0.3, f"80 steps of your Adam (lr=0.01) to bring the digits' loss below 0.3 (got {final:.3f})")


def _two_groups(cls):
    def make(ps):
        ps = list(ps)
        return cls([{"params": ps[:2]}, {"params": ps[2:], "lr": 0.001}], lr=0.01)
    return make
