"""Build mode, chapter 03's nn.init, Embedding and ModuleList: the learner's functions and methods are what every
layer is initialised, looked up and listed by; a wrong one is not installed and is named."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tinygrad_course as tc
from tinygrad_course import build, seams
from tinygrad_course.build import training_components
from tinygrad_course.build.components import BY_NAME, GPT_PIECES, INIT, for_chapter
from tinygrad_course.build.package import load, save
from tinygrad_course.build import session
from tinygrad_course.build.session import install

from build_helpers import solution_cell

SETUP = "import tinygrad_course as tc\nfrom tinygrad_course import nn\n"
INIT_CELL = solution_cell("03_modules.ipynb", "ex03_4")
GPT_CELL = solution_cell("03_modules.ipynb", "ex03_5")


def _save_cell(folder, cell, names):
    """Save `cell` as every component of the cell that defines `names` (what build.record does)."""
    for component in for_chapter("03"):
        if component.defines in names:
            save(folder, component, cell, [SETUP], "03_modules.ipynb, a test cell")


def _calls(name):
    return next(r for r in build.status() if r.component == name).calls


def test_every_linear_and_conv_is_initialised_by_the_learners_init(tmp_path):
    _save_cell(tmp_path, INIT_CELL, INIT)
    tc.manual_seed(4)
    expected = [p.detach().clone() for p in (*tc.nn.Linear(48, 30).parameters(), *tc.nn.Conv2d(3, 8, 3).parameters())]
    with build.use_learner(tmp_path, quiet=True):
        tc.manual_seed(4)
        got = [*tc.nn.Linear(48, 30).parameters(), *tc.nn.Conv2d(3, 8, 3).parameters()]
        for name in ("init.kaiming_uniform_", "init._calculate_fan_in_and_fan_out", "init.uniform_"):
            assert _calls(name) == 2, name  # two layers, each a weight (kaiming) and a bias (fans, uniform_)
        model = tc.nn.Sequential(tc.nn.Linear(400, 50), tc.nn.ReLU()).apply(training_components.init_weights)
        assert _calls("init_weights") == 3 and float(model[0].bias.abs().sum().item()) == 0.0
    for want, have in zip(expected, got):
        assert np.allclose(have.detach().numpy(), want.numpy(), rtol=1e-6, atol=1e-7)


def test_an_init_without_its_gain_is_not_installed_and_the_reference_draws(tmp_path):
    wrong = INIT_CELL.replace("std = nn.init.calculate_gain(nonlinearity, a) / math.sqrt(", "std = 1 / math.sqrt(")
    assert wrong != INIT_CELL
    _save_cell(tmp_path, wrong, INIT)
    tc.manual_seed(5)
    expected = tc.nn.Linear(48, 30).weight.detach().clone()
    with pytest.warns(UserWarning) as caught:  # one warning per component of the cell, each naming it
        build.use_learner(tmp_path, quiet=True)
    messages = [str(w.message) for w in caught]
    assert len(messages) == len(INIT) and any(re.match(r"(?s)your init\.kaiming_uniform_ \(03_modules.ipynb, cell "
                                                        r"ex03_4\) is not installed: its check failed: .*your bound "
                                                        r"has no gain", m) for m in messages), messages
    tc.manual_seed(5)
    assert tc.equal(tc.nn.Linear(48, 30).weight.detach(), expected)
    assert "init.kaiming_uniform_" not in seams.installed()


def test_a_model_with_a_tied_head_looks_up_and_lists_through_the_learners_modules(tmp_path):
    _save_cell(tmp_path, GPT_CELL, GPT_PIECES)
    with build.use_learner(tmp_path, quiet=True):
        tc.manual_seed(0)
        emb = tc.nn.Embedding(10, 4)
        blocks = tc.nn.ModuleList([tc.nn.Linear(4, 4)]).append(tc.nn.Tanh()).extend([tc.nn.Linear(4, 4)])
        idx = tc.tensor([[1, 3, 3], [0, 9, 1]])
        h = emb(idx)
        for block in blocks:
            h = block(h)
        (h @ emb.weight.T).sum().backward()
        for name in ("Embedding.__init__", "Embedding.reset_parameters", "Embedding.forward", "ModuleList.__init__",
                     "ModuleList.append", "ModuleList.extend", "ModuleList.__iter__"):
            assert _calls(name) >= 1, name
        assert [n for n, _ in blocks.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]
        assert isinstance(blocks[1:], tc.nn.ModuleList) and len(blocks[1:]) == 2
        # a padding row keeps the framework's forward, whose gradient there stays zero (a plain lookup's would be 2)
        padded = tc.nn.Embedding(5, 2, padding_idx=0)
        padded(tc.tensor([0, 0, 3])).sum().backward()
        assert padded.weight.grad[0].abs().sum().item() == 0.0 and padded.weight.grad[3].tolist() == [1.0, 1.0]
    tc.manual_seed(0)
    reference = tc.nn.Embedding(10, 4)
    assert tc.equal(reference.weight.detach(), emb.weight.detach())


def test_an_embedding_forward_of_the_wrong_shape_is_named_and_the_reference_takes_over(tmp_path):
    wrong = re.sub(r"return nn\.functional\.embedding\(.*?self\.sparse\)", "return self.weight[input].sum(-1)", GPT_CELL,
                   flags=re.S)
    assert wrong != GPT_CELL
    _save_cell(tmp_path, wrong, GPT_PIECES)
    install(load(tmp_path), tmp_path)  # as if it had passed its check: the run-time guard is what is tested
    assert "Embedding.forward" in seams.installed() and BY_NAME["Embedding.forward"].pure
    emb = tc.nn.Embedding(6, 3)
    with pytest.warns(UserWarning, match=r"your Embedding.forward \(03_modules.ipynb, a test cell\) raised RuntimeError: "
                                         r"returned shape \(2,\) for input of shape \(2,\), expected \(2, 3\)"):
        out = emb(tc.tensor([4, 1]))
    assert tuple(out.shape) == (2, 3) and "Embedding.forward" not in seams.installed()


MODULE_CELLS = {grade_id: solution_cell("03b_inside_module.ipynb", grade_id)
                for grade_id in ("ex03b_1", "ex03b_2", "ex03b_3", "ex03b_4")}
MODULE_SETUP = SETUP + "from collections import OrderedDict\n"  # the setup cell's: state_dict uses it


def _save_module_cells(folder, **replaced):
    """Save chapter 03b's components, each from its own cell after the earlier ones (what build.record does):
    03b.3's and 03b.4's cells add methods to the Module class of 03b.2's."""
    cells = {**MODULE_CELLS, **replaced}
    order = list(cells)
    for component in for_chapter("03b"):
        earlier = [MODULE_SETUP, *(cells[g] for g in order[:order.index(component.exercise)])]
        save(folder, component, cells[component.exercise], earlier, "03b_inside_module.ipynb, a test cell")


