"""Lab 05b (an MLP, then a CNN, on the digits): checks for overfitting one batch, a StepLR schedule, the
switch to a CNN, gradient clipping with the norms before and after, an evaluation function and early stopping.

Every check runs the learner's code on the course's digits (`tc.datasets.Digits`, no network) and compares
it step by step with the same computation done by the framework, so a mistake is named where it first shows.
"""
import copy
import warnings

import numpy as np

import tinygrad_course as tc

from ...datasets import Digits
from .. import mistakes
from ..registry import exercise
from . import ch05b_conv  # noqa: F401  (registers 05b.7 and 05b.8: convolution and max pooling)


def _digits(start, stop):
    """Standardized training digits [start:stop] as (images (N, 1, 8, 8) float32, labels (N,) int64)."""
    data = Digits(train=True)
    mean, std = data.data.mean(), data.data.std()
    return (data.data[start:stop] - mean) / std, data.targets[start:stop]


def _mlp():
    nn = tc.nn
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))


def _params(model):
    return [p.detach().numpy().copy() for p in model.parameters()]


def _loader(x, y, batch_size):
    return tc.utils.data.DataLoader(tc.utils.data.TensorDataset(x, y), batch_size=batch_size)


# ---- 05b.1 ------------------------------------------------------------------------------------------------
def _overfit_reference(model, x, y, steps, lr, zero_grad=True):
    opt = tc.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        if zero_grad:
            opt.zero_grad()
        loss = tc.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    return losses


@exercise("05b.1", title="overfit a single batch", points=2)
def overfit_check(t, overfit_one_batch):
    x, y = _digits(0, 32)
    tc.manual_seed(0)
    model = _mlp()
    start = copy.deepcopy(model)
    call = "overfit_one_batch(model, x, y, steps=60, lr=0.01) on the first 32 training digits"
    losses = overfit_one_batch(model, x, y, 60, 0.01)
    t.true(isinstance(losses, (list, tuple)), f"{call} to return a list of losses (got {type(losses).__name__})")
    got = np.array([float(v.item()) if hasattr(v, "item") else float(v) for v in losses])
    reference = _overfit_reference(copy.deepcopy(start), x, y, 60, 0.01)
    no_zero_grad = _overfit_reference(copy.deepcopy(start), x, y, 60, 0.01, zero_grad=False)
    t.close(got, reference, what=f"the losses of {call}", rtol=1e-4, atol=1e-5, mistakes=[
        mistakes.custom(lambda g, e: g.shape == e.shape and np.allclose(g, no_zero_grad, rtol=1e-4, atol=1e-5),
                        "these are the losses of a loop without optimizer.zero_grad(): gradients pile up over steps",
                        "call optimizer.zero_grad() at the start of every step"),
        mistakes.custom(lambda g, e: g.shape == e.shape and np.allclose(g, g[0]),
                        "the loss never changes: the parameters are not updated",
                        "call optimizer.step() after loss.backward()")])
    t.close(got[-1], reference[-1], what=f"the last loss of {call}", rtol=1e-4, atol=1e-5)
    t.true(got[-1] < 0.05, f"the loss on one batch to fall below 0.05 within 60 steps (got {got[-1]:.4f})")


# ---- 05b.2 ------------------------------------------------------------------------------------------------
def _step_lr_reference(model, loader, epochs, lr, per_batch=False, before=False):
    opt = tc.optim.Adam(model.parameters(), lr=lr)
    sched = tc.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    lrs = []
    for _ in range(epochs):
        if before:
            with warnings.catch_warnings():  # the mistake being reproduced: stepping before optimizer.step()
                warnings.simplefilter("ignore")
                sched.step()
        lrs.append(opt.param_groups[0]["lr"])
        for xb, yb in loader:
            opt.zero_grad()
            tc.nn.functional.cross_entropy(model(xb), yb).backward()
            opt.step()
            if per_batch:
                sched.step()
        if not per_batch and not before:
            sched.step()
    return lrs


def _fell_too_fast(got, expected) -> bool:
    """Every rate is 0.01 halved a whole number of times, and by the end it was halved more often than
    stepping once per epoch gives."""
    halvings = np.log2(0.01 / got)
    return bool(np.all(got > 0) and np.allclose(halvings, np.round(halvings), atol=1e-6)
                and halvings[-1] > np.log2(0.01 / expected[-1]) + 0.5)


