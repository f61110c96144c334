"""A long training loop keeps a flat memory profile: no graph survives a step, no_grad builds none."""
import gc
import tracemalloc
import weakref

import pytest

import tinygrad_course as tc
from tinygrad_course import nn


def _setup():
    tc.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, 5))
    opt = tc.optim.Adam(model.parameters(), lr=1e-3)
    x, y = tc.randn(32, 20), tc.randint(0, 5, (32,))
    return model, opt, x, y


def _step(model, opt, x, y):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss.item()


@pytest.mark.slow
def test_thousand_training_steps_keep_memory_flat():
    model, opt, x, y = _setup()
    for _ in range(50):  # warm-up: optimizer state, scratch buffers, caches
        _step(model, opt, x, y)
    gc.collect()
    tracemalloc.start()
    try:
        samples = []
        for i in range(1000):
            _step(model, opt, x, y)
            if i % 100 == 99:
                samples.append(tracemalloc.get_traced_memory()[0])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    per_step = (samples[-1] - samples[0]) / 900
    # One step's graph holds > 10 KB of activations and saved tensors, so a graph kept alive per step would
    # show up as >= 10 KB/step. The allowance covers NumPy 2.4's np.broadcast_to, which leaks its shape
    # tuple (56 bytes per call; it is used by expand in the backward of sums/broadcasts).
    assert per_step < 1024, f"memory grew by {per_step:.0f} bytes per step: {samples}"
    assert peak < 4 * 1024 * 1024, f"peak traced memory {peak} bytes"


def test_graph_is_freed_by_reference_counting_alone():
    model, opt, x, y = _setup()
    gc.collect()
    gc.disable()  # no cycle collector: everything must go away through reference counts
    try:
        opt.zero_grad()
        out = model(x)
        loss = nn.functional.cross_entropy(out, y)
        node, activation = weakref.ref(loss.grad_fn), weakref.ref(out)
        loss.backward()
        opt.step()
        del loss, out
        assert node() is None and activation() is None
    finally:
        gc.enable()


def test_no_grad_evaluation_builds_no_graph_and_no_memory():
    model, opt, x, y = _setup()
    model.eval()
    with tc.no_grad():
        out = model(x)
    assert out.grad_fn is None and not out.requires_grad
    gc.collect()
    tracemalloc.start()
    try:
        with tc.no_grad():
            for _ in range(200):
                model(x).argmax(dim=1)
        current, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert current < 32 * 1024
