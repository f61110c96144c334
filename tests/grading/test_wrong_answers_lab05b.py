"""A catalogue of wrong answers for the lab 05b: each realistic mistake fails its check with a message that
names it, the released stub fails, and the solution passes."""
import copy

import pytest

import tinygrad_course as tc
from tinygrad_course.grading import check

from .test_wrong_answers_ch04_06 import _fails, _stub

F = tc.nn.functional
nn = tc.nn


def overfit_solution(model, x, y, steps, lr):
    optimizer = tc.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def overfit_no_zero_grad(model, x, y, steps, lr):
    optimizer = tc.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def overfit_step_before_backward(model, x, y, steps, lr):
    optimizer = tc.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        optimizer.step()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        losses.append(loss.item())
    return losses


def step_lr_solution(model, loader, epochs, lr):
    optimizer = tc.optim.Adam(model.parameters(), lr=lr)
    scheduler = tc.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    lrs = []
    for _ in range(epochs):
        lrs.append(optimizer.param_groups[0]["lr"])
        for xb, yb in loader:
            optimizer.zero_grad()
            F.cross_entropy(model(xb), yb).backward()
            optimizer.step()
        scheduler.step()
    return lrs


def step_lr_per_batch(model, loader, epochs, lr):
    optimizer = tc.optim.Adam(model.parameters(), lr=lr)
    scheduler = tc.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    lrs = []
    for _ in range(epochs):
        lrs.append(optimizer.param_groups[0]["lr"])
        for xb, yb in loader:
            optimizer.zero_grad()
            F.cross_entropy(model(xb), yb).backward()
            optimizer.step()
            scheduler.step()
    return lrs


def step_lr_per_batch_recorded_at_the_end(model, loader, epochs, lr):
    optimizer = tc.optim.Adam(model.parameters(), lr=lr)
    scheduler = tc.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    lrs = []
    for _ in range(epochs):
        for xb, yb in loader:
            optimizer.zero_grad()
            F.cross_entropy(model(xb), yb).backward()
            optimizer.step()
            scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])
    return lrs


def step_lr_never_stepped(model, loader, epochs, lr):
    optimizer = tc.optim.Adam(model.parameters(), lr=lr)
    lrs = []
    for _ in range(epochs):
        lrs.append(optimizer.param_groups[0]["lr"])
        for xb, yb in loader:
            optimizer.zero_grad()
            F.cross_entropy(model(xb), yb).backward()
            optimizer.step()
    return lrs


def cnn_solution():
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(128, 10))


def cnn_no_padding():
    return nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 3 * 3, 10))


def cnn_still_an_mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))


def clip_solution(model, loss, optimizer, max_norm):
    loss.backward()
    before = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    after = sum((p.grad ** 2).sum() for p in model.parameters() if p.grad is not None) ** 0.5
    optimizer.step()
    return float(before), float(after)


def clip_after_measured_too_early(model, loss, optimizer, max_norm):
    loss.backward()
    after = sum((p.grad ** 2).sum() for p in model.parameters()) ** 0.5
    before = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    return float(before), float(after)


def clip_after_the_step(model, loss, optimizer, max_norm):
    loss.backward()
    optimizer.step()
    before = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    after = sum((p.grad ** 2).sum() for p in model.parameters()) ** 0.5
    return float(before), float(after)


def clip_coefficient(model, loss, optimizer, max_norm):
    loss.backward()
    before = float(nn.utils.clip_grad_norm_(model.parameters(), max_norm))
    optimizer.step()
    return before, max_norm / (before + 1e-6)


def evaluate_solution(model, loader):
    model.eval()
    total, correct, count = 0.0, 0, 0
    with tc.no_grad():
        for xb, yb in loader:
            logits = model(xb)
            total += F.cross_entropy(logits, yb, reduction="sum").item()
            correct += (logits.argmax(dim=1) == yb).sum().item()
            count += len(yb)
    return total / count, correct / count


def evaluate_mean_of_batch_means(model, loader):
    model.eval()
    losses, correct, count = [], 0, 0
    with tc.no_grad():
        for xb, yb in loader:
            logits = model(xb)
            losses.append(F.cross_entropy(logits, yb).item())
            correct += (logits.argmax(dim=1) == yb).sum().item()
            count += len(yb)
    return sum(losses) / len(losses), correct / count


def evaluate_in_train_mode(model, loader):
    total, correct, count = 0.0, 0, 0
    with tc.no_grad():
        for xb, yb in loader:
            logits = model(xb)
            total += F.cross_entropy(logits, yb, reduction="sum").item()
            correct += (logits.argmax(dim=1) == yb).sum().item()
            count += len(yb)
    return total / count, correct / count


