"""tc.save / tc.load: round trips, safety (no unpickling by default), atomic writes, damaged files, resuming."""
import collections
import io
import os
import pickle

import numpy as np
import pytest
import torch

import tinygrad_course as tc
from tinygrad_course import nn
from tinygrad_course.serialization import checkpoint as serialization
from tinygrad_course.serialization import CheckpointError


def _roundtrip(obj, **kw):
    buf = io.BytesIO()
    tc.save(obj, buf)
    buf.seek(0)
    return tc.load(buf, **kw)


@pytest.mark.parametrize("dtype", [tc.float32, tc.float64, tc.float16, tc.bfloat16, tc.int64, tc.int32, tc.int16,
                                   tc.int8, tc.uint8, tc.bool])
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3, 4)])
def test_tensor_roundtrip_all_dtypes_and_shapes(dtype, shape):
    t = (tc.randn(shape) * 5).to(dtype)
    back = _roundtrip(t)
    assert back.dtype == dtype and back.shape == t.shape
    np.testing.assert_array_equal(back.float().numpy(), t.float().numpy())


def test_views_and_requires_grad_and_parameters():
    base = tc.arange(12.0).reshape(3, 4)
    view = base.t()[1:]
    p = nn.Parameter(tc.ones(2))
    leaf = tc.zeros(2, requires_grad=True)
    out = _roundtrip({"view": view, "p": p, "leaf": leaf})
    assert out["view"].tolist() == view.tolist()
    assert isinstance(out["p"], nn.Parameter) and out["p"].requires_grad
    assert out["leaf"].requires_grad and out["leaf"].is_leaf and not isinstance(out["leaf"], nn.Parameter)


def test_nested_containers_keep_types_keys_and_shared_tensors():
    shared = tc.randn(3)
    obj = {
        "od": collections.OrderedDict([("b", 1), ("a", 2)]),
        1: [shared, (shared, None, True, 2.5, float("inf"), float("nan"), "text", -7, 10 ** 30)],
        (1, "x"): tc.Size([2, 3]),
        "dtype": tc.float16, "device": tc.device("cpu"),
        "np": np.arange(4, dtype=np.int16), "npscalar": np.float32(1.5), "bytes": b"\x00\x01",
    }
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL numpy._core.multiarray._reconstruct was not an allowed"):
        _roundtrip(obj)  # NumPy objects need allow-listing, as in PyTorch (tests/compat/test_numpy_weights_only.py)
    numpy_globals = [np._core.multiarray._reconstruct, np.ndarray, np.dtype, type(np.dtype(np.int16)),
                     np._core.multiarray.scalar, type(np.dtype(np.float32))]
    with tc.serialization.safe_globals(numpy_globals):
        out = _roundtrip(obj)
    assert list(out) == list(obj)
    assert type(out["od"]) is collections.OrderedDict and list(out["od"].items()) == [("b", 1), ("a", 2)]
    tup = out[1][1]
    assert out[1][0] is tup[0]  # one tensor saved once and restored once
    assert tup[1:5] == (None, True, 2.5, float("inf")) and np.isnan(tup[5]) and tup[6:] == ("text", -7, 10 ** 30)
    assert out[(1, "x")] == tc.Size([2, 3]) and isinstance(out[(1, "x")], tc.Size)
    assert out["dtype"] is tc.float16 and out["device"] == tc.device("cpu")
    assert out["np"].dtype == np.int16 and out["np"].tolist() == [0, 1, 2, 3]
    assert out["npscalar"] == np.float32(1.5) and out["bytes"] == b"\x00\x01"


def test_loaded_tensors_are_independent_and_writable(tmp_path):
    t = tc.ones(3)
    tc.save(t, tmp_path / "t.pt")
    a, b = tc.load(tmp_path / "t.pt"), tc.load(str(tmp_path / "t.pt"))
    a.add_(1)
    assert b.tolist() == [1.0, 1.0, 1.0] and a.tolist() == [2.0, 2.0, 2.0]


def test_model_state_dict_roundtrip_gives_same_outputs(tmp_path):
    tc.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.BatchNorm1d(8), nn.Linear(8, 2))
    model(tc.randn(5, 4))  # updates the BatchNorm running stats (buffers)
    tc.save(model.state_dict(), tmp_path / "m.pt")
    fresh = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.BatchNorm1d(8), nn.Linear(8, 2))
    fresh.load_state_dict(tc.load(tmp_path / "m.pt"))
    model.eval()
    fresh.eval()
    x = tc.randn(3, 4)
    with tc.no_grad():
        np.testing.assert_array_equal(model(x).numpy(), fresh(x).numpy())