def test_every_parameter_a_layer_makes_is_the_learners_and_their_module_registers_it(tmp_path):
    _save_module_cells(tmp_path)
    with build.use_learner(tmp_path, quiet=True):
        assert {"Parameter.__new__", "Parameter.__repr__", "Module.__setattr__"} <= set(seams.installed())
        tc.manual_seed(0)
        layer = tc.nn.Linear(4, 3)
        assert _calls("Parameter.__new__") == 2 and _calls("Module.__setattr__") >= 2
        assert type(layer.weight) is tc.nn.Parameter and type(layer.bias) is tc.nn.Parameter  # nn's own class
        assert [n for n, _ in layer.named_parameters()] == ["weight", "bias"]  # registered by their __setattr__
        assert layer.weight.is_leaf and layer.weight.requires_grad
        data = tc.ones(2)
        shared = tc.nn.Parameter(data)
        with tc.no_grad():
            data.mul_(5.0)
        assert shared.tolist() == [5.0, 5.0] and shared._version is data._version  # one storage, one counter
        assert repr(shared) == "Parameter containing:\ntensor([5., 5.], requires_grad=True)"
        assert _calls("Parameter.__repr__") == 1
        before = layer.weight.detach().clone()
        tc.optim.SGD(layer.parameters(), lr=0.1).zero_grad()
        layer(tc.ones(2, 4)).sum().backward()
        tc.optim.SGD(layer.parameters(), lr=0.1).step()
        assert not tc.equal(layer.weight.detach(), before)  # the optimizer saw and moved it
    assert "Parameter.__new__" not in seams.installed()


