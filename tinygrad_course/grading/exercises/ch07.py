"""Chapter 07 (saving and loading): checks for checkpoints that resume training exactly, a state-dict
comparison that explains why `load_state_dict` would fail, and a portable NumPy export.

Every piece is used for real: the checkpoint functions interrupt and resume a training run on the digits,
which must end with exactly the weights of an uninterrupted run.
"""
import collections
import copy
import os
import pickle
import pickletools
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
        given = ("save_checkpoint(path, model, optimizer, scheduler, epoch=2) after 2 epochs of an MLP on 256 digits "
                 "(SGD lr=0.05, momentum=0.9; StepLR step_size=2, gamma=0.5), then load_checkpoint(path, model2, "
                 "optimizer2, scheduler2) into new objects built with another seed")
        t.true(os.path.exists(path), "save_checkpoint to write the file it was given",
               hint="call tc.save(checkpoint_dict, path)", given=given)
        saved = tc.load(path)
        t.true(isinstance(saved, dict), f"the checkpoint file to hold a dict (it holds {type(saved).__name__})",
               hint="save one dict with every state", given=given)
        # a fresh process would build new objects with another initialisation
        model2, opt2, sched2 = _setup(seed=123)
        epoch = load_checkpoint(path, model2, opt2, sched2)
        t.equal(epoch, 2, what="the epoch load_checkpoint returns", hint="store the epoch in the dict and return it",
                given=given)
        t.close(_flat(model2), _flat(model), what="the model's weights after loading", atol=0, given=given,
                mistakes=[mistakes.custom(lambda got, expected: True,
                                          "the new model's weights differ from the saved model's",
                                          "load the saved state with model.load_state_dict(checkpoint[...])")])
        t.close(opt2.param_groups[0]["lr"], opt.param_groups[0]["lr"], what="the learning rate after loading",
                atol=0, given=given,
                mistakes=[mistakes.custom(lambda got, expected: np.isclose(got, 0.05),
                                          "the learning rate is back at its initial 0.05: the scheduler's and the "
                                          "optimizer's state were not restored",
                                          "put optimizer.state_dict() and scheduler.state_dict() into the checkpoint "
                                          "and load them back with their load_state_dict")])
        for _ in range(epoch, 4):
            _epoch(model2, opt2, sched2, X, y)
        t.close(_flat(model2), straight, what="weights after resuming for epochs 3-4 (vs an uninterrupted run)",
                atol=1e-6, given=given + "; then epochs 3-4 trained with model2, optimizer2, scheduler2",
                mistakes=[mistakes.custom(
                    lambda got, expected: True,
                    "the resumed run drifts away from the uninterrupted one although the weights were restored",
                    "did you restore the optimizer (momentum buffers) and the scheduler (learning rate) too?")])


@exercise("07.2", title="explain a state-dict mismatch", points=2)
def compare_check(t, compare_state_dicts):
    a = {"fc1.weight": tc.zeros(4, 3), "fc1.bias": tc.zeros(4), "fc2.weight": tc.zeros(2, 4)}
    b = {"fc1.weight": tc.zeros(5, 3), "fc1.bias": tc.zeros(4), "head.weight": tc.zeros(2, 4)}
    given = {"model_state": {k: tuple(v.shape) for k, v in a.items()},
             "checkpoint_state": {k: tuple(v.shape) for k, v in b.items()}}
    got = compare_state_dicts(a, b)
    t.equal(set(got) if isinstance(got, dict) else got, {"missing", "unexpected", "shape_mismatch"},
            what="the keys of the returned dict", given=given)
    t.equal(sorted(got["missing"]), ["fc2.weight"], what="missing (in the model, not in the checkpoint)",
            hint="missing = keys of model_state that the checkpoint lacks", given=given,
            why="missing and unexpected are swapped" if sorted(got["missing"]) == ["head.weight"] else None)
    t.equal(sorted(got["unexpected"]), ["head.weight"], what="unexpected (in the checkpoint, not in the model)",
            given=given)
    t.equal(sorted(got["shape_mismatch"]), [("fc1.weight", (4, 3), (5, 3))],
            what="shape_mismatch as (name, model shape, checkpoint shape)",
            hint="compare tuple(tensor.shape) of keys present in both", given=given,
            why=("the two shapes are in the wrong order (the model's comes first)"
                 if sorted(got["shape_mismatch"]) == [("fc1.weight", (5, 3), (4, 3))] else
                 "no shape mismatch was reported: only the keys were compared" if not got["shape_mismatch"] else None))
    model = tc.nn.Sequential(tc.nn.Linear(3, 4), tc.nn.ReLU(), tc.nn.Linear(4, 2))
    same = compare_state_dicts(model.state_dict(), model.state_dict())
    t.equal((sorted(same["missing"]), sorted(same["unexpected"]), sorted(same["shape_mismatch"])), ([], [], []),
            what="comparing a model's state_dict with itself",
            given="model_state = checkpoint_state = Sequential(Linear(3, 4), ReLU(), Linear(4, 2)).state_dict()")