@exercise("05b.2", title="add a StepLR schedule", points=2)
def step_lr_check(t, train_with_step_lr):
    x, y = _digits(0, 256)
    loader = _loader(x, y, 64)
    tc.manual_seed(0)
    model = _mlp()
    start = copy.deepcopy(model)
    call = "train_with_step_lr(model, loader of 256 digits in 4 batches, epochs=5, lr=0.01)"
    lrs = train_with_step_lr(model, loader, 5, 0.01)
    t.true(isinstance(lrs, (list, tuple)) and len(lrs) == 5,
           f"{call} to return one learning rate per epoch, 5 in all (got {lrs!r})")
    expected = _step_lr_reference(copy.deepcopy(start), loader, 5, 0.01)
    per_batch = _step_lr_reference(copy.deepcopy(start), loader, 5, 0.01, per_batch=True)
    before = _step_lr_reference(copy.deepcopy(start), loader, 5, 0.01, before=True)
    t.close(np.array(lrs, dtype=np.float64), expected, what=f"the learning rate of each epoch for {call}", mistakes=[
        mistakes.custom(lambda g, e: np.allclose(g, per_batch), "scheduler.step() ran after every batch, so the "
                        "rate fell 4 times too fast", "StepLR counts epochs here, so step it once per epoch"),
        mistakes.custom(lambda g, e: np.allclose(g, before), "scheduler.step() ran before the epoch's training: "
                        "every rate comes one epoch early", "step it after the epoch's optimizer steps"),
        mistakes.custom(_fell_too_fast, "the rate fell faster than StepLR(step_size=2) stepped once per epoch "
                        "allows: scheduler.step() ran more often than once per epoch (after every batch?)",
                        "StepLR counts epochs here, so step it once per epoch, after the epoch's batches"),
        mistakes.custom(lambda g, e: np.allclose(g, 0.01), "the learning rate never changed",
                        "create StepLR(optimizer, step_size=2, gamma=0.5) and call scheduler.step() every epoch")])
    reference = copy.deepcopy(start)
    _step_lr_reference(reference, loader, 5, 0.01)
    for i, (got, ref) in enumerate(zip(_params(model), _params(reference))):
        t.close(got, ref, what=f"parameter {i} after {call}, vs Adam + StepLR in the framework", rtol=1e-4, atol=1e-5)


# ---- 05b.3 ------------------------------------------------------------------------------------------------
def _cnn_reference():
    nn = tc.nn
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(8 * 4 * 4, 10))


@exercise("05b.3", title="switch the MLP to a CNN", points=2)
def cnn_check(t, make_cnn):
    x, y = _digits(0, 5)
    tc.manual_seed(0)
    model = make_cnn()
    t.true(isinstance(model, tc.nn.Module), f"make_cnn() to return an nn.Module (got {type(model).__name__})")
    kinds = [type(m).__name__ for m in model.modules()]
    t.true("Conv2d" in kinds, f"the model to contain an nn.Conv2d (its layers: {kinds[1:]})",
           hint="a CNN starts with nn.Conv2d(1, 8, 3, padding=1) on the (N, 1, 8, 8) images")
    shapes = [tuple(p.shape) for p in model.parameters()]
    expected = [tuple(p.shape) for p in _cnn_reference().parameters()]
    hint = None
    if (10, 8 * 6 * 6) in shapes or (10, 8 * 3 * 3) in shapes:
        hint = "without padding=1 the 3x3 convolution shrinks 8x8 to 6x6; with it the image stays 8x8, 4x4 after pooling"
    t.equal(shapes, expected, what="the parameter shapes of make_cnn()", hint=hint,
            why="the convolution has no padding, so the image shrank and the Linear layer's input size with it"
                if hint else None)
    reference = _cnn_reference()
    model.load_state_dict({k: v for k, v in zip(model.state_dict(), reference.state_dict().values())})
    with tc.no_grad():
        t.close(model(x[:5]), reference(x[:5]), what="logits of make_cnn() for the first 5 digits, with the "
                "reference's weights loaded", rtol=1e-4, atol=1e-5)
    tc.manual_seed(0)
    model = make_cnn()
    opt = tc.optim.Adam(model.parameters(), lr=1e-2)
    x, y = _digits(0, 1438)
    for _ in range(5):
        for i in range(0, 1024, 64):
            opt.zero_grad()
            tc.nn.functional.cross_entropy(model(x[i:i + 64]), y[i:i + 64]).backward()
            opt.step()
    with tc.no_grad():
        acc = float((model(x[1024:]).argmax(dim=1) == y[1024:]).float().mean().item())
    t.true(acc > 0.8, f"your CNN trained for 5 epochs on 1,024 digits to reach > 80% on the other 414 (got {acc:.1%})")