def test_a_parameter_that_copies_its_data_is_not_installed_and_is_named(tmp_path):
    wrong = MODULE_CELLS["ex03b_1"].replace("return _make_subclass(cls, data, requires_grad)",
                                            "return _make_subclass(cls, data.clone(), requires_grad)")
    assert wrong != MODULE_CELLS["ex03b_1"]
    _save_module_cells(tmp_path, ex03b_1=wrong)
    with pytest.warns(UserWarning) as caught:
        build.use_learner(tmp_path, quiet=True)
    messages = [str(w.message) for w in caught]
    assert any(re.match(r"(?s)your Parameter\.__new__ \(03b_inside_module.ipynb, cell ex03b_1\) is not installed: its check "
                        r"failed: .*your Parameter copied the data", m) for m in messages), messages
    assert "Parameter.__new__" not in seams.installed()
    data = tc.ones(2)
    p = tc.nn.Parameter(data)  # the reference: one storage with data
    with tc.no_grad():
        data.add_(1.0)
    assert p.tolist() == [2.0, 2.0]


class Marked(tc.Tensor):
    pass


def test_every_tensor_subclass_is_made_by_the_learners_make_subclass(tmp_path):
    _save_module_cells(tmp_path)
    with build.use_learner(tmp_path, quiet=True):
        assert "Tensor._make_subclass" in seams.installed()
        tc.manual_seed(0)
        layer = tc.nn.Linear(4, 3)  # their Parameter.__new__ calls their own _make_subclass (same file)
        data = tc.arange(4.0)
        made = tc.Tensor._make_subclass(Marked, data[1:], True)  # the framework's name is theirs too
        assert _calls("Tensor._make_subclass") == 1
        assert type(made) is Marked and made.is_leaf and made.requires_grad and made._base is None
        assert made._version is data._version and made.tolist() == [1.0, 2.0, 3.0]
        with pytest.raises(TypeError, match="^Creating a Tensor subclass from a class that does not inherit"):
            tc.Tensor._make_subclass(int, data)
        assert type(layer.weight) is tc.nn.Parameter and layer.weight.requires_grad
    assert "Tensor._make_subclass" not in seams.installed()
    assert isinstance(vars(tc.tensor_base.TensorBase)["_make_subclass"], staticmethod)  # the reference is back


def test_a_make_subclass_with_a_counter_of_its_own_is_not_installed_and_is_named(tmp_path):
    wrong = MODULE_CELLS["ex03b_1"].replace("t._version, t._view_version = data._version, data._version[0]",
                                            "t._version, t._view_version = [data._version[0]], data._version[0]")
    assert wrong != MODULE_CELLS["ex03b_1"]
    _save_module_cells(tmp_path, ex03b_1=wrong)
    with pytest.warns(UserWarning) as caught:
        build.use_learner(tmp_path, quiet=True)
    messages = [str(w.message) for w in caught]
    assert any(re.match(r"(?s)your _make_subclass \(03b_inside_module.ipynb, cell ex03b_1\) is not installed: "
                        r"its check failed: .*_version to be data._version \(one counter\)", m) for m in messages), messages
    assert "Tensor._make_subclass" not in seams.installed()
    data = tc.ones(2)
    assert tc.Tensor._make_subclass(Marked, data)._version is data._version  # the reference


def test_every_parameter_and_submodule_is_registered_by_the_learners_register_methods(tmp_path):
    _save_module_cells(tmp_path)
    with build.use_learner(tmp_path, quiet=True):
        assert {"Module.register_parameter", "Module.register_module"} <= set(seams.installed())
        model = tc.nn.Sequential(tc.nn.Linear(4, 3), tc.nn.Tanh(), tc.nn.Linear(3, 2, bias=False))
        # their __setattr__ hands each weight to their register_parameter (bias=False registers None itself);
        # nn.Sequential adds its modules with add_module, PyTorch's alias of their register_module
        assert _calls("Module.register_parameter") == 4 and _calls("Module.register_module") == 3
        assert [n for n, _ in model.named_parameters()] == ["0.weight", "0.bias", "2.weight"]
        with pytest.raises(KeyError, match=r"raised by your Module\.register_parameter \(03b_inside_module") as error:
            model[0].register_parameter("a.b", tc.nn.Parameter(tc.ones(1)))
        assert error.value.args[0] == 'parameter name can\'t contain "."'  # PyTorch's words, then a note
        with pytest.raises(TypeError, match="^int is not a Module subclass"):
            model.add_module("x", 3)
        with pytest.raises(TypeError, match="parameter name should be a string. Got int"):  # the reference's
            model[0].register_parameter(3, None)
        assert list(model[0]._parameters) == ["weight", "bias"] and list(model._modules) == ["0", "1", "2"]


