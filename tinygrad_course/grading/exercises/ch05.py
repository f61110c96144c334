"""Chapter 05 (training): checks for the training step, SGD with momentum, Adam, gradient clipping,
evaluation, early stopping and accuracy.

Optimizers are compared parameter by parameter with ``tc.optim`` after several steps of a real model, and
every piece is plugged into a short training run on the scikit-learn digits.
"""
import numpy as np

import tinygrad_course as tc

from .. import mistakes
from ..registry import exercise
from .ch03 import digits


def _mlp(seed=0, hidden=32, dropout=0.0):
    tc.manual_seed(seed)
    layers = [tc.nn.Linear(64, hidden), tc.nn.ReLU()]
    if dropout:
        layers.append(tc.nn.Dropout(dropout))
    return tc.nn.Sequential(*layers, tc.nn.Linear(hidden, 10))


def _params(model):
    return [p.detach().numpy().copy() for p in model.parameters()]


def _run_optimizer(make_optimizer, steps=6, seed=0):
    """Parameters of a small MLP after `steps` optimizer steps on fixed digit batches."""
    model = _mlp(seed)
    opt = make_optimizer(model.parameters())
    X, y = digits(0, 256)
    for i in range(steps):
        xb, yb = X[(i % 4) * 64:(i % 4 + 1) * 64], y[(i % 4) * 64:(i % 4 + 1) * 64]
        opt.zero_grad()
        tc.nn.functional.cross_entropy(model(xb), yb).backward()
        opt.step()
    return model, np.concatenate([p.ravel() for p in _params(model)])


def _trained_loss(make_optimizer, steps=80):
    model = _mlp(1)
    opt = make_optimizer(model.parameters())
    X, y = digits(0, 512)
    loss = None
    for i in range(steps):
        xb, yb = X[(i % 8) * 64:(i % 8 + 1) * 64], y[(i % 8) * 64:(i % 8 + 1) * 64]
        opt.zero_grad()
        loss = tc.nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
    with tc.no_grad():
        return float(tc.nn.functional.cross_entropy(model(X), y).item()), float(loss.item())


# --- 05.1 -------------------------------------------------------------------------------------------------
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
    t.true(grad is not None and np.abs(grad.numpy()).max() > 0,
           "weight.grad to hold this step's gradient after train_step",
           hint="zero_grad was called after backward, wiping the gradients before step() could use them: "
                "call optimizer.zero_grad() first, then forward, loss, backward, step")
    t.close(grad, ref_grad, what="weight.grad after two train_step calls on the same batch", rtol=1e-4, mistakes=[
        mistakes.custom(lambda g, e: np.allclose(g, 2 * e, rtol=1e-4),
                        "the gradient doubled: gradients accumulate until zeroed, so call optimizer.zero_grad() at "
                        "the start of every step")])
    opt = tc.optim.SGD(model.parameters(), lr=0.1)
    before = model.weight.detach().numpy().copy()
    train_step(model, opt, loss_fn, x, y)
    t.close(model.weight.detach().numpy() - before, -0.1 * ref_grad, what="weight change after one step with lr=0.1",
            rtol=1e-3, atol=1e-6, mistakes=[mistakes.custom(
                lambda g, e: np.allclose(g, 0), "the weights did not move: call optimizer.step() after backward")])
    # the real run: the learner's step trains an MLP on the digits
    model = _mlp(1)
    opt = tc.optim.Adam(model.parameters(), lr=0.01)
    X, Y = digits(0, 512)
    losses = [train_step(model, opt, loss_fn, X[(i % 8) * 64:(i % 8 + 1) * 64], Y[(i % 8) * 64:(i % 8 + 1) * 64])
              for i in range(80)]
    t.true(np.mean(losses[-8:]) < 0.3, f"80 of your steps to bring the digits' loss from {losses[0]:.2f} below 0.3 "
                                       f"(got {np.mean(losses[-8:]):.3f} over the last epoch)")


