"""The course lab: train an MLP and a small CNN on scikit-learn's 8x8 handwritten digits (no download).

    python examples/train_digits.py                 # both models
    python examples/train_digits.py --model cnn --epochs 30

It is the same loop as PyTorch's: for each batch zero_grad, forward, loss, backward, step; `model.train()`
while training, `model.eval()` + `tc.no_grad()` while evaluating; a tqdm progress bar; a checkpoint
(model, optimizer, scheduler, epoch, accuracy) saved with `tc.save` after every epoch.
"""
from __future__ import annotations

import argparse
import os

from tqdm.auto import tqdm

import tinygrad_course as tc
from tinygrad_course import nn
from tinygrad_course.datasets import Digits
from tinygrad_course.transforms import Normalize
from tinygrad_course.utils.data import DataLoader, TensorDataset


def make_mlp() -> nn.Module:
    """64 -> 256 -> 128 -> 10 with ReLUs and dropout (the digits are 8x8 = 64 pixels)."""
    return nn.Sequential(
        nn.Flatten(),
        nn.Linear(64, 256), nn.ReLU(), nn.Dropout(0.2),
        nn.Linear(256, 128), nn.ReLU(), nn.Dropout(0.2),
        nn.Linear(128, 10),
    )


def make_cnn() -> nn.Module:
    """Two 3x3 convolutions (padding 1) with ReLU and 2x2 max pooling, then a small classifier."""
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # 32 x 4 x 4
        nn.Flatten(),
        nn.Linear(32 * 4 * 4, 64), nn.ReLU(),
        nn.Linear(64, 10),
    )


MODELS = {"mlp": make_mlp, "cnn": make_cnn}


def train_one_epoch(model, loader, optimizer, loss_fn, progress):
    """One pass over the training data; returns the mean training loss."""
    model.train()
    total, count = 0.0, 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(y)
        count += len(y)
        progress.update(1)
        progress.set_postfix(loss=f"{total / count:.4f}")
    return total / count


def evaluate(model, loader):
    """Accuracy on `loader` (no graph is built: eval mode + no_grad)."""
    model.eval()
    correct, count = 0, 0
    with tc.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(dim=1) == y).sum().item()
            count += len(y)
    return correct / count


def run(model_name="mlp", epochs=30, seed=0, lr=3e-3, batch_size=32, checkpoint=None, progress=True):
    """Train one model; returns {"model": ..., "test_accuracy": ..., "history": [...]}."""
    tc.manual_seed(seed)
    train_set, test_set = Digits(train=True), Digits(train=False)
    # Standardise with the training set's statistics (never the test set's).
    mean, std = train_set.data.mean().item(), train_set.data.std().item()
    normalize = Normalize((mean,), (std,))
    # The whole split already is a tensor, so a TensorDataset avoids per-sample Python work.
    train_loader = DataLoader(TensorDataset(normalize(train_set.data), train_set.targets), batch_size=batch_size,
                              shuffle=True, generator=tc.Generator().manual_seed(seed))
    test_loader = DataLoader(TensorDataset(normalize(test_set.data), test_set.targets), batch_size=256)

    model = MODELS[model_name]()
    optimizer = tc.optim.Adam(model.parameters(), lr=lr)
    scheduler = tc.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)  # softer targets: less over-confident, better test accuracy

    history = []
    with tqdm(total=epochs * len(train_loader), desc=model_name, disable=not progress, leave=False) as bar:
        for epoch in range(epochs):
            train_loss = train_one_epoch(model, train_loader, optimizer, loss_fn, bar)
            scheduler.step()
            accuracy = evaluate(model, test_loader)
            history.append({"epoch": epoch, "train_loss": train_loss, "test_accuracy": accuracy})
            if checkpoint is not None:
                tc.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                         "scheduler": scheduler.state_dict(), "epoch": epoch, "test_accuracy": accuracy,
                         "model_name": model_name}, checkpoint)
    return {"model": model, "test_accuracy": history[-1]["test_accuracy"], "history": history}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=["mlp", "cnn", "both"], default="both")
    parser.add_argument("--epochs", type=int, default=None, help="default: 30 for the MLP, 15 for the CNN")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--checkpoint-dir", default="checkpoints")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    os.makedirs(args.checkpoint_dir, exist_ok=True)
    names = ["mlp", "cnn"] if args.model == "both" else [args.model]
    for name in names:
        epochs = args.epochs or DEFAULT_EPOCHS[name]
        path = os.path.join(args.checkpoint_dir, f"digits_{name}.pt")
        result = run(name, epochs=epochs, seed=args.seed, checkpoint=path, progress=not args.no_progress)
        print(f"{name}: test accuracy {result['test_accuracy']:.2%} after {epochs} epochs (checkpoint: {path})")


DEFAULT_EPOCHS = {"mlp": 30, "cnn": 15}

if __name__ == "__main__":
    main()
