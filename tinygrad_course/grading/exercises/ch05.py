"""Chapter 05 (training): checks for the training step, gradient clipping, evaluation, early stopping and
accuracy (log_softmax and the loss are in ch05_softmax.py; the optimizers and schedulers are chapter 04b's,
ch04b.py). Every piece is plugged into a short training run on the scikit-learn digits.
"""
import numpy as np

import tinygrad_course as tc

from .. import mistakes
from ..registry import exercise
from . import ch05_softmax  # noqa: F401  (registers 05.6: log_softmax forward and backward)
from .ch03 import digits


def _mlp(seed=0, hidden=32, dropout=0.0):
    tc.manual_seed(seed)
    layers = [tc.nn.Linear(64, hidden), tc.nn.ReLU()]
    if dropout:
        layers.append(tc.nn.Dropout(dropout))
    return tc.nn.Sequential(*layers, tc.nn.Linear(hidden, 10))


# --- 05.1 -------------------------------------------------------------------------------------------------
def _why_grad_empty(train_step, loss_fn, x, y) -> str:
    """Name the misplaced zero_grad from what one step with lr=0.1 does to a fresh layer: did step() use the
    gradients (the weights moved) before zero_grad emptied them, or were they wiped before step()?"""
    tc.manual_seed(0)
    probe = tc.nn.Linear(4, 3)
    before = probe.weight.detach().numpy().copy()
    train_step(probe, tc.optim.SGD(probe.parameters(), lr=0.1), loss_fn, x, y)
    if not np.allclose(probe.weight.detach().numpy(), before):
        return ("weight.grad is empty after your step, although step() did use the gradients (the weights moved): "
                "zero_grad ran at the end of the step, so .grad no longer shows the step's gradient for logging, "
                "clipping or debugging")
    return ("weight.grad is empty after your step and the weights did not move: zero_grad ran between backward "
            "and step() and wiped the gradients before step() could use them")


@exercise("05.1", title="the training step, in order", points=2)
def train_step_check(t, train_step):
    loss_fn = tc.nn.CrossEntropyLoss()
    tc.manual_seed(0)
    model = tc.nn.Linear(4, 3)
    x, y = tc.randn(8, 4), tc.tensor([0, 1, 2, 0, 1, 2, 0, 1])
    reference = loss_fn(model(x), y)
    reference.backward()
    ref_grad = model.weight.grad.numpy().copy()
    model.zero_grad()
    opt = tc.optim.SGD(model.parameters(), lr=0.0)
    returned = train_step(model, opt, loss_fn, x, y)
    t.true(isinstance(returned, float), f"train_step to return the loss as a Python float (got {type(returned).__name__})",
           hint="return loss.item(): a tensor keeps the whole graph alive, and floats are what you log")
    t.close(returned, float(reference.item()), what="the loss train_step returned", rtol=1e-5)
    train_step(model, opt, loss_fn, x, y)
    grad = model.weight.grad
    emptied = grad is None or not np.abs(grad.numpy()).max() > 0
    t.true(not emptied, "weight.grad to hold this step's gradient after train_step",
           why=_why_grad_empty(train_step, loss_fn, x, y) if emptied else None,
           hint="call optimizer.zero_grad() first, then forward, loss, backward, step")
    t.close(grad, ref_grad, what="weight.grad after two train_step calls on the same batch", rtol=1e-4,
            given="x = tc.randn(8, 4), y = [0, 1, 2, 0, 1, 2, 0, 1], a Linear(4, 3) and SGD with lr=0", mistakes=[
                mistakes.custom(lambda g, e: np.allclose(g, 2 * e, rtol=1e-4),
                                "the gradient doubled: the first step's gradient was still in .grad (no zero_grad)",
                                "gradients accumulate until zeroed: call optimizer.zero_grad() at the start of every "
                                "step")])
    opt = tc.optim.SGD(model.parameters(), lr=0.1)
    before = model.weight.detach().numpy().copy()
    train_step(model, opt, loss_fn, x, y)
    t.close(model.weight.detach().numpy() - before, -0.1 * ref_grad, what="weight change after one step with lr=0.1",
            rtol=1e-3, atol=1e-6, mistakes=[mistakes.custom(
                lambda g, e: np.allclose(g, 0), "the weights did not move: the optimizer never stepped",
                "call optimizer.step() after backward")])
    # the real run: the learner's step trains an MLP on the digits
    model = _mlp(1)
    opt = tc.optim.Adam(model.parameters(), lr=0.01)
    X, Y = digits(0, 512)
    losses = [train_step(model, opt, loss_fn, X[(i % 8) * 64:(i % 8 + 1) * 64], Y[(i % 8) * 64:(i % 8 + 1) * 64])
              for i in range(80)]
    t.true(np.mean(losses[-8:]) < 0.3, f"80 of your steps to bring the digits' loss from {losses[0]:.2f} below 0.3 "
                                       f"(got {np.mean(losses[-8:]):.3f} over the last epoch)")


