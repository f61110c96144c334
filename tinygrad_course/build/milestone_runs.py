"""The computations the milestones run: each returns plain data (a dict of NumPy arrays) and runs whatever
components are installed, so the same function gives the learner's result in a child process and the
reference's here."""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from .. import nn, optim
from ..autograd.grad_mode import no_grad
from ..datasets.digits import Digits
from ..dtypes import float32
from ..factories import tensor
from ..generator import Generator, manual_seed
from ..nn.functional import cross_entropy, log_softmax, nll_loss
from ..utils.data import DataLoader, TensorDataset
from .training_components import (classification_dataset, evaluate, init_weights, load_checkpoint, make_loaders,
                                  save_checkpoint, to_device, train_step)


def autograd_graph() -> dict:
    """Chapter 02's milestone graph: a two-layer tanh network, its output scaled element-wise; the gradients
    of every input (float64)."""
    manual_seed(0)
    rng = np.random.default_rng(0)
    x = tensor(rng.standard_normal((8, 4)), requires_grad=True)
    w1 = tensor(rng.standard_normal((4, 5)), requires_grad=True)
    w2 = tensor(rng.standard_normal((5, 3)), requires_grad=True)
    c = tensor(rng.standard_normal((8, 3)), requires_grad=True)
    ((x @ w1).tanh() @ w2 * c).sum().backward()
    return {"x": x.grad.numpy(), "w1": w1.grad.numpy(), "w2": w2.grad.numpy(), "c": c.grad.numpy()}


def _resume_setup(seed):
    manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    return model, opt, sched


def _resume_steps(model, opt, sched, start, stop):
    rng = np.random.default_rng(7)
    batches = [(tensor(rng.standard_normal((6, 3)), dtype=float32), tensor(rng.standard_normal((6, 1)), dtype=float32))
               for _ in range(stop)]
    for x, y in batches[start:stop]:
        opt.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        opt.step()
        sched.step()


def resume_run() -> dict:
    """Chapter 07's milestone: train 3 steps, save a checkpoint, restore it into fresh objects (other
    initial weights), train to step 6; the final weights must equal an uninterrupted run's, bit for bit."""
    model, opt, sched = _resume_setup(0)
    _resume_steps(model, opt, sched, 0, 3)
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "checkpoint.tcpt")
        save_checkpoint(path, model, opt, sched, 3)
        model, opt, sched = _resume_setup(1)
        epoch = load_checkpoint(path, model, opt, sched)
    _resume_steps(model, opt, sched, epoch, 6)
    return {"epoch": np.array([epoch]), **{name: p.detach().numpy() for name, p in model.named_parameters()}}


def uninterrupted_run() -> dict:
    """The run `resume_run` must reproduce, without a checkpoint."""
    model, opt, sched = _resume_setup(0)
    _resume_steps(model, opt, sched, 0, 6)
    return {"epoch": np.array([3]), **{name: p.detach().numpy() for name, p in model.named_parameters()}}


LAB_SECONDS = 60.0
LAB_ACCURACY = 0.96  # correct runs give 96.7-97.8% over seeds (359 test images): a correct learner whose
#                     sums round differently must not fail; wrong steps fall far below it
CNN_ACCURACY = 0.93  # the reference (and the released solutions) reach 95.3% after 4 epochs


def digits_split():
    """The lab's data: the course's 8x8 digits, standardised with the training split's mean and spread."""
    train, test = Digits(train=True), Digits(train=False)
    x_train, x_test = train.data.reshape(len(train), 64), test.data.reshape(len(test), 64)
    mean, spread = x_train.mean(), x_train.std()
    return (x_train - mean) / spread, train.targets, (x_test - mean) / spread, test.targets


def lab_loss(logits, targets):
    """The lab's loss: cross-entropy written as log-softmax then the negative log-likelihood of each row's
    target (chapter 05's `nll_loss`, picking with chapter 01's `pick`, when they are the learner's)."""
    return nll_loss(log_softmax(logits, 1), targets)


def lab_run() -> dict:
    """Chapter 05's lab: a 64-256-128-10 tanh network trained on the digits (Adam, cosine schedule, 30 epochs
    of batches of 64), every piece of the run through its component; returns its predicted class for every
    held-out image (the grader computes the accuracy) and what `evaluate` reported."""
    x_train, y_train, x_test, y_test = digits_split()
    manual_seed(2)  # with PyTorch's random stream the reference reaches 97.8% with this seed
    train_set = classification_dataset(x_train.numpy(), y_train.tolist())
    test_set = classification_dataset(x_test.numpy(), y_test.tolist())
    train_loader, test_loader = make_loaders(train_set, test_set, 64, 0)
    model = nn.Sequential(nn.Linear(64, 256), nn.Tanh(), nn.Linear(256, 128), nn.Tanh(), nn.Linear(128, 10))
    model.apply(init_weights)
    opt = optim.Adam(model.parameters(), lr=3e-3)
    epochs = 30
    schedule = optim.lr_scheduler.CosineAnnealingLR(opt, epochs * len(train_loader))
    for _ in range(epochs):
        model.train()
        for batch in train_loader:
            x, y = to_device(batch, "cpu")
            train_step(model, opt, lab_loss, x, y)
            schedule.step()
    reported = evaluate(model, test_loader)
    return {"predictions": predict(model, test_loader), "evaluate": np.asarray(reported, dtype=np.float64)}


def cnn_run() -> dict:
    """The lab's CNN (two 3x3 convolutions with padding 1, ReLU, 2x2 max pooling, a linear head) trained 4
    epochs on the digits with Adam, its convolutions and pooling through `nn.Conv2d` and `nn.MaxPool2d` (the
    learner's Conv2dFunction and MaxPool2dFunction when installed); returns its predicted class for every
    held-out image."""
    x_train, y_train, x_test, _ = digits_split()
    manual_seed(0)
    train = DataLoader(TensorDataset(x_train.reshape(-1, 1, 8, 8), y_train), batch_size=64, shuffle=True,
                       generator=Generator().manual_seed(0))
    model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16 * 4 * 4, 10))
    opt = optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(4):
        for x, y in train:
            opt.zero_grad()
            cross_entropy(model(x), y).backward()
            opt.step()
    test = DataLoader(TensorDataset(x_test.reshape(-1, 1, 8, 8), x_test.new_zeros(len(x_test))), batch_size=256)
    return {"predictions": predict(model, test)}


def predict(model, loader) -> np.ndarray:
    """The predicted class of every sample of an ordered loader (in eval mode, without a graph), reading the
    dataset only through its loader, as the learner's contract defines it (no attribute of theirs)."""
    model.eval()
    with no_grad():
        return np.concatenate([model(to_device(x, "cpu")).argmax(1).numpy() for x, _ in loader])