@exercise("07.3", title="portable export to .npz", points=2)
def npz_check(t, export_npz, import_npz):
    tc.manual_seed(0)
    model = tc.nn.Sequential(tc.nn.Linear(64, 8), tc.nn.ReLU(), tc.nn.Linear(8, 10))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "weights.npz")
        export_npz(model, path)
        given = ("export_npz(model, path) with model = Sequential(Linear(64, 8), ReLU(), Linear(8, 10)) whose "
                 f"state_dict holds {', '.join(f'{k} {tuple(v.shape)}' for k, v in model.state_dict().items())}")
        with np.load(path, allow_pickle=False) as data:
            t.equal(sorted(data.files), sorted(model.state_dict()), what="the array names in the .npz file",
                    why=("the arrays were saved by position (np.savez(path, *arrays) names them arr_0, arr_1, ...)"
                         if all(f.startswith("arr_") for f in data.files) else None),
                    hint="one array per state_dict key, named by the key", given=given)
            t.close(data["0.weight"], model[0].weight, what="the array for '0.weight'", given=given)
        tc.manual_seed(1)
        other = tc.nn.Sequential(tc.nn.Linear(64, 8), tc.nn.ReLU(), tc.nn.Linear(8, 10))
        other_before = copy.deepcopy(other)
        import_npz(other, path)
        X, _ = digits(0, 32)
        with tc.no_grad():
            untouched = other_before(X).numpy()
            t.close(other(X), model(X), what="a model loaded from the .npz: its outputs", atol=0,
                    given=given + "; then import_npz(other, path) into a model with other weights, both run on the "
                                  "first 32 digits",
                    mistakes=[mistakes.custom(lambda g, e: np.array_equal(g, untouched),
                                              "the other model still has its own weights: import_npz read the file "
                                              "but never put the arrays into the model",
                                              "finish with model.load_state_dict({name: tc.tensor(array), ...})")])


# --- 07.4-07.6: what a pickle runs, a safe loader with an allow-list, a framework-free forward pass ---

def _reduce_pickle(module, name, argument):
    """The bytes of a protocol-2 pickle whose loading calls module.name(argument), as a malicious model file
    calls os.system; written opcode by opcode so that nothing needs pickling by reference."""
    arg = argument.encode()
    return (b"\x80\x02c" + f"{module}\n{name}\n".encode() + b"X" + len(arg).to_bytes(4, "little") + arg
            + b"\x85R.")


def _attacks(folder):
    """(bytes, the global it calls, the path its call would create, allowed) for two malicious files."""
    made = os.path.join(folder, "made_by_os_mkdir")
    written = os.path.join(folder, "written_by_exec")
    return [(_reduce_pickle("os", "mkdir", made), "os.mkdir", made, {"collections.OrderedDict"}),
            (_reduce_pickle("builtins", "exec", f"open({written!r}, 'w').write('attack')"), "builtins.exec", written,
             {"collections.OrderedDict", "builtins.set"})]


def _call(t, what, fn, *args):
    """fn(*args); an exception is reported with the call that raised it."""
    try:
        return fn(*args)
    except NotImplementedError:
        raise
    except Exception as exc:
        t.fail(what, f"your code raised {type(exc).__name__}: {exc}")


@exercise("07.4", title="a safe loader with an allow-list", points=2)
def safe_loads_check(t, safe_loads):
    plain = {"weight": [[1.0, 2.0]], "step": 3, "name": ("adam", None)}
    t.equal(_call(t, "safe_loads(pickle.dumps(plain dict), allowed=set())", safe_loads, pickle.dumps(plain), set()),
            plain, what="safe_loads of a plain dict of lists and numbers (no globals needed), allowed=set()")
    ordered = collections.OrderedDict(b=[1, 2], a=(3.0, "x"))
    got = _call(t, "safe_loads(pickled OrderedDict, allowed={'collections.OrderedDict'})", safe_loads,
                pickle.dumps(ordered), {"collections.OrderedDict"})
    t.equal(type(got).__name__, "OrderedDict",
            what="the type safe_loads rebuilds for a pickled OrderedDict when 'collections.OrderedDict' is allowed",
            hint="when f'{module}.{name}' is in the allow-list, return super().find_class(module, name)")
    t.equal(list(got.items()), list(ordered.items()), what="the OrderedDict's items after safe_loads")
    with tempfile.TemporaryDirectory() as folder:
        for data, name, path, allowed in _attacks(folder):
            where = f"safe_loads(a file whose loading calls {name}(...), allowed={sorted(allowed)})"
            try:
                result = safe_loads(data, allowed)
            except pickle.UnpicklingError as exc:
                t.equal(os.path.exists(path), False, what=f"{where}: did {name} run before the error")
                t.true(name in str(exc), f"the UnpicklingError from {where} to name the refused global {name!r}, "
                                         f"got {str(exc)!r}")
                continue
            except NotImplementedError:
                raise
            except Exception as exc:
                t.fail(where, f"expected pickle.UnpicklingError (what tc.load(..., weights_only=True) raises), got "
                              f"{type(exc).__name__}: {exc}")
            if os.path.exists(path):
                t.fail(where, f"loading it ran {name}(...) (the attack succeeded)",
                       hint="find_class must compare the full 'module.name' with the allow-list and refuse anything "
                            "else, before importing it")
            t.fail(where, f"returned {result!r:.80} instead of raising pickle.UnpicklingError",
                   hint="a refused file must not load at all: raise pickle.UnpicklingError in find_class")


