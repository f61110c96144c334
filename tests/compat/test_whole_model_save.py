"""Whole-model `tc.save(model)` / `tc.load`: PyTorch's class paths in the pickle, the weights-only
allow-list (`add_safe_globals`, `safe_globals`, `get_safe_globals`) and PyTorch's refusal message."""
import io
import pickle
import pickletools

import numpy as np
import pytest
import torch

import tinygrad_course as tc
from tinygrad_course.serialization.pickling import dumps


@pytest.fixture(autouse=True)
def _clean_allow_list():
    tc.serialization.clear_safe_globals()
    yield
    tc.serialization.clear_safe_globals()


def _model(ns):
    nn = ns.nn
    return nn.Sequential(nn.Embedding(5, 4), nn.Linear(4, 4), nn.ReLU(), nn.LayerNorm(4), nn.Dropout(0.1),
                         nn.MultiheadAttention(4, 2), nn.LSTM(4, 3), nn.Conv2d(1, 2, 3), nn.BatchNorm1d(3), nn.GELU())


def _globals(data: bytes) -> set:
    names, strings = set(), []
    for op, arg, _ in pickletools.genops(data):
        if op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE"):
            strings.append(arg)
        if op.name == "GLOBAL":
            names.add(arg.replace(" ", "."))
        if op.name == "STACK_GLOBAL":
            names.add(".".join(strings[-2:]))
    return {n for n in names if n.startswith("torch.nn.modules") or n.startswith("torch.nn.parameter")}


def test_pickled_class_paths_are_pytorchs():
    ours = _globals(dumps(_model(tc), lambda t: 0))
    theirs = _globals(pickle.dumps(_model(torch)))
    assert {n for n in theirs if "parameter" not in n} <= ours
    assert "torch.nn.modules.sparse.Embedding" in ours and "torch.nn.modules.activation.MultiheadAttention" in ours
    assert not any(n.startswith("tinygrad_course.nn.modules") for n in ours)


def test_whole_model_round_trip_gives_the_same_outputs(tmp_path):
    model = _model(tc).eval()
    tc.save(model, tmp_path / "m.pt")
    with pytest.warns(UserWarning, match="only do this for files you trust"):
        again = tc.load(tmp_path / "m.pt", weights_only=False)
    assert type(again[1]) is tc.nn.Linear and isinstance(again[1].weight, tc.nn.Parameter)
    assert repr(again) == repr(model)
    x = tc.randint(0, 5, (2, 3))
    np.testing.assert_array_equal(again[:4](x).detach().numpy(), model[:4](x).detach().numpy())
    shared = tc.nn.Linear(2, 2)
    pair = tc.nn.Sequential(shared, shared)
    buf = io.BytesIO()
    tc.save(pair, buf)
    buf.seek(0)
    with pytest.warns(UserWarning):
        p2 = tc.load(buf, weights_only=False)
    assert p2[0] is p2[1] and p2[0].weight is p2[1].weight


def _message(ns, obj, buf_fn):
    buf = io.BytesIO()
    ns.save(obj, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError) as info:
        buf_fn(ns, buf)
    return str(info.value).replace("\x1b[1m", "").replace("\x1b[0m", "").replace("tc.", "torch.").split("\nHint:")[0]


def test_weights_only_refusal_names_the_class_like_pytorch():
    load = lambda ns, buf: ns.load(buf)
    assert _message(tc, _model(tc), load) == _message(torch, _model(torch), load)


class Config:
    def __init__(self, lr):
        self.lr = lr


