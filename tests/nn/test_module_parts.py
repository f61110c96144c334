"""`nn.Module` is composed of its registry, state-dict and hook parts; the composed class keeps PyTorch's
method set and the `nn.modules.module.Module` import path."""
import inspect

import pytest
import torch

import tinygrad_course as tc
from tinygrad_course.nn.modules import module, module_hooks, module_registry, module_state

# Module's public methods, as PyTorch names them (the subset the course implements).
METHODS = ["add_module", "apply", "buffers", "children", "cpu", "cuda", "double", "eval", "extra_repr", "float",
           "forward", "get_parameter", "get_submodule", "half", "load_state_dict", "modules", "named_buffers",
           "named_children", "named_modules", "named_parameters", "parameters", "register_backward_hook",
           "register_buffer", "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
           "register_full_backward_pre_hook", "register_module", "register_parameter", "requires_grad_",
           "share_memory", "state_dict", "to", "train", "zero_grad"]


def test_import_paths_name_one_class():
    assert tc.nn.Module is module.Module is tc.nn.modules.Module
    assert module.__all__ == ["Module"]


def test_public_methods_are_pytorchs():
    ours = sorted(n for n in dir(tc.nn.Module) if not n.startswith("_"))
    assert ours == METHODS
    for name in METHODS:
        assert hasattr(torch.nn.Module, name), name


@pytest.mark.parametrize("name", ["state_dict", "load_state_dict", "register_forward_hook", "named_parameters",
                                  "to", "register_buffer", "zero_grad", "apply"])
def test_parameter_names_and_defaults_match_pytorch(name):
    ours = inspect.signature(getattr(tc.nn.Module, name)).parameters
    theirs = inspect.signature(getattr(torch.nn.Module, name)).parameters
    for pname, p in ours.items():
        if pname in theirs and p.default is not inspect.Parameter.empty:
            assert p.default == theirs[pname].default, (name, pname)


def test_each_part_owns_its_concept():
    parts = {module_registry.ModuleRegistry: {"register_parameter", "register_buffer", "add_module", "parameters",
                                              "named_modules", "get_submodule", "__setattr__", "__getattr__"},
             module_state.ModuleStateDict: {"state_dict", "load_state_dict", "_load_from_state_dict"},
             module_hooks.ModuleHooks: {"__call__", "register_forward_hook", "register_full_backward_hook"},
             module.Module: {"train", "eval", "apply", "to", "__repr__", "__init__"}}
    for cls, names in parts.items():
        for name in names:
            assert name in vars(cls), (cls.__name__, name)
            assert getattr(tc.nn.Module, name) is getattr(cls, name), name


def test_submodule_check_accepts_modules_and_rejects_other_objects():
    parent = tc.nn.Module()
    parent.add_module("child", tc.nn.Linear(2, 2))
    parent.other = tc.nn.ReLU()
    assert [n for n, _ in parent.named_children()] == ["child", "other"]
    with pytest.raises(TypeError) as theirs:
        torch.nn.Module().add_module("bad", object())
    with pytest.raises(TypeError) as ours:
        parent.add_module("bad", object())
    assert str(ours.value) == str(theirs.value)