# --- 05.2 -------------------------------------------------------------------------------------------------
@exercise("05.2", title="gradient clipping by global norm", points=2,
          forbidden=["tinygrad_course.nn.utils.clip_grad_norm_", "tinygrad_course.nn.utils.clip_grad.clip_grad_norm_"])
def clip_check(t, clip_grad_norm_):
    rng = np.random.default_rng(0)
    shapes = [(3, 4), (4,), (2, 2)]
    grads = [rng.standard_normal(s).astype(np.float32) * 3 for s in shapes]

    def params_with_grads():
        ps = [tc.zeros(*s, requires_grad=True) for s in shapes]
        for p, g in zip(ps, grads):
            p.grad = tc.tensor(g)
        return ps

    ref = params_with_grads()
    ref_norm = float(tc.nn.utils.clip_grad_norm_(ref, 1.0))
    summed_norms = float(sum(np.linalg.norm(g) for g in grads))
    ps = params_with_grads()
    norm = clip_grad_norm_(ps, 1.0)
    t.close(float(norm), ref_norm, what="the total norm clip_grad_norm_ returned", rtol=1e-5,
            given="gradients of shapes (3, 4), (4,), (2, 2) with a total norm above 1, max_norm=1.0",
            mistakes=[mistakes.custom(lambda g, e: abs(float(g) - 1.0) < 1e-4,
                                      "you returned the norm after clipping (max_norm)",
                                      "return the total norm measured before clipping"),
                      mistakes.custom(lambda g, e: abs(float(g) - float(e) ** 2) < 1e-3 * float(e) ** 2,
                                      "you returned the squared norm: the square root is missing",
                                      "the 2-norm is the square root of the sum of squares"),
                      mistakes.custom(lambda g, e: abs(float(g) - summed_norms) < 1e-4 * summed_norms,
                                      "you added up the parameters' norms: the global norm is not the sum of "
                                      "per-parameter norms (that sum overestimates it)",
                                      "square every entry of every gradient, add them all, then take one square root: "
                                      "sqrt(sum of (p.grad ** 2).sum() over the parameters)")])
    per_param = [g * min(1.0, 1.0 / (np.linalg.norm(g) + 1e-6)) for g in grads]
    got = np.concatenate([p.grad.numpy().ravel() for p in ps])
    t.close(got, np.concatenate([p.grad.numpy().ravel() for p in ref]), what="gradients after clipping to max_norm=1.0",
            given={"gradients": grads},
            rtol=1e-4, mistakes=[mistakes.custom(
                lambda g, e: np.allclose(g, np.concatenate([q.ravel() for q in per_param]), rtol=1e-4),
                "you clipped each parameter separately (one norm per parameter)",
                "compute ONE norm over all gradients together (sqrt of the sum of every squared entry) and scale them "
                "all by the same factor"), mistakes.custom(
                lambda g, e: np.allclose(g, np.concatenate([q.ravel() for q in grads]) / summed_norms, rtol=1e-3),
                "the gradients were scaled by 1 / (the sum of the parameters' norms): that sum is not the global norm",
                "the global norm is the square root of the sum of every squared entry of every gradient")])
    ps = params_with_grads()
    clip_grad_norm_(ps, 100.0)
    t.close(np.concatenate([p.grad.numpy().ravel() for p in ps]), np.concatenate([g.ravel() for g in grads]),
            what="gradients when their norm is already below max_norm (must stay unchanged)", rtol=1e-4)
    ps = params_with_grads()
    ps.append(tc.zeros(3, requires_grad=True))  # a parameter that got no gradient
    clip_grad_norm_(iter(ps), 1.0)
    t.close(np.concatenate([p.grad.numpy().ravel() for p in ps[:3]]),
            np.concatenate([p.grad.numpy().ravel() for p in ref]),
            what="clipping a generator of parameters, one of which has grad None", rtol=1e-4)
    # the real run: high learning-rate training stays finite with the learner's clipping
    model = _mlp(1)
    opt = tc.optim.SGD(model.parameters(), lr=0.5)
    X, y = digits(0, 512)
    norms = []
    for i in range(60):
        opt.zero_grad()
        tc.nn.functional.cross_entropy(model(X[(i % 8) * 64:(i % 8 + 1) * 64]), y[(i % 8) * 64:(i % 8 + 1) * 64]).backward()
        norms.append(float(clip_grad_norm_(model.parameters(), 1.0)))
        after = np.sqrt(sum(float((p.grad.numpy() ** 2).sum()) for p in model.parameters()))
        t.true(after <= 1.0 + 1e-4, f"the global gradient norm after clipping in a training step to be <= 1 (got {after:.4f})")
        opt.step()
    with tc.no_grad():
        final = float(tc.nn.functional.cross_entropy(model(X), y).item())
    t.true(np.isfinite(final) and final < 0.5, f"training with your clipping to reach a loss below 0.5 (got {final:.3f})")
    _check_clip_options(t, clip_grad_norm_, grads, params_with_grads)