def test_allow_list_with_add_safe_globals_and_the_context_manager():
    model = tc.nn.Sequential(tc.nn.Linear(2, 3), tc.nn.Tanh())
    buf = io.BytesIO()
    tc.save({"model": model, "cfg": Config(0.1), "epoch": 3}, buf)
    needed = [tc.nn.Sequential, tc.nn.Linear, tc.nn.Tanh]
    with tc.serialization.safe_globals(needed):
        assert tc.serialization.get_safe_globals() == needed
        buf.seek(0)
        with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL [\w.]*test_whole_model_save.Config was not an "
                                                         r"allowed global by default"):
            tc.load(buf)
    assert tc.serialization.get_safe_globals() == []
    tc.serialization.add_safe_globals(needed + [Config])
    buf.seek(0)
    ckpt = tc.load(buf)
    assert ckpt["cfg"].lr == 0.1 and ckpt["epoch"] == 3
    np.testing.assert_array_equal(ckpt["model"][0].weight.detach().numpy(), model[0].weight.detach().numpy())
    # the same sequence with PyTorch
    tbuf = io.BytesIO()
    torch.save({"model": torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Tanh()), "cfg": Config(0.1)}, tbuf)
    tneeded = [torch.nn.Sequential, torch.nn.Linear, torch.nn.Tanh]
    with torch.serialization.safe_globals(tneeded):
        tbuf.seek(0)
        with pytest.raises(pickle.UnpicklingError, match="test_whole_model_save.Config was not an allowed global"):
            torch.load(tbuf)
    with torch.serialization.safe_globals(tneeded + [Config]):
        tbuf.seek(0)
        assert torch.load(tbuf)["cfg"].lr == 0.1


def test_state_dict_and_plain_containers_need_no_allow_list():
    model = tc.nn.LSTM(3, 4)
    opt = tc.optim.Adam(model.parameters())
    model(tc.randn(2, 1, 3))[0].sum().backward()
    opt.step()
    buf = io.BytesIO()
    tc.save({"model": model.state_dict(), "opt": opt.state_dict(), "s": {1, 2}, "t": (tc.Size([2]), tc.float64),
             "d": tc.device("cpu")}, buf)
    buf.seek(0)
    back = tc.load(buf)
    assert back["s"] == {1, 2} and back["t"] == (tc.Size([2]), tc.float64)
    model.load_state_dict(back["model"])
    opt.load_state_dict(back["opt"])


class _Evil:
    def __reduce__(self):
        import os
        return (os.system, ("echo pwned",))


def test_allow_list_does_not_open_the_door_to_other_globals():
    tc.serialization.add_safe_globals([tc.nn.Linear])
    buf = io.BytesIO()
    tc.save({"x": _Evil()}, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL (posix|os|nt).system was not an allowed global"):
        tc.load(buf)


def test_the_allow_list_pytorch_needs_for_attention_loads_ours_too():
    def names(ns):
        nn = ns.nn
        return [nn.Sequential, nn.Linear, nn.MultiheadAttention, nn.modules.linear.NonDynamicallyQuantizableLinear]

    for ns in (tc, torch):
        buf = io.BytesIO()
        ns.save(ns.nn.Sequential(ns.nn.Linear(4, 4), ns.nn.MultiheadAttention(4, 2)), buf)
        with ns.serialization.safe_globals(names(ns)[:-1]):
            buf.seek(0)
            with pytest.raises(pickle.UnpicklingError, match="GLOBAL torch.nn.modules.linear."
                                                             "NonDynamicallyQuantizableLinear was not an allowed"):
                ns.load(buf)
        with ns.serialization.safe_globals(names(ns)):
            buf.seek(0)
            m = ns.load(buf)
        assert type(m[1].out_proj).__name__ == "NonDynamicallyQuantizableLinear"
        assert isinstance(m[1].out_proj, ns.nn.Linear) and not hasattr(ns.nn, "NonDynamicallyQuantizableLinear")


def test_the_refusal_of_a_twin_class_suggests_a_name_the_program_can_write():
    """The file names nn.Sequential by PyTorch's path; the refusal suggests the framework's class under `tc.`
    (no `torch` in the learner's namespace), and allow-listing exactly that gets past it."""
    import re

    buf = io.BytesIO()
    tc.save(tc.nn.Sequential(tc.nn.Linear(2, 2)), buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError) as info:
        tc.load(buf)
    message = str(info.value)
    assert "GLOBAL torch.nn.modules.container.Sequential was not an allowed global" in message
    suggested = re.search(r"add_safe_globals\(\[([^\]]+)\]\)", message).group(1)
    assert suggested == "tc.nn.modules.container.Sequential" and "by PyTorch's path" in message
    with tc.serialization.safe_globals([eval(suggested, {"tc": tc})]):
        buf.seek(0)
        with pytest.raises(pickle.UnpicklingError, match="GLOBAL torch.nn.modules.linear.Linear"):
            tc.load(buf)
