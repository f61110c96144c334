"""Every public class of `torch.nn.modules.<file>` is reachable at the same path in `tc.nn.modules`: the
framework's class (the same object as `tc.nn.<Name>`), or, for the few PyTorch layers the framework does
not implement, an UnsupportedError that says what to use instead."""
import importlib
import inspect
import pkgutil

import pytest
import torch.nn.modules

import tinygrad_course as tc
from tinygrad_course._unsupported import UnsupportedError


def _torch_classes():
    for info in pkgutil.iter_modules(torch.nn.modules.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"torch.nn.modules.{info.name}")
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and obj.__module__ == module.__name__ and not name.startswith("_"):
                yield info.name, name


PAIRS = sorted(set(_torch_classes()))


def test_the_walk_found_pytorchs_layers():
    assert ("sparse", "Embedding") in PAIRS and ("activation", "MultiheadAttention") in PAIRS
    assert len(PAIRS) > 150


@pytest.mark.parametrize("file,name", PAIRS, ids=[f"{f}.{n}" for f, n in PAIRS])
def test_each_pytorch_class_resolves_at_pytorchs_module_path(file, name):
    module = importlib.import_module(f"tinygrad_course.nn.modules.{file}")
    try:
        cls = getattr(module, name)
    except UnsupportedError as e:
        assert "is not implemented in tinygrad_course. Instead, " in str(e)
        if hasattr(torch.nn, name):
            with pytest.raises(UnsupportedError):
                getattr(tc.nn, name)
        return
    assert inspect.isclass(cls)
    if hasattr(torch.nn, name):
        assert getattr(tc.nn, name) is cls


def test_the_new_layers_behave_as_pytorchs():
    ours = tc.nn.ChannelShuffle(2)(tc.arange(16.0).view(1, 4, 2, 2))
    assert ours.tolist() == torch.nn.ChannelShuffle(2)(torch.arange(16.0).view(1, 4, 2, 2)).tolist()
    assert repr(tc.nn.ChannelShuffle(2)) == repr(torch.nn.ChannelShuffle(2))
    c = tc.nn.modules.container.Container(a=tc.nn.Linear(2, 3))
    assert [n for n, _ in c.named_children()] == ["a"]
    assert isinstance(tc.nn.modules.loss.NLLLoss2d(), tc.nn.NLLLoss)
    from tinygrad_course.nn.modules.utils import _pair, consume_prefix_in_state_dict_if_present
    assert _pair(3) == (3, 3) and _pair([1, 2]) == (1, 2)
    sd = {"module.w": 1, "b": 2}
    consume_prefix_in_state_dict_if_present(sd, "module.")
    assert sd == {"w": 1, "b": 2}