# ---- safety ----------------------------------------------------------------------------------------

class Custom:
    def __init__(self, v):
        self.v = v


def test_arbitrary_objects_need_weights_only_false_and_warn():
    buf = io.BytesIO()
    tc.save({"obj": Custom(3), "w": tc.ones(1)}, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed(.|\n)*Unsupported global: GLOBAL [a-z_.]*test_save_load.Custom was not"):
        tc.load(buf)
    buf.seek(0)
    with pytest.warns(UserWarning, match="only do this for files you trust"):
        out = tc.load(buf, weights_only=False)
    assert out["obj"].v == 3


def test_whole_model_pickle_is_refused_by_default():
    model = nn.Linear(2, 2)
    buf = io.BytesIO()
    tc.save(model, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="state_dict"):
        tc.load(buf)
    buf.seek(0)
    with pytest.warns(UserWarning):
        again = tc.load(buf, weights_only=False)
    assert again.weight.tolist() == model.weight.tolist()


class _Evil:
    def __reduce__(self):
        return (os.system, ("touch EVIL_MARKER",))


def test_malicious_pickle_entry_is_never_executed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tc.save({"x": _Evil()}, tmp_path / "evil.pt")
    with pytest.raises(pickle.UnpicklingError):
        tc.load(tmp_path / "evil.pt")
    assert not (tmp_path / "EVIL_MARKER").exists()


# ---- atomic writes and damaged files -------------------------------------------------------------

def test_crash_mid_save_keeps_previous_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    tc.save({"epoch": 1, "w": tc.ones(4)}, path)
    before = path.read_bytes()
    real = serialization._serialize

    def crash(obj, f):
        real(obj, f)
        f.flush()
        raise KeyboardInterrupt("power cut")

    monkeypatch.setattr(serialization, "_serialize", crash)
    with pytest.raises(KeyboardInterrupt):
        tc.save({"epoch": 2, "w": tc.zeros(4)}, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["ckpt.pt"]  # no temporary file left behind
    assert tc.load(path)["epoch"] == 1


def _saved_bytes():
    buf = io.BytesIO()
    tc.save({"w": tc.arange(100.0), "name": "x"}, buf)
    return buf.getvalue()


@pytest.mark.parametrize("cut", [0, 5, 20, 60, -300, -1])
def test_truncated_files_raise_clear_error(tmp_path, cut):
    data = _saved_bytes()
    (tmp_path / "t.pt").write_bytes(data[:cut])
    with pytest.raises(CheckpointError, match="truncated"):
        tc.load(tmp_path / "t.pt")


@pytest.mark.parametrize("where", ["header", "payload"])
def test_flipped_bytes_are_detected(where):
    data = bytearray(_saved_bytes())
    pos = 50 if where == "header" else len(data) - 10
    data[pos] ^= 0x01
    with pytest.raises(CheckpointError, match="corrupted"):
        tc.load(io.BytesIO(bytes(data)))


def test_foreign_files_raise_clear_errors(tmp_path):
    torch.save({"w": torch.ones(2)}, tmp_path / "torch.pt")
    with pytest.raises(CheckpointError, match="not a tinygrad_course checkpoint.*PyTorch"):
        tc.load(tmp_path / "torch.pt")
    (tmp_path / "notes.txt").write_text("hello, this is text\n" * 10)
    with pytest.raises(CheckpointError, match="not a tinygrad_course checkpoint"):
        tc.load(tmp_path / "notes.txt")
    (tmp_path / "p.pkl").write_bytes(pickle.dumps({"a": 1}))
    with pytest.raises(CheckpointError, match="pickle"):
        tc.load(tmp_path / "p.pkl")
    mangled = _saved_bytes().replace(b"\r\n", b"\n", 1)
    with pytest.raises(CheckpointError, match="line endings"):
        tc.load(io.BytesIO(mangled))


def test_newer_format_version_is_reported():
    data = bytearray(_saved_bytes())
    data[8] = 99
    with pytest.raises(CheckpointError, match="format version 99"):
        tc.load(io.BytesIO(bytes(data)))


def test_map_location(tmp_path):
    tc.save({"w": tc.ones(2)}, tmp_path / "c.pt")
    assert tc.load(tmp_path / "c.pt", map_location="cpu")["w"].device == tc.device("cpu")
    assert tc.load(tmp_path / "c.pt", map_location={"cpu": "cpu"})["w"].device == tc.device("cpu")
    if not tc.cuda.is_available():
        with pytest.raises(RuntimeError, match="map_location='cpu'"):
            tc.load(tmp_path / "c.pt", map_location="cuda")