def evaluate_with_graph(model, loader):
    model.eval()
    total, correct, count = 0.0, 0, 0
    for xb, yb in loader:
        logits = model(xb)
        total += F.cross_entropy(logits, yb, reduction="sum").item()
        correct += (logits.argmax(dim=1) == yb).sum().item()
        count += len(yb)
    return total / count, correct / count


def evaluate_percent(model, loader):
    loss, accuracy = evaluate_solution(model, loader)
    return loss, 100 * accuracy


def _fit(patience_reached, improved, restore=True):
    def fit(model, train_epoch, evaluate, max_epochs, patience):
        best_loss, best_epoch, best_state, waited, epochs_run = float("inf"), -1, None, 0, 0
        for epoch in range(max_epochs):
            train_epoch()
            val_loss = evaluate()
            epochs_run = epoch + 1
            if improved(val_loss, best_loss):
                best_loss, best_epoch, best_state, waited = val_loss, epoch, copy.deepcopy(model.state_dict()), 0
            else:
                waited += 1
                if patience_reached(waited, patience):
                    break
        if restore:
            model.load_state_dict(best_state)
        return best_epoch, epochs_run
    return fit


fit_solution = _fit(lambda waited, patience: waited == patience, lambda loss, best: loss < best)
fit_one_epoch_late = _fit(lambda waited, patience: waited > patience, lambda loss, best: loss < best)
fit_tie_improves = _fit(lambda waited, patience: waited == patience, lambda loss, best: loss <= best)
fit_keeps_last = _fit(lambda waited, patience: waited == patience, lambda loss, best: loss < best, restore=False)


@pytest.mark.parametrize("exercise, solution", [
    ("05b.1", overfit_solution), ("05b.2", step_lr_solution), ("05b.3", cnn_solution),
    ("05b.4", clip_solution), ("05b.5", evaluate_solution), ("05b.6", fit_solution)])
def test_lab_solutions_pass(exercise, solution):
    check(exercise, solution)


@pytest.mark.parametrize("exercise, wrong, phrase", [
    ("05b.1", overfit_no_zero_grad, r"the losses of overfit_one_batch.*without optimizer\.zero_grad\(\)"),
    ("05b.1", overfit_step_before_backward, r"the losses of overfit_one_batch.*the loss never changes"),
    ("05b.2", step_lr_per_batch, r"learning rate of each epoch.*scheduler\.step\(\) ran after every batch"),
    ("05b.2", step_lr_never_stepped, r"learning rate of each epoch.*the learning rate never changed"),
    ("05b.2", step_lr_per_batch_recorded_at_the_end, r"learning rate of each epoch.*scheduler\.step\(\) ran more "
                                                     r"often than once per epoch"),
    ("05b.3", cnn_no_padding, r"parameter shapes of make_cnn\(\).*without padding=1"),
    ("05b.3", cnn_still_an_mlp, r"expected the model to contain an nn\.Conv2d"),
    ("05b.4", clip_after_measured_too_early, r"norm_after returned by clipped_step.*step 1.*equals norm_before"),
    ("05b.4", clip_after_the_step, r"parameter 0 after clipped_step.*step 1.*used the unclipped gradients"),
    ("05b.4", clip_coefficient, r"norm_after.*the clip coefficient"),
    ("05b.5", evaluate_mean_of_batch_means, r"the mean loss from evaluate.*mean of the 4 batch means"),
    ("05b.5", evaluate_in_train_mode, r"model\.training after evaluate.*expected False, got True"),
    ("05b.5", evaluate_with_graph, r"requires_grad of the activations.*expected False, got True.*tc\.no_grad"),
    ("05b.5", evaluate_percent, r"the accuracy from evaluate.*not a percentage"),
    ("05b.6", fit_one_epoch_late, r"epochs_run for fit.*0\.7, 0\.75.*expected 4, got 5.*reaches patience"),
    ("05b.6", fit_tie_improves, r"best_epoch for fit.*\[0\.5, 0\.5, 0\.5, 0\.4\].*tie is not an improvement"),
    ("05b.6", fit_keeps_last, r"the model's weight after fit.*the model holds the last epoch's weights"),
    ("05b.1", _stub, r"not implemented yet"), ("05b.2", _stub, r"not implemented yet"),
    ("05b.3", _stub, r"not implemented yet"), ("05b.4", _stub, r"not implemented yet"),
    ("05b.5", _stub, r"not implemented yet"), ("05b.6", _stub, r"not implemented yet"),
])
def test_lab_wrong_answers_are_named(exercise, wrong, phrase):
    _fails(exercise, wrong, phrase=phrase)