# ---- 05b.4 ------------------------------------------------------------------------------------------------
def _global_norm(model):
    return float(np.sqrt(sum(float((p.grad.detach().numpy().astype(np.float64) ** 2).sum())
                             for p in model.parameters() if p.grad is not None)))


@exercise("05b.4", title="gradient clipping, norms before and after", points=2)
def clipping_check(t, clipped_step):
    x, y = _digits(0, 64)
    tc.manual_seed(0)
    model = _mlp()
    reference = copy.deepcopy(model)
    opt = tc.optim.SGD(model.parameters(), lr=1.0, momentum=0.9)
    ref_opt = tc.optim.SGD(reference.parameters(), lr=1.0, momentum=0.9)
    for step in range(3):
        call = f"clipped_step(model, loss, optimizer, max_norm=0.1) at step {step + 1} (SGD lr=1.0, momentum=0.9)"
        opt.zero_grad()
        got = clipped_step(model, tc.nn.functional.cross_entropy(model(x), y), opt, 0.1)
        ref_opt.zero_grad()
        tc.nn.functional.cross_entropy(reference(x), y).backward()
        before = float(tc.nn.utils.clip_grad_norm_(reference.parameters(), 0.1))
        after = _global_norm(reference)
        ref_opt.step()
        t.true(isinstance(got, (tuple, list)) and len(got) == 2, f"{call} to return (norm_before, norm_after) (got {got!r})")
        got_before, got_after = (float(v.item()) if hasattr(v, "item") else float(v) for v in got)
        t.close(got_before, before, what=f"norm_before returned by {call}", rtol=1e-4)
        t.close(got_after, after, what=f"norm_after returned by {call}", rtol=1e-4, mistakes=[
            mistakes.custom(lambda g, e, before=before: np.isclose(g, before, rtol=1e-4),
                            "norm_after equals norm_before: it was measured on gradients that were not clipped (yet)",
                            "measure it after clip_grad_norm_ has scaled the gradients"),
            mistakes.custom(lambda g, e, before=before: np.isclose(g, 0.1 / (before + 1e-6), rtol=1e-3),
                            "that is the clip coefficient, not the norm of the clipped gradients",
                            "the clip coefficient is max_norm / norm; norm_after is the norm of the gradients after "
                            "clipping")])
        for i, (p, q) in enumerate(zip(_params(model), _params(reference))):
            t.close(p, q, what=f"parameter {i} after {call}", rtol=1e-4, atol=1e-5, mistakes=[
                mistakes.custom(lambda g, e: np.abs(g - e).max() > 0.05,
                                "the step used the unclipped gradients", "clip before optimizer.step()")])