def _check_clip_options(t, clip_grad_norm_, grads, params_with_grads):
    """PyTorch's signature: the norm returned as a tensor, other norm types, a single tensor, and
    error_if_nonfinite."""
    norm = clip_grad_norm_(params_with_grads(), 1.0)
    t.true(isinstance(norm, tc.Tensor) and norm.dim() == 0, f"clip_grad_norm_ to return the norm as a 0-d tensor, as "
           f"PyTorch's does (got {type(norm).__name__})", hint="return tc.tensor(total)")
    flat = np.concatenate([g.ravel() for g in grads])
    for norm_type, want in ((float("inf"), np.abs(flat).max()), (1.0, np.abs(flat).sum()), (3.0, (np.abs(flat) ** 3).sum() ** (1 / 3))):
        ps = params_with_grads()
        got = float(clip_grad_norm_(ps, 1.0, norm_type=norm_type))
        two = float(np.linalg.norm(flat))
        t.close(got, want, f"the norm clip_grad_norm_(parameters, 1.0, norm_type={norm_type}) returned", rtol=1e-5,
                given="the same gradients", mistakes=[
                    mistakes.custom(lambda g, e: abs(float(g) - two) < 1e-4 * two,
                                    "that is the 2-norm: norm_type was ignored",
                                    "for norm_type=p: (sum of |entry| ** p) ** (1 / p); for math.inf: the largest |entry|")])
        t.close(np.concatenate([p.grad.numpy().ravel() for p in ps]), flat * min(1.0, 1.0 / (want + 1e-6)),
                f"the gradients after clip_grad_norm_(parameters, 1.0, norm_type={norm_type})", rtol=1e-4)
    p = tc.zeros(2, requires_grad=True)
    p.grad = tc.tensor([3.0, 4.0])
    t.close(float(clip_grad_norm_(p, 1.0)), 5.0, "the norm for a single tensor as `parameters` (grad [3, 4])",
            rtol=1e-5)
    p.grad = tc.tensor([float("inf"), 1.0])
    t.raises(RuntimeError, clip_grad_norm_, [p], 1.0, error_if_nonfinite=True,
             what="clip_grad_norm_([p], 1.0, error_if_nonfinite=True) with an inf gradient",
             hint="with error_if_nonfinite=True, raise RuntimeError when the total norm is inf or nan "
                  "(math.isfinite)")


