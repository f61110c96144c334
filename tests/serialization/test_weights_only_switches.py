"""PyTorch's environment switches for `load`: TORCH_FORCE_WEIGHTS_ONLY_LOAD and TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD,
honoured as torch.load honours them (checked side by side with PyTorch)."""
import pickle
import warnings

import numpy as np
import pytest
import torch

import tinygrad_course as tc


@pytest.fixture()
def files(tmp_path):
    """The same object (a NumPy array, refused by a weights-only load) saved by each framework."""
    obj = {"w": np.arange(3.0)}
    tc.save(obj, tmp_path / "tc.pt")
    torch.save(obj, tmp_path / "torch.pt")
    return tmp_path / "tc.pt", tmp_path / "torch.pt"


def _outcome(load, path, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = load(path, **kw)
            result = ("loaded", np.asarray(out["w"]).tolist())
        except pickle.UnpicklingError:
            result = ("refused",)
        except RuntimeError as e:
            result = ("error", str(e))
    switched = [str(w.message) for w in caught if "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected" in str(w.message)]
    return result, bool(switched)


CASES = [({}, {}), ({}, {"weights_only": False}), ({}, {"weights_only": True}),
         ({"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}, {}),
         ({"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "yes"}, {"weights_only": True}),
         ({"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "TRUE"}, {"weights_only": False}),
         ({"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "0"}, {}),
         ({"TORCH_FORCE_WEIGHTS_ONLY_LOAD": "1"}, {"weights_only": False}),
         ({"TORCH_FORCE_WEIGHTS_ONLY_LOAD": "y"}, {}),
         ({"TORCH_FORCE_WEIGHTS_ONLY_LOAD": "1", "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}, {}),
         ({}, {"pickle_module": pickle}),
         ({}, {"pickle_module": pickle, "weights_only": True}),
         ({"TORCH_FORCE_WEIGHTS_ONLY_LOAD": "1"}, {"pickle_module": pickle})]


@pytest.mark.parametrize("env,kw", CASES)
def test_load_follows_pytorchs_switches(files, monkeypatch, env, kw):
    for name in ("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    ours, theirs = _outcome(tc.load, files[0], **kw), _outcome(torch.load, files[1], **kw)
    assert ours[0][0] == theirs[0][0] and ours[1] == theirs[1]
    if ours[0][0] == "loaded":
        assert ours[0][1] == theirs[0][1]
    if ours[0][0] == "error":
        assert ours[0][1] == theirs[0][1]