def test_a_register_parameter_that_takes_a_non_leaf_is_not_installed_and_the_reference_refuses_it(tmp_path):
    wrong = MODULE_CELLS["ex03b_2"].replace("if param is not None and param.grad_fn is not None:", "if False:")
    assert wrong != MODULE_CELLS["ex03b_2"]
    _save_module_cells(tmp_path, ex03b_2=wrong)
    with pytest.warns(UserWarning) as caught:
        build.use_learner(tmp_path, quiet=True)
    messages = [str(w.message) for w in caught]
    assert any(re.match(r"(?s)your Module\.register_parameter \(03b_inside_module.ipynb, cell ex03b_2\) is not installed: "
                        r"its check failed: .*for a p with a grad_fn: expected ValueError", m) for m in messages), messages
    assert "Module.register_parameter" not in seams.installed()
    odd = tc.nn.Parameter(tc.ones(2))
    odd.grad_fn = (tc.ones(2, requires_grad=True) * 2).grad_fn
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor to parameter 'w'"):
        tc.nn.Module().register_parameter("w", odd)


def test_the_walks_and_the_state_methods_added_in_later_cells_are_the_learners(tmp_path):
    """03b.3's and 03b.4's cells add methods to 03b.2's class (`Module.train = train`): each is saved with that
    class (and the methods added before it), checked and installed as nn.Module's."""
    _save_module_cells(tmp_path)
    saved = (tmp_path / "ch03b_module.py").read_text()  # one file per class: the last cell's holds all of it
    assert "class Parameter(tc.Tensor):" in saved and "class Module:" in saved
    assert "Module.named_parameters = named_parameters" in saved and "Module.train = train" in saved
    with build.use_learner(tmp_path, quiet=True):
        walks = {"Module.named_parameters", "Module.named_modules", "Module.state_dict", "Module.load_state_dict",
                 "Module.train", "Module.apply"}
        assert walks <= set(seams.installed())
        model = tc.nn.Sequential(tc.nn.Linear(4, 3), tc.nn.Tanh(), tc.nn.Linear(3, 2))
        assert [n for n, _ in model.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]
        other = tc.nn.Sequential(tc.nn.Linear(4, 3), tc.nn.Tanh(), tc.nn.Linear(3, 2))
        other.load_state_dict(model.state_dict())
        assert tc.equal(other[2].weight, model[2].weight) and not other.eval().training and not other[0].training
        assert other.apply(lambda m: None) is other
        assert all(_calls(name) > 0 for name in walks)


def test_a_cell_that_adds_methods_to_a_class_is_saved_as_those_methods_only():
    """build.record's hook: 03b.2's class cell writes the registration components, 03b.3's cell (functions and
    `Module.x = x` lines) the walks, never the other exercise's methods."""
    wanted = {}
    for c in for_chapter("03b"):
        wanted.setdefault(c.defines, []).append(c)
    for grade_id in ("ex03b_2", "ex03b_3", "ex03b_4"):
        groups = session._cell_groups(session._defined_names(MODULE_CELLS[grade_id]), wanted)
        assert [(name, {c.exercise for c in group}) for name, group in groups] == [("Module", {grade_id})]
    groups = session._cell_groups(session._defined_names(MODULE_CELLS["ex03b_1"]), wanted)
    assert {name: {c.name for c in group} for name, group in groups} == {
        "_make_subclass": {"Tensor._make_subclass"}, "Parameter": {"Parameter.__new__", "Parameter.__repr__"}}
