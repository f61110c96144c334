"""Chapter 05, the loss: checks for the learner's LogSoftmax (a `tc.autograd.Function` with forward and
backward), nll_loss and cross_entropy (PyTorch's functions: the (N, C) and (N, C, d1, ...) layouts, ignore_index,
the three reductions, class weights, label smoothing and PyTorch's errors), each compared with the framework's
own and its gradient on fixed float64 inputs, large logits included, with the usual mistakes named."""
import numpy as np

import tinygrad_course as tc

from .. import mistakes
from ..registry import exercise

_F = tc.nn.functional

_LOSS_HINT = ("nll_loss: the target's log-probability of each counted row, negated (pick), times 0 for an ignored "
              "target (or its class weight); 'mean' divides the sum by the number (the weight) of counted targets; "
              "cross_entropy is nll_loss(log_softmax(input, 1), ...)")


@exercise("05.6", title="log_softmax and the cross-entropy loss", points=6,
          forbidden=["tinygrad_course.nn.functional.log_softmax", "tinygrad_course.nn.functional.softmax",
                     "tinygrad_course.nn.functional.cross_entropy", "tinygrad_course.nn.functional.nll_loss"])
def log_softmax_check(t, LogSoftmax, nll_loss, cross_entropy):
    _log_softmax(t, LogSoftmax)
    t.true(callable(nll_loss) and callable(cross_entropy), "nll_loss and cross_entropy to be functions",
           hint="def nll_loss(input, target, weight=None, ignore_index=-100, reduction='mean'): ...")
    _nll_loss(t, nll_loss)
    _cross_entropy(t, cross_entropy)
    _errors(t, nll_loss, cross_entropy)


def _log_softmax(t, LogSoftmax):
    t.true(isinstance(LogSoftmax, type) and issubclass(LogSoftmax, tc.autograd.Function),
           f"LogSoftmax to be a subclass of tc.autograd.Function (got {LogSoftmax!r})",
           hint="class LogSoftmax(tc.autograd.Function): with @staticmethod forward(ctx, x, dim) and backward(ctx, grad)")
    rng = np.random.default_rng(5)
    cases = [((4, 6), 1, 0.0), ((3, 5), 0, 0.0), ((2, 3, 4), -1, 0.0), ((3, 4), 1, 1000.0)]
    for shape, dim, offset in cases:
        x = rng.standard_normal(shape) + offset
        given = f"x of shape {shape}{f' (every logit near {offset:g})' if offset else ''}, dim={dim}"
        mine, ref = tc.tensor(x, requires_grad=True), tc.tensor(x, requires_grad=True)
        out = LogSoftmax.apply(mine, dim)
        expected = _F.log_softmax(ref, dim)
        t.true(isinstance(out, tc.Tensor), f"LogSoftmax.apply(x, {dim}) to return a tc.Tensor (got {type(out).__name__})")
        naive = x - np.log(np.exp(x).sum(axis=dim, keepdims=True)) if not offset else None
        t.close(out, expected.detach().numpy(), f"LogSoftmax.apply(x, {dim})", given=given, mistakes=[
            mistakes.custom(lambda g, e: not np.isfinite(g).all(),
                            "exp overflowed: with large logits exp(x) is inf",
                            "subtract each row's maximum first: log_softmax(x) = (x - m) - log(sum(exp(x - m)))"),
            mistakes.custom(lambda g, e, n=naive: n is not None and g.shape == e.shape and np.allclose(g, np.exp(e)),
                            "your output is the softmax, not its logarithm", "log_softmax = x - logsumexp(x)")])
        weight = tc.tensor(rng.standard_normal(shape))
        (expected * weight).sum().backward()
        (out * weight).sum().backward()
        g, p = weight.numpy(), np.exp(expected.detach().numpy())
        t.close(mine.grad, ref.grad.numpy(), f"x.grad after a backward pass through your LogSoftmax (dim={dim})",
                given=given, mistakes=[
                    mistakes.custom(lambda got, e, g=g, p=p: np.allclose(got, g - p),
                                    "your gradient is grad - softmax: the softmax must be scaled by the sum of the "
                                    "incoming gradient along dim",
                                    "d/dx of log_softmax: grad - softmax(x) * grad.sum(dim, keepdim=True)"),
                    mistakes.custom(lambda got, e, g=g, p=p: np.allclose(got, g * (1 - p)),
                                    "your gradient is element-wise, grad * (1 - softmax): every output depends on "
                                    "every input of its row (the sum in logsumexp)",
                                    "d/dx of log_softmax: grad - softmax(x) * grad.sum(dim, keepdim=True)")])