# --- 05.3 -------------------------------------------------------------------------------------------------
@exercise("05.3", title="an evaluate function", points=2)
def evaluate_check(t, evaluate):
    X, y = digits(1000, 1100)
    loader = tc.utils.data.DataLoader(tc.utils.data.TensorDataset(X, y), batch_size=64)
    model = _mlp(2, hidden=64, dropout=0.5)
    grad_modes = []
    model.register_forward_hook(lambda m, i, o: grad_modes.append(tc.is_grad_enabled()))
    model.eval()
    with tc.no_grad():
        logits = model(X)
        ref_loss = float(tc.nn.functional.cross_entropy(logits, y).item())
        ref_acc = float((logits.argmax(dim=1) == y).float().mean().item())
        batch_means = np.mean([float(tc.nn.functional.cross_entropy(model(X[i:i + 64]), y[i:i + 64]).item())
                               for i in (0, 64)])
    model.train()
    grad_modes.clear()
    result = evaluate(model, loader)
    t.true(isinstance(result, tuple) and len(result) == 2, "evaluate to return a tuple (mean loss, accuracy)")
    loss, acc = float(result[0]), float(result[1])
    t.true(not any(grad_modes), "the forward passes in evaluate to run without building a graph",
           hint="wrap the loop in `with tc.no_grad():` — evaluation needs no gradients, and the graph costs memory")
    again = evaluate(model, loader)
    t.true(abs(float(again[0]) - loss) < 1e-6 or abs(loss - ref_loss) < 1e-4, "two evaluations to give the same loss",
           hint="call model.eval() first: Dropout is still dropping units in training mode")
    t.close(loss, ref_loss, what="mean loss over the 100 samples (batches of 64 and 36)", rtol=1e-4, mistakes=[
        mistakes.custom(lambda g, e: abs(float(g) - batch_means) < 1e-4,
                        "you averaged the batch means, but the last batch (36 samples) is smaller than the first (64)",
                        "sum loss * batch_size and divide by the number of samples"),
        mistakes.custom(lambda g, e: True, "this is not the model's mean loss in eval mode over the 100 samples",
                        "call model.eval() before evaluating (Dropout/BatchNorm behave differently), and average "
                        "over samples")])
    t.close(acc, ref_acc, what="accuracy (a fraction between 0 and 1)", rtol=1e-5, mistakes=[
        mistakes.custom(lambda g, e: abs(float(g) - 100 * float(e)) < 1e-3,
                        "your accuracy is a percentage (100 times the fraction)", "return a fraction, not a percentage"),
        mistakes.custom(lambda g, e: abs(float(g) - 100 * float(e)) > 1e-3,
                        "this is not the fraction of correct predictions in eval mode",
                        "accuracy = correct predictions / number of samples, in eval mode")])


# --- 05.4 -------------------------------------------------------------------------------------------------
@exercise("05.4", title="early stopping", points=1)
def early_stopping_check(t, EarlyStopping):
    stopper = EarlyStopping(patience=3)
    got = [stopper.step(v) for v in (1.0, 0.9, 0.95, 0.96, 0.97)]
    why = {(False,) * 5: "your stopper did not stop after 3 epochs without improvement (one epoch late?)",
           (False, False, False, True, True): "your stopper stopped after 2 epochs without improvement, one too early"}
    t.equal(got, [False, False, False, False, True], what="step() for losses 1.0, 0.9, 0.95, 0.96, 0.97 (patience=3)",
            why=why.get(tuple(got)) if isinstance(got, list) else None,
            hint="count the epochs since the best loss; stop when that count reaches patience")
    t.close(stopper.best, 0.9, what="stopper.best")
    stopper = EarlyStopping(patience=2)
    got = [stopper.step(v) for v in (1.0, 0.8, 0.9, 0.7, 0.75, 0.72)]
    t.equal(got, [False, False, False, False, False, True], what="step() for 1.0, 0.8, 0.9, 0.7, 0.75, 0.72 (patience=2)",
            why="your stopper stopped although 0.7 had just improved on the best loss"
            if isinstance(got, list) and True in got[:5] else None,
            hint="an improvement resets the counter")
    stopper = EarlyStopping(patience=2, min_delta=0.05)
    got = [stopper.step(v) for v in (1.0, 0.97, 0.96)]
    t.equal(got, [False, False, True], what="step() for 1.0, 0.97, 0.96 with min_delta=0.05",
            why="improvements smaller than min_delta were counted as improvements"
            if got == [False, False, False] else None,
            hint="only a loss below best - min_delta counts as an improvement")


# --- 05.5 -------------------------------------------------------------------------------------------------
@exercise("05.5", title="accuracy from logits", points=1)
def accuracy_check(t, accuracy):
    logits = tc.tensor([[2.0, 1.0, 0.1], [0.1, 0.2, 3.0], [1.0, 3.0, 0.0], [0.0, 0.0, 1.0]])
    targets = tc.tensor([0, 2, 0, 1])
    got = accuracy(logits, targets)
    t.true(isinstance(got, float), f"accuracy to return a Python float (got {type(got).__name__})",
           why=f"you returned the int {got}: a count of correct predictions, not the fraction"
           if isinstance(got, int) else None, hint="finish with .item()")
    why = {2: "you returned the number of correct predictions, not the fraction",
           50: "you returned a percentage, not a fraction", 0.25: "only 1 of the 2 correct predictions was counted: "
           "the predicted class is the index of the largest logit in each row"}
    t.equal(got, 0.5, what="accuracy of 4 predictions, 2 correct", given={"logits": logits, "targets": targets},
            why=why.get(got) if isinstance(got, (int, float)) else None,
            hint="the predicted class is logits.argmax(dim=1); accuracy is the fraction of rows where it equals the "
                 "target")
