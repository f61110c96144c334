"""Every case of the core and nn gradcheck tables (tests/core/test_gradcheck.py, tests/nn/test_nn_gradcheck.py),
run on `device`: value and input gradients against the same case on the CPU, and `gradcheck` itself
on the device.

The tables build their constant tensors (indices, targets, class weights) on the CPU; for the device run
they are moved there, and tensors a case creates inside its function are created there through
`tc.set_default_device`, which is switched on for the forward call only, so that a backward formula that
builds a tensor without `device=` still fails here.
"""
import contextlib
import importlib.util
import pathlib
import sys

import numpy as np
import pytest

import tinygrad_course as tc
from devices import DEVICES, assert_close_across_devices

TESTS = pathlib.Path(__file__).resolve().parent.parent


def _load(relative, name):
    folder = str((TESTS / relative).parent)
    if folder not in sys.path:  # the table's own helpers (core_helpers, ...) import as they do under pytest
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, TESTS / relative)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Tables of `name -> (function, inputs factory)`, float64 inputs (the format of tests/core/test_gradcheck.py).
FACTORY_TABLES = ["core/test_gradcheck.py", "core/test_statistics_and_aliases.py", "core/test_sorting_ops.py",
                  "core/test_shaping_ops.py", "nn/test_layers_extra.py", "nn/test_rnn.py",
                  "nn/test_attention_transformer.py", "nn/test_activations_extra.py", "nn/test_losses_extra.py",
                  "core/test_pointwise_extra_ops.py", "core/test_linalg_ops.py"]
TABLES = {path: _load(path, "gradcheck_table_" + path.replace("/", "_")[:-3]) for path in FACTORY_TABLES}
NN = _load("nn/test_nn_gradcheck.py", "gradcheck_table_nn")  # name -> (function, input shapes)


def _factory_inputs(path):
    def make(name):
        fn, factory = TABLES[path].CASES[name]
        return fn, factory()

    make.table = TABLES[path]
    return make


def _nn_inputs(name):
    fn, shapes = NN.CASES[name]
    tc.manual_seed(1)
    return fn, tuple(NN.rnd(*s) for s in shapes)


_nn_inputs.table = NN

CASES = []
for _path in FACTORY_TABLES:
    _make = _factory_inputs(_path)
    _prefix = "core" if _path == "core/test_gradcheck.py" else pathlib.Path(_path).stem.removeprefix("test_")
    CASES += [pytest.param(_make, n, id=f"{_prefix}-{n}") for n in sorted(TABLES[_path].CASES)]
CASES += [pytest.param(_nn_inputs, n, id=f"nn-{n}") for n in sorted(NN.CASES)]


@contextlib.contextmanager
def _on(device, module, monkeypatch):
    """The table's module-level tensors moved to `device` (restored afterwards)."""
    with monkeypatch.context() as m:
        for attr, value in vars(module).items():
            if isinstance(value, tc.Tensor):
                m.setattr(module, attr, value.to(device))
        yield


@contextlib.contextmanager
def _default_device(device):
    tc.set_default_device(device)
    try:
        yield
    finally:
        tc.set_default_device(None)


def _value_and_grads(fn, inputs, device):
    moved = tuple(x.detach().to(device).requires_grad_(x.requires_grad) for x in inputs)
    with _default_device(device):
        out = fn(*moved)
    upstream = tc.tensor(np.random.default_rng(7).standard_normal(tuple(out.shape)), dtype=out.dtype).to(device)
    grads = tc.autograd.grad(out, [x for x in moved if x.requires_grad], upstream, allow_unused=True)
    return out, grads


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("make, name", CASES)
def test_case_matches_the_cpu(make, name, device, monkeypatch):
    module = make.table
    fn, inputs = make(name)
    ref_out, ref_grads = _value_and_grads(fn, inputs, "cpu")
    with _on(device, module, monkeypatch):
        out, grads = _value_and_grads(fn, inputs, device)
    assert out.device.type == tc.device(device).type
    assert_close_across_devices(ref_out, out, 1e-9, 1e-11, "output")
    for i, (r, g) in enumerate(zip(ref_grads, grads)):
        assert (r is None) == (g is None), f"grad of input {i} is None on one device only"
        if r is not None:
            assert g.device == out.device, "gradients live on the input's device"
            assert_close_across_devices(r, g, 1e-9, 1e-11, f"grad of input {i}")


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "cpu"])
@pytest.mark.parametrize("make, name", CASES)
def test_gradcheck_on_device(make, name, device, monkeypatch):
    module = make.table
    fn, inputs = make(name)
    moved = tuple(x.detach().to(device).requires_grad_(x.requires_grad) for x in inputs)

    def on_device(*args):
        with _default_device(device):
            return fn(*args)

    with _on(device, module, monkeypatch):
        assert tc.autograd.gradcheck(on_device, moved, eps=1e-6, atol=1e-5, rtol=1e-3)