def _reduction_mistakes(kwargs, counted, total):
    """The usual wrong reductions, recognised from the value: `counted` targets count, `total` were given."""
    if kwargs.get("reduction", "mean") != "mean" or "weight" in kwargs:
        return [mistakes.sign_flipped()]
    return [mistakes.custom(lambda g, e: counted != total and np.allclose(g, e * counted / total),
                            f"your mean divides by all {total} targets; only the {counted} that are not "
                            f"ignore_index count", "divide the sum by the number of targets that count"),
            mistakes.custom(lambda g, e: counted > 1 and np.allclose(g, e * counted),
                            "your loss is the sum where the mean was asked (reduction='mean')",
                            "'mean' divides the sum by the number of targets that count"),
            mistakes.sign_flipped("your loss has the wrong sign: a log-probability is <= 0, its loss -log p >= 0")]


def _loss_case(t, fn, reference, x, target, kwargs, name, *, mistakes=()):
    """fn(x, target, **kwargs) against reference(...): the value (the mistakes given and the usual wrong
    reductions named), then the gradient of x. (The grader's worker runs this without the mistakes: the probe
    drops them, and `mistakes` is then its default.)"""
    shown = ", ".join([f"input of shape {tuple(x.shape)}", f"target = {np.asarray(target).tolist()}",
                       *(f"{k}={v.tolist() if hasattr(v, 'tolist') else v!r}" for k, v in kwargs.items())])
    target_t = tc.tensor(target)
    kw_mine = {k: (tc.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in kwargs.items()}
    mine, ref = tc.tensor(x, requires_grad=True), tc.tensor(x, requires_grad=True)
    expected = reference(ref, target_t, **kw_mine)
    out = fn(mine, target_t, **kw_mine)
    t.true(isinstance(out, tc.Tensor), f"{name}(...) to return a tc.Tensor (got {type(out).__name__})", given=shown)
    ignore = kwargs.get("ignore_index", -100)
    counted, total = int((np.asarray(target) != ignore).sum()), int(np.asarray(target).size)
    t.close(out, expected.detach().numpy(), f"{name}(input, target{''.join(f', {k}=...' for k in kwargs)})",
            given=shown, mistakes=[*mistakes, *_reduction_mistakes(kwargs, counted, total)])
    w = tc.tensor(np.linspace(0.5, 1.5, max(expected.numel(), 1)).reshape(tuple(expected.shape)))
    (expected * w).sum().backward()
    (out * w).sum().backward()
    t.true(mine.grad is not None, f"input.grad after {name}(...).backward() (your loss is not connected to the input)",
           given=shown, hint="compute the loss with tensor ops on input, so that autograd records them")
    t.close(mine.grad, ref.grad.numpy(), f"input.grad after a backward pass through your {name}", given=shown)


def _nll_loss(t, nll_loss):
    rng = np.random.default_rng(8)
    logp = np.log(rng.dirichlet(np.ones(5), size=6))
    target = np.array([0, 4, -100, 2, 1, 3])
    seq = np.log(rng.dirichlet(np.ones(3), size=(2, 4))).transpose(0, 2, 1).copy()  # (N, C, T): classes on dim 1
    seq_target = np.array([[0, 2, 1, 1], [-100, 2, 0, 2]])
    cases = [(logp, target, {}), (logp, target, {"reduction": "sum"}), (logp, target, {"reduction": "none"}),
             (logp, np.array([0, 4, 3, 2, 1, 3]), {"ignore_index": 3}),
             (logp, target, {"weight": np.linspace(0.5, 2.5, 5)}),
             (seq, seq_target, {"reduction": "none"}), (seq, seq_target, {})]
    for x, tg, kwargs in cases:
        _loss_case(t, nll_loss, _F.nll_loss, x, tg, kwargs, "nll_loss",
                   mistakes=_layout_mistakes(x, tg) if x.ndim == 3 and kwargs.get("reduction") == "none" else [])


def _layout_mistakes(seq, seq_target):
    """(N, C, d1) scores made rows by reshape(-1, C) without moving the class dim last."""
    wrong_layout, flat = seq.reshape(-1, seq.shape[1]), seq_target.reshape(-1)
    picked = -np.where(flat != -100, wrong_layout[np.arange(flat.size), np.where(flat != -100, flat, 0)], 0)
    return [mistakes.custom(
        lambda g, e: np.allclose(g, picked.reshape(g.shape)),
        "your rows are input.reshape(-1, C): for (N, C, d1) scores that mixes classes and positions; each row must "
        "hold one position's C class scores", "move the class dim last first (movedim(1, -1)), then reshape(-1, C)")]


def _cross_entropy(t, cross_entropy):
    rng = np.random.default_rng(9)
    logits = rng.standard_normal((5, 4))
    target = np.array([3, 0, -100, 1, 1])
    far = np.array([[0.0, 1000.0, 2.0], [500.0, -500.0, 0.0]])  # each target's logit far below its row's largest
    far_target = np.array([0, 1])
    seq = rng.standard_normal((2, 3, 4))
    seq_target = np.array([[0, 2, 1, 1], [-100, 2, 0, 2]])
    cases = [(logits, target, {}), (far, far_target, {}), (logits, target, {"reduction": "sum"}),
             (seq, seq_target, {"reduction": "none"}), (seq, seq_target, {}),
             (logits, target, {"label_smoothing": 0.1}),
             (seq, seq_target, {"label_smoothing": 0.3, "reduction": "none"}),
             (logits, target, {"weight": np.linspace(0.5, 2.0, 4)})]
    for x, tg, kwargs in cases:
        _loss_case(t, cross_entropy, _F.cross_entropy, x, tg, kwargs, "cross_entropy",
                   mistakes=_cross_entropy_mistakes(x, tg, kwargs))


def _cross_entropy_mistakes(x, target, kwargs):
    """What a cross_entropy without log_softmax, or with label smoothing put together wrongly, gives here."""
    x, target = tc.tensor(x), tc.tensor(target)
    plain = {k: (tc.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in kwargs.items() if k != "label_smoothing"}
    raw = _F.nll_loss(x, target, **plain).numpy()
    found = [mistakes.custom(lambda g, e: not np.isfinite(g).all(),
                             "your loss is inf: log(softmax(x)) underflows, a probability of exp(-1000) is 0 and its "
                             "log -inf", "use log_softmax (your LogSoftmax), which never forms the probability"),
             mistakes.custom(lambda g, e: np.allclose(g, raw),
                             "your cross_entropy is nll_loss of the logits themselves: they are not log-probabilities",
                             "cross_entropy(input, ...) = nll_loss(log_softmax(input, 1), ...)")]
    eps = kwargs.get("label_smoothing", 0.0)
    if eps:
        nll = _F.cross_entropy(x, target, **plain).numpy()
        uniform = (_F.cross_entropy(x, target, **plain, label_smoothing=eps).numpy() - (1 - eps) * nll) / eps
        classes = x.shape[1]
        found += [mistakes.custom(lambda g, e: np.allclose(g, (1 - eps) * nll + eps * classes * uniform),
                                  "your smoothing term sums -log p over the classes: the smoothed target gives each "
                                  f"class label_smoothing / C (C = {classes}), so it is the mean over the classes",
                                  "(1 - label_smoothing) * nll + label_smoothing * (mean over classes of -log p)"),
                  mistakes.custom(lambda g, e: np.allclose(g, nll + eps * uniform),
                                  "your target's part is not scaled by (1 - label_smoothing): the smoothed target "
                                  "gives the target class 1 - label_smoothing + label_smoothing / C",
                                  "(1 - label_smoothing) * nll + label_smoothing * (mean over classes of -log p)")]
    return found


def _errors(t, nll_loss, cross_entropy):
    x, x3 = tc.zeros(3, 4), tc.zeros(2, 3, 4)
    bad = [("nll_loss(input (3, 4), target, reduction='avg')", ValueError, nll_loss, x, tc.tensor([0, 1, 2]),
            {"reduction": "avg"}),
           ("cross_entropy(input (3, 4), target, reduction='avg')", ValueError, cross_entropy, x, tc.tensor([0, 1, 2]),
            {"reduction": "avg"}),
           ("nll_loss(input (3, 4), a float target [0., 1., 2.])", RuntimeError, nll_loss, x,
            tc.tensor([0.0, 1.0, 2.0]), {}),
           ("cross_entropy(input (3, 4), an int32 target [0, 1, 2])", RuntimeError, cross_entropy, x,
            tc.tensor([0, 1, 2], dtype=tc.int32), {}),
           ("cross_entropy(input (3, 4), a target of 2 classes)", ValueError, cross_entropy, x, tc.tensor([0, 1]), {}),
           ("nll_loss(input (3, 4), a target of shape (3, 1))", RuntimeError, nll_loss, x,
            tc.tensor([[0], [1], [2]]), {}),
           ("cross_entropy(input (2, 3, 4), a target of shape (2,))", RuntimeError, cross_entropy, x3,
            tc.tensor([0, 1]), {}),
           ("nll_loss(input (3, 4), target [0, 1, 5])", IndexError, nll_loss, x, tc.tensor([0, 1, 5]), {}),
           ("cross_entropy(input (3, 4), target, label_smoothing=1.5)", RuntimeError, cross_entropy, x,
            tc.tensor([0, 1, 2]), {"label_smoothing": 1.5})]
    for what, kind, fn, inp, tg, kwargs in bad:
        reference = _F.nll_loss if fn is nll_loss else _F.cross_entropy
        try:
            reference(inp, tg, **kwargs)
        except kind as error:
            message = str(error)
        error = t.raises(kind, fn, inp, tg, what=what, hint=f"raise {kind.__name__}({message!r}), as PyTorch does",
                         **kwargs)
        t.equal(str(error), message, f"the message of {what}", hint=f"PyTorch's message: {message!r}")
