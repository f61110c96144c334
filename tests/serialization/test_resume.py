"""Resuming from a checkpoint (model + optimizer + scheduler + epoch + RNG) continues training bit for bit."""
import numpy as np
import pytest

import tinygrad_course as tc
from tinygrad_course import nn, optim
from tinygrad_course.utils.data import DataLoader, TensorDataset

EPOCHS = 4


def _data():
    g = tc.Generator().manual_seed(123)
    x = tc.randn(96, 6, generator=g)
    y = (x[:, 0] + x[:, 1] > 0).long()
    return TensorDataset(x, y)


def _build(opt_name):
    tc.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 2))
    if opt_name == "Adam":
        opt = optim.Adam(model.parameters(), lr=0.01, amsgrad=True)
    else:
        opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    sched = optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.7)
    loader_gen = tc.Generator().manual_seed(7)
    loader = DataLoader(_data(), batch_size=16, shuffle=True, generator=loader_gen)
    return model, opt, sched, loader, loader_gen


def _train_epoch(model, opt, loader):
    model.train()
    for x, y in loader:
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()


@pytest.mark.parametrize("opt_name", ["Adam", "SGD"])
def test_resume_matches_uninterrupted_training(tmp_path, opt_name):
    model, opt, sched, loader, _ = _build(opt_name)
    for _ in range(EPOCHS):
        _train_epoch(model, opt, loader)
        sched.step()
    reference = [p.detach().numpy().copy() for p in model.parameters()]

    # first half, then a checkpoint
    model, opt, sched, loader, loader_gen = _build(opt_name)
    for epoch in range(EPOCHS // 2):
        _train_epoch(model, opt, loader)
        sched.step()
    tc.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
             "epoch": epoch, "rng": tc.get_rng_state(), "loader_rng": loader_gen.get_state()}, tmp_path / "ckpt.pt")
    del model, opt, sched, loader

    # a new process would rebuild everything from scratch and then load the checkpoint
    tc.manual_seed(999)
    model, opt, sched, loader, loader_gen = _build(opt_name)
    ckpt = tc.load(tmp_path / "ckpt.pt")
    model.load_state_dict(ckpt["model"])
    opt.load_state_dict(ckpt["optimizer"])
    sched.load_state_dict(ckpt["scheduler"])
    tc.set_rng_state(ckpt["rng"])
    loader_gen.set_state(ckpt["loader_rng"])
    for epoch in range(ckpt["epoch"] + 1, EPOCHS):
        _train_epoch(model, opt, loader)
        sched.step()
    assert sched.last_epoch == EPOCHS
    for got, want in zip(model.parameters(), reference):
        np.testing.assert_array_equal(got.detach().numpy(), want)