# --- 05.2 -------------------------------------------------------------------------------------------------
@exercise("05.2", title="SGD with momentum", points=3, forbidden=["tinygrad_course.optim.SGD"])
def sgd_check(t, SGDMomentum):
    model = _mlp(0)
    opt = SGDMomentum(model.parameters(), lr=0.1, momentum=0.9)
    X, y = digits(0, 64)
    tc.nn.functional.cross_entropy(model(X), y).backward()
    opt.zero_grad()
    t.true(all(p.grad is None or not np.any(p.grad.numpy()) for p in model.parameters()),
           "opt.zero_grad() to clear every parameter's gradient", hint="set p.grad = None for each parameter")
    ref_model, reference = _run_optimizer(lambda ps: tc.optim.SGD(ps, lr=0.1, momentum=0.9))
    _, plain = _run_optimizer(lambda ps: tc.optim.SGD(ps, lr=0.1))
    _, dampened = _run_optimizer(lambda ps: tc.optim.SGD(ps, lr=0.1, momentum=0.9, dampening=0.9))
    _, initial = _run_optimizer(lambda ps: tc.optim.SGD(ps, lr=0.1), steps=0)
    _, got = _run_optimizer(lambda ps: SGDMomentum(ps, lr=0.1, momentum=0.9))
    t.close(got, reference, what="all parameters after 6 steps, compared with tc.optim.SGD(lr=0.1, momentum=0.9)",
            rtol=1e-4, atol=1e-5, mistakes=[
                mistakes.custom(lambda g, e: np.allclose(g, initial, atol=1e-7),
                                "the parameters never changed: store list(params) (a generator can be iterated only "
                                "once) and update p in place (p -= ...) under tc.no_grad()"),
                mistakes.custom(lambda g, e: np.allclose(g, plain, rtol=1e-4, atol=1e-5),
                                "that is plain SGD: keep one velocity buffer per parameter across steps"),
                mistakes.custom(lambda g, e: np.allclose(g, dampened, rtol=1e-4, atol=1e-5),
                                "PyTorch's momentum adds the raw gradient: v = momentum * v + grad "
                                "(no (1 - momentum) factor)"),
                mistakes.sign_flipped("the update has the wrong sign: p = p - lr * v")])
    _, no_momentum = _run_optimizer(lambda ps: SGDMomentum(ps, lr=0.1))
    t.close(no_momentum, plain, what="SGDMomentum(params, lr=0.1) with the default momentum=0", rtol=1e-4, atol=1e-5)
    final, _ = _trained_loss(lambda ps: SGDMomentum(ps, lr=0.05, momentum=0.9))
    t.true(final < 0.3, f"80 steps of your optimizer (lr=0.05, momentum=0.9) to bring the digits' loss below 0.3 "
                        f"(got {final:.3f})")


