"""The computations the milestones run: each returns plain data (a dict of NumPy arrays) and runs whatever
components are installed, so the same function gives the learner's result in a child process and the
reference's here."""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from .. import nn, optim
from ..dtypes import float32
from ..factories import tensor
from ..generator import manual_seed
from .training_components import load_checkpoint, save_checkpoint


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
