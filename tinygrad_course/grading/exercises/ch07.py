"""Chapter 07 (saving and loading): checks for checkpoints that resume training exactly, a state-dict
comparison that explains why `load_state_dict` would fail, and a portable NumPy export.

Every piece is used for real: the checkpoint functions interrupt and resume a training run on the digits,
which must end with exactly the weights of an uninterrupted run.
"""
import os
import tempfile

import numpy as np

import tinygrad_course as tc

from .. import mistakes
from ..registry import exercise
from .ch03 import digits


def _setup(seed=0):
    tc.manual_seed(seed)
    model = tc.nn.Sequential(tc.nn.Linear(64, 16), tc.nn.ReLU(), tc.nn.Linear(16, 10))
    opt = tc.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    sched = tc.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    return model, opt, sched


def _epoch(model, opt, sched, X, y):
    for i in range(0, len(X), 64):
        opt.zero_grad()
        tc.nn.functional.cross_entropy(model(X[i:i + 64]), y[i:i + 64]).backward()
        opt.step()
    sched.step()


def _flat(model):
    return np.concatenate([p.detach().numpy().ravel() for p in model.parameters()])


@exercise("07.1", title="checkpoint and resume", points=3)
def checkpoint_check(t, save_checkpoint, load_checkpoint):
    X, y = digits(0, 256)
    model, opt, sched = _setup()
    for _ in range(4):
        _epoch(model, opt, sched, X, y)
    straight = _flat(model)

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ckpt.tc")
        model, opt, sched = _setup()
        for _ in range(2):
            _epoch(model, opt, sched, X, y)
        save_checkpoint(path, model, opt, sched, epoch=2)
        t.true(os.path.exists(path), "save_checkpoint to write the file it was given",
               hint="call tc.save(checkpoint_dict, path)")
        saved = tc.load(path)
        t.true(isinstance(saved, dict), "the checkpoint file to hold a dict", hint="save one dict with every state")
        # a fresh process would build new objects with another initialisation
        model2, opt2, sched2 = _setup(seed=123)
        epoch = load_checkpoint(path, model2, opt2, sched2)
        t.equal(epoch, 2, what="the epoch load_checkpoint returns", hint="store the epoch in the dict and return it")
        t.close(_flat(model2), _flat(model), what="the model's weights after loading", atol=0,
                mistakes=[mistakes.custom(lambda got, expected: True,
                                          "load the saved state with model.load_state_dict(checkpoint[...])")])
        t.close(opt2.param_groups[0]["lr"], opt.param_groups[0]["lr"], what="the learning rate after loading",
                atol=0)
        for _ in range(epoch, 4):
            _epoch(model2, opt2, sched2, X, y)
        t.close(_flat(model2), straight, what="weights after resuming for epochs 3-4 (vs an uninterrupted run)",
                atol=1e-6, mistakes=[mistakes.custom(
                    lambda got, expected: True,
                    "did you restore the optimizer (momentum buffers) and the scheduler (learning rate) too?")])


@exercise("07.2", title="explain a state-dict mismatch", points=2)
def compare_check(t, compare_state_dicts):
    a = {"fc1.weight": tc.zeros(4, 3), "fc1.bias": tc.zeros(4), "fc2.weight": tc.zeros(2, 4)}
    b = {"fc1.weight": tc.zeros(5, 3), "fc1.bias": tc.zeros(4), "head.weight": tc.zeros(2, 4)}
    got = compare_state_dicts(a, b)
    t.equal(set(got), {"missing", "unexpected", "shape_mismatch"}, what="the keys of the returned dict")
    t.equal(sorted(got["missing"]), ["fc2.weight"], what="missing (in the model, not in the checkpoint)",
            hint="missing = keys of model_state that the checkpoint lacks")
    t.equal(sorted(got["unexpected"]), ["head.weight"], what="unexpected (in the checkpoint, not in the model)")
    t.equal(sorted(got["shape_mismatch"]), [("fc1.weight", (4, 3), (5, 3))],
            what="shape_mismatch as (name, model shape, checkpoint shape)",
            hint="compare tuple(tensor.shape) of keys present in both")
    model = tc.nn.Sequential(tc.nn.Linear(3, 4), tc.nn.ReLU(), tc.nn.Linear(4, 2))
    same = compare_state_dicts(model.state_dict(), model.state_dict())
    t.equal((sorted(same["missing"]), sorted(same["unexpected"]), sorted(same["shape_mismatch"])), ([], [], []),
            what="comparing a model's state_dict with itself")


@exercise("07.3", title="portable export to .npz", points=2)
def npz_check(t, export_npz, import_npz):
    tc.manual_seed(0)
    model = tc.nn.Sequential(tc.nn.Linear(64, 8), tc.nn.ReLU(), tc.nn.Linear(8, 10))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "weights.npz")
        export_npz(model, path)
        with np.load(path, allow_pickle=False) as data:
            t.equal(sorted(data.files), sorted(model.state_dict()), what="the array names in the .npz file",
                    hint="one array per state_dict key, named by the key")
            t.close(data["0.weight"], model[0].weight, what="the array for '0.weight'")
        tc.manual_seed(1)
        other = tc.nn.Sequential(tc.nn.Linear(64, 8), tc.nn.ReLU(), tc.nn.Linear(8, 10))
        import_npz(other, path)
        X, _ = digits(0, 32)
        with tc.no_grad():
            t.close(other(X), model(X), what="a model loaded from the .npz: its outputs", atol=0)