# ---- 05b.5 ------------------------------------------------------------------------------------------------
@exercise("05b.5", title="an evaluation function", points=2)
def evaluate_check(t, evaluate):
    x, y = _digits(0, 100)
    tc.manual_seed(0)
    model = tc.nn.Sequential(tc.nn.Flatten(), tc.nn.Linear(64, 32), tc.nn.ReLU(), tc.nn.Dropout(0.5), tc.nn.Linear(32, 10))
    loader = _loader(x, y, 32)  # batches of 32, 32, 32 and 4: a mean of batch means would be wrong
    call = "evaluate(model with Dropout(0.5), loader of 100 digits in batches of 32, 32, 32, 4)"
    got = evaluate(model, loader)
    t.true(isinstance(got, (tuple, list)) and len(got) == 2, f"{call} to return (mean loss, accuracy) (got {got!r})")
    loss, acc = (float(v.item()) if hasattr(v, "item") else float(v) for v in got)
    t.equal(model.training, False, what=f"model.training after {call}",
            hint="evaluate in eval mode (model.eval()), or Dropout drops units; the training loop switches back "
                 "with model.train()")
    model.eval()
    with tc.no_grad():
        logits = model(x)
        ref_loss = float(tc.nn.functional.cross_entropy(logits, y).item())
        ref_acc = float((logits.argmax(dim=1) == y).float().mean().item())
        batch_means = float(np.mean([tc.nn.functional.cross_entropy(model(xb), yb).item() for xb, yb in loader]))
    t.close(loss, ref_loss, what=f"the mean loss from {call}", rtol=1e-4, mistakes=[
        mistakes.custom(lambda g, e: np.isclose(g, batch_means, rtol=1e-4), "that is the mean of the 4 batch means, "
                        "but the last batch has only 4 samples", "sum the per-sample losses and divide by 100")])
    t.close(acc, ref_acc, what=f"the accuracy from {call}", rtol=1e-4, mistakes=[
        mistakes.custom(lambda g, e: np.isclose(g, e * 100), "your accuracy is 100 times too large: a percentage, "
                        "not a fraction", "return a fraction between 0 and 1, not a percentage")])
    model.train()
    recorder = {}
    def record(module, inputs, output):  # returns None: a forward hook's return value would replace the output
        recorder.setdefault("grad", output.requires_grad)

    hook = model[1].register_forward_hook(record)
    evaluate(model, loader)
    hook.remove()
    t.equal(recorder.get("grad"), False, what=f"requires_grad of the activations during {call}",
            hint="wrap the loop in `with tc.no_grad():` so no graph is built while evaluating")


# ---- 05b.6 ------------------------------------------------------------------------------------------------
def _scripted(losses):
    """(model, train_epoch, evaluate, state): training epoch k sets the model's weight to k; evaluate returns losses[k]."""
    model = tc.nn.Linear(1, 1, bias=False)
    state = {"epoch": -1}

    def train_epoch():
        state["epoch"] += 1
        with tc.no_grad():
            model.weight.fill_(float(state["epoch"]))

    def evaluate():
        return losses[state["epoch"]]
    return model, train_epoch, evaluate, state


@exercise("05b.6", title="early stopping that keeps the best model", points=2)
def early_stopping_check(t, fit):
    cases = [([0.9, 0.7, 0.75, 0.72, 0.8, 0.6, 0.5], 2, 1, 4),     # no improvement after epoch 1 for 2+1 epochs
             ([0.9, 0.8, 0.7, 0.6, 0.5], 2, 4, 5),                 # improves every epoch: runs to max_epochs
             ([0.5, 0.5, 0.5, 0.4], 2, 0, 3)]                      # a tie is not an improvement
    for losses, patience, best_epoch, epochs_run in cases:
        model, train_epoch, evaluate, state = _scripted(losses)
        call = f"fit(model, train_epoch, evaluate, max_epochs={len(losses)}, patience={patience}) with validation " \
               f"losses {losses}"
        got = fit(model, train_epoch, evaluate, len(losses), patience)
        t.true(isinstance(got, (tuple, list)) and len(got) == 2, f"{call} to return (best_epoch, epochs_run) (got {got!r})")
        hint = None
        if int(got[1]) in (epochs_run - 1, epochs_run + 1):
            hint = f"stop after {patience} epochs in a row without a new best: count them, and stop when the count " \
                   f"reaches patience (not before, not one later)"
        t.equal(int(got[1]), state["epoch"] + 1, what=f"epochs_run returned by {call} vs the epochs it trained")
        t.equal(int(got[0]), best_epoch, what=f"best_epoch for {call}",
                hint="a new best needs a strictly lower loss (a tie is not an improvement)" if losses[0] == losses[1] else None)
        t.equal(int(got[1]), epochs_run, what=f"epochs_run for {call}", hint=hint)
        t.close(model.weight.detach(), [[float(best_epoch)]], what=f"the model's weight after {call} (epoch k sets it "
                f"to k)", mistakes=[mistakes.custom(lambda g, e, last=state["epoch"]: np.allclose(g, last),
                "the model holds the last epoch's weights, not the best epoch's",
                "save a copy of the best state_dict and load it at the end")])