def _export(model):
    return {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}


@exercise("07.5", title="a forward pass without the framework", points=2)
def numpy_forward_check(t, numpy_forward):
    X, _ = digits(0, 8)
    x = X.numpy()
    for sizes in [(64, 16, 10), (64, 12, 8, 10)]:
        tc.manual_seed(0)
        layers = []
        for i in range(len(sizes) - 1):
            layers += [tc.nn.Linear(sizes[i], sizes[i + 1]), tc.nn.ReLU()]
        model = tc.nn.Sequential(*layers[:-1])
        arrays = _export(model)
        shapes = {k: tuple(v.shape) for k, v in arrays.items()}
        what = f"numpy_forward(arrays with shapes {shapes}, x of shape {x.shape})"
        got = _call(t, what, numpy_forward, arrays, x)
        t.true(isinstance(got, np.ndarray), f"{what} to return a NumPy array (no tensors), got {type(got).__name__}")
        with tc.no_grad():
            expected = model(X).numpy()
        h, no_relu = x, x
        for i in range(0, len(layers) - 1, 2):
            h = h @ arrays[f"{i}.weight"].T + arrays[f"{i}.bias"]
            no_relu = no_relu @ arrays[f"{i}.weight"].T + arrays[f"{i}.bias"]
            if i < len(layers) - 2:
                h = np.maximum(h, 0)
        t.close(got, expected, what=what, rtol=1e-4, atol=1e-5, mistakes=[
            mistakes.custom(lambda g, e: np.allclose(g, np.maximum(e, 0), atol=1e-5),
                            "the negative outputs became 0: a ReLU was applied to the logits",
                            "there is no ReLU after the last Linear (its outputs are logits)"),
            mistakes.custom(lambda g, e, ref=no_relu: np.allclose(g, ref, atol=1e-5),
                            "these are the outputs without the ReLU between the Linear layers",
                            "apply np.maximum(h, 0) after every Linear but the last")])


def _globals(data):
    return sorted({arg.replace(" ", ".") for op, arg, _ in pickletools.genops(data) if op.name == "GLOBAL"})


@exercise("07.6", title="what would this pickle import?", points=2)
def pickled_globals_check(t, pickled_globals):
    with tempfile.TemporaryDirectory() as folder:
        data, name, path, _ = _attacks(folder)[0]
        got = _call(t, "pickled_globals(a protocol-2 pickle whose loading calls os.mkdir(...))", pickled_globals, data)
        t.equal(os.path.exists(path), False,
                what="did os.mkdir run while pickled_globals read the malicious file (it must only read, never load)")
    if isinstance(got, (list, tuple)) and "os mkdir" in got:
        t.fail("pickled_globals(malicious file)", f"got {got!r}: the names are written 'module name' with a space",
               hint="GLOBAL's argument is 'module name' with a space; return 'module.name'")
    t.equal(got, [name], what="pickled_globals(malicious file): the globals it would import")
    tc.manual_seed(0)
    model = tc.nn.Sequential(tc.nn.Linear(3, 2), tc.nn.ReLU(), tc.nn.Linear(2, 1))
    data = pickle.dumps(model, protocol=2)
    expected = _globals(data)
    got = _call(t, "pickled_globals(pickle.dumps(Sequential(Linear, ReLU, Linear), protocol=2))", pickled_globals, data)
    if isinstance(got, (set, frozenset)) or isinstance(got, list) and got != expected and sorted(got) == expected:
        t.fail("pickled_globals(a whole Sequential model)",
               f"the right names, but as a {type(got).__name__} in the order {list(got)!r}, not as a sorted "
               f"list",
               hint="return a sorted list")
    if isinstance(got, list) and len(got) > len(set(got)):
        t.fail("pickled_globals(a whole Sequential model)",
               f"{len(got)} names but only {len(set(got))} different ones: some globals are listed more than once",
               hint="list each global once, sorted")
    t.equal(got, expected, what="pickled_globals(a whole Sequential(Linear, ReLU, Linear), protocol 2)",
            hint="walk pickletools.genops(data); every GLOBAL opcode's argument is one global")
