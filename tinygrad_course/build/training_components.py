"""Components a learner writes that the framework does not call itself but the course's runs do: the pieces
of a training run (dataset, loaders, initialisation, device moves, the training step, evaluation; chapters
03-06) and saving and restoring a checkpoint (chapter 07). Each is a `seams.component`, so the milestones
run whatever is installed under its name -- the learner's code, or the reference here."""
from __future__ import annotations

import numpy as np

from .. import nn
from ..autograd.grad_mode import no_grad
from ..dtypes import float32
from ..factories import tensor
from ..generator import Generator
from ..nn.functional import cross_entropy
from ..seams import component
from ..serialization import load, save
from ..tensor import Tensor
from ..utils.data import DataLoader, Dataset


@component("init_weights")
def init_weights(module):
    """For `model.apply`: Kaiming-normal weights (fan_in, ReLU gain) and zero biases for every nn.Linear."""
    if isinstance(module, nn.Linear):
        with no_grad():
            module.weight.normal_(0.0, (2.0 / module.weight.shape[1]) ** 0.5)
            if module.bias is not None:
                module.bias.zero_()


class ClassificationDataset(Dataset):
    """Samples (features as a float32 tensor, class index) from a feature array and labels of any kind; the
    classes are the sorted distinct labels."""

    def __init__(self, features, labels):
        self.features = tensor(np.asarray(features), dtype=float32)
        self.classes = sorted(set(labels))
        index = {name: i for i, name in enumerate(self.classes)}
        self.targets = [index[label] for label in labels]

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, index):
        return self.features[index], self.targets[index]


@component("ClassificationDataset")
def classification_dataset(features, labels):
    """The dataset of a training run (chapter 04's ClassificationDataset)."""
    return ClassificationDataset(features, labels)


@component("make_loaders")
def make_loaders(train_set, val_set, batch_size, seed):
    """(training loader, shuffled with a generator seeded with `seed`; validation loader, in order)."""
    train = DataLoader(train_set, batch_size=batch_size, shuffle=True, generator=Generator().manual_seed(seed))
    return train, DataLoader(val_set, batch_size=batch_size, shuffle=False)


@component("to_device")
def to_device(obj, device):
    """`obj` with every tensor inside (nested tuples, lists, dicts) moved to `device`."""
    if isinstance(obj, Tensor):
        return obj.to(device)
    if isinstance(obj, (tuple, list)):
        return type(obj)(to_device(item, device) for item in obj)
    if isinstance(obj, dict):
        return {key: to_device(value, device) for key, value in obj.items()}
    return obj


@component("train_step")
def train_step(model, optimizer, loss_fn, x, y):
    """One optimisation step on the batch (x, y), in the loop's order: zero_grad, forward, loss, backward,
    step; returns the loss as a Python float."""
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


@component("evaluate")
def evaluate(model, loader):
    """(mean cross-entropy per sample, accuracy) of `model` over `loader`, in eval mode without a graph."""
    model.eval()
    total, correct, count = 0.0, 0, 0
    with no_grad():
        for x, y in loader:
            logits = model(x)
            total += cross_entropy(logits, y, reduction="sum").item()
            correct += (logits.argmax(dim=1) == y).sum().item()
            count += len(y)
    return total / count, correct / count


@component("save_checkpoint")
def save_checkpoint(path, model, optimizer, scheduler, epoch):
    """Save model, optimizer and scheduler state plus the epoch to `path` (one dict, `tc.save`)."""
    save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
          "epoch": epoch}, path)


@component("load_checkpoint")
def load_checkpoint(path, model, optimizer, scheduler):
    """Restore what `save_checkpoint` saved into the given objects; return the saved epoch."""
    checkpoint = load(path)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    scheduler.load_state_dict(checkpoint["scheduler"])
    return checkpoint["epoch"]