# --- 05.3 -------------------------------------------------------------------------------------------------
@exercise("05.3", title="Adam", points=3, forbidden=["tinygrad_course.optim.Adam", "tinygrad_course.optim.AdamW"])
def adam_check(t, Adam):
    _, reference = _run_optimizer(lambda ps: tc.optim.Adam(ps, lr=0.01))
    _, initial = _run_optimizer(lambda ps: tc.optim.SGD(ps, lr=0.1), steps=0)
    _, no_correction = _run_optimizer(lambda ps: _AdamVariant(ps, lr=0.01, correct=False))
    _, eps_inside = _run_optimizer(lambda ps: _AdamVariant(ps, lr=0.01, eps_inside=True))
    _, got = _run_optimizer(lambda ps: Adam(ps, lr=0.01))
    t.close(got, reference, what="all parameters after 6 steps, compared with tc.optim.Adam(lr=0.01)",
            rtol=1e-4, atol=1e-5, mistakes=[
                mistakes.custom(lambda g, e: np.allclose(g, initial, atol=1e-7),
                                "the parameters never changed: store list(params) and update p in place under "
                                "tc.no_grad()"),
                mistakes.custom(lambda g, e: np.allclose(g, no_correction, rtol=1e-4, atol=1e-5),
                                "missing bias correction: divide m by (1 - beta1**t) and v by (1 - beta2**t), with "
                                "t counting steps from 1"),
                mistakes.custom(lambda g, e: np.allclose(g, eps_inside, rtol=1e-4, atol=1e-5),
                                "eps goes outside the square root: m_hat / (sqrt(v_hat) + eps)"),
                mistakes.sign_flipped("the update has the wrong sign: p = p - lr * m_hat / (sqrt(v_hat) + eps)")])
    _, betas = _run_optimizer(lambda ps: Adam(ps, lr=0.02, betas=(0.8, 0.99), eps=1e-6))
    _, betas_ref = _run_optimizer(lambda ps: tc.optim.Adam(ps, lr=0.02, betas=(0.8, 0.99), eps=1e-6))
    t.close(betas, betas_ref, what="parameters with lr=0.02, betas=(0.8, 0.99), eps=1e-6", rtol=1e-4, atol=1e-5)
    final, _ = _trained_loss(lambda ps: Adam(ps, lr=0.01))
    t.true(final < 0.3, f"80 steps of your Adam (lr=0.01) to bring the digits' loss below 0.3 (got {final:.3f})")


class _AdamVariant:
    """Adam with a typical mistake, to recognize it in a learner's result."""

    def __init__(self, params, lr, correct=True, eps_inside=False, betas=(0.9, 0.999), eps=1e-8):
        self.params, self.lr, self.correct, self.eps_inside = list(params), lr, correct, eps_inside
        self.b1, self.b2, self.eps, self.t = betas[0], betas[1], eps, 0
        self.m = [np.zeros(p.shape, np.float32) for p in self.params]
        self.v = [np.zeros(p.shape, np.float32) for p in self.params]

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        self.t += 1
        for p, m, v in zip(self.params, self.m, self.v):
            g = p.grad.numpy()
            m[...] = self.b1 * m + (1 - self.b1) * g
            v[...] = self.b2 * v + (1 - self.b2) * g * g
            mh, vh = (m / (1 - self.b1 ** self.t), v / (1 - self.b2 ** self.t)) if self.correct else (m, v)
            denom = np.sqrt(vh + self.eps) if self.eps_inside else np.sqrt(vh) + self.eps
            with tc.no_grad():
                p -= tc.tensor((self.lr * mh / denom).astype(np.float32))


# --- 05.4 -------------------------------------------------------------------------------------------------
@exercise("05.4", title="gradient clipping by global norm", points=2,
          forbidden=["tinygrad_course.nn.utils.clip_grad_norm_"])
def clip_check(t, clip_grad_norm):
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
    ps = params_with_grads()
    norm = clip_grad_norm(ps, 1.0)
    t.close(float(norm), ref_norm, what="the total norm clip_grad_norm returned", rtol=1e-5,
            mistakes=[mistakes.custom(lambda g, e: abs(float(g) - 1.0) < 1e-4,
                                      "return the total norm measured before clipping")])
    per_param = [g * min(1.0, 1.0 / (np.linalg.norm(g) + 1e-6)) for g in grads]
    got = np.concatenate([p.grad.numpy().ravel() for p in ps])
    t.close(got, np.concatenate([p.grad.numpy().ravel() for p in ref]), what="gradients after clipping to max_norm=1.0",
            rtol=1e-4, mistakes=[mistakes.custom(
                lambda g, e: np.allclose(g, np.concatenate([q.ravel() for q in per_param]), rtol=1e-4),
                "you clipped each parameter separately: compute ONE norm over all gradients together "
                "(sqrt of the sum of every squared entry) and scale them all by the same factor")])
    ps = params_with_grads()
    clip_grad_norm(ps, 100.0)
    t.close(np.concatenate([p.grad.numpy().ravel() for p in ps]), np.concatenate([g.ravel() for g in grads]),
            what="gradients when their norm is already below max_norm (must stay unchanged)", rtol=1e-4)
    ps = params_with_grads()
    ps.append(tc.zeros(3, requires_grad=True))  # a parameter that got no gradient
    clip_grad_norm(iter(ps), 1.0)
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
        norms.append(float(clip_grad_norm(model.parameters(), 1.0)))
        after = np.sqrt(sum(float((p.grad.numpy() ** 2).sum()) for p in model.parameters()))
        t.true(after <= 1.0 + 1e-4, f"the global gradient norm after clipping in a training step to be <= 1 (got {after:.4f})")
        opt.step()
    with tc.no_grad():
        final = float(tc.nn.functional.cross_entropy(model(X), y).item())
    t.true(np.isfinite(final) and final < 0.5, f"training with your clipping to reach a loss below 0.5 (got {final:.3f})")


# --- 05.5 -------------------------------------------------------------------------------------------------
@exercise("05.5", title="an evaluate function", points=2)
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
                        "you averaged the batch means, but the last batch is smaller: sum loss * batch_size and "
                        "divide by the number of samples"),
        mistakes.custom(lambda g, e: True, "call model.eval() before evaluating (Dropout/BatchNorm behave differently)")])
    t.close(acc, ref_acc, what="accuracy (a fraction between 0 and 1)", rtol=1e-5, mistakes=[
        mistakes.custom(lambda g, e: abs(float(g) - 100 * float(e)) < 1e-3, "return a fraction, not a percentage"),
        mistakes.custom(lambda g, e: abs(float(g) - 100 * float(e)) > 1e-3,
                        "accuracy = correct predictions / number of samples, in eval mode")])


# --- 05.6 -------------------------------------------------------------------------------------------------
@exercise("05.6", title="early stopping", points=1)
def early_stopping_check(t, EarlyStopping):
    stopper = EarlyStopping(patience=3)
    got = [stopper.step(v) for v in (1.0, 0.9, 0.95, 0.96, 0.97)]
    t.equal(got, [False, False, False, False, True], what="step() for losses 1.0, 0.9, 0.95, 0.96, 0.97 (patience=3)",
            hint="count the epochs since the best loss; stop when that count reaches patience")
    t.close(stopper.best, 0.9, what="stopper.best")
    stopper = EarlyStopping(patience=2)
    got = [stopper.step(v) for v in (1.0, 0.8, 0.9, 0.7, 0.75, 0.72)]
    t.equal(got, [False, False, False, False, False, True], what="step() for 1.0, 0.8, 0.9, 0.7, 0.75, 0.72 (patience=2)",
            hint="an improvement resets the counter")
    stopper = EarlyStopping(patience=2, min_delta=0.05)
    got = [stopper.step(v) for v in (1.0, 0.97, 0.96)]
    t.equal(got, [False, False, True], what="step() for 1.0, 0.97, 0.96 with min_delta=0.05",
            hint="only a loss below best - min_delta counts as an improvement")


# --- 05.7 -------------------------------------------------------------------------------------------------
@exercise("05.7", title="accuracy from logits", points=1)
def accuracy_check(t, accuracy):
    logits = tc.tensor([[2.0, 1.0, 0.1], [0.1, 0.2, 3.0], [1.0, 3.0, 0.0], [0.0, 0.0, 1.0]])
    targets = tc.tensor([0, 2, 0, 1])
    got = accuracy(logits, targets)
    t.true(isinstance(got, float), f"accuracy to return a Python float (got {type(got).__name__})",
           hint="finish with .item()")
    hint = "the predicted class is logits.argmax(dim=1); accuracy is the fraction that equals the target"
    if got == 2:
        hint = "divide the number of correct predictions by the number of samples"
    t.equal(got, 0.5, what="accuracy of 4 predictions, 2 correct", hint=hint)
