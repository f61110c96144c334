"""Catalogue of wrong answers, chapter 03b (inside Module): each realistic mistake in Parameter and Module's
registration, walks, state and modes fails with a message that names it, the hint waits for a second failure,
and the unsolved stub fails."""
from collections import OrderedDict

import pytest

import tinygrad_course as tc
from tinygrad_course import nn

from .wrong_answers import assert_names_mistake, catalogue_tests, solution

make_subclass, Parameter, Module = solution("03b", "_make_subclass", "Parameter", "Module")


def module(**wrong):
    """The released (Parameter, Module) of chapter 03b with some replaced by wrong ones."""
    right = {"Parameter": Parameter, "Module": Module}
    return tuple(wrong.get(name, obj) for name, obj in right.items())


class ParameterCopying(tc.Tensor):
    def __new__(cls, data=None, requires_grad=True):
        data = tc.empty(0) if data is None else data
        return tc.Tensor._make_subclass(cls, data.clone(), requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


class ParameterWithoutGrad(ParameterCopying):
    def __new__(cls, data=None, requires_grad=True):
        return tc.Tensor._make_subclass(cls, tc.empty(0) if data is None else data)


class ParameterAsPlainTensor(ParameterCopying):
    def __new__(cls, data=None, requires_grad=True):
        return (tc.empty(0) if data is None else data).detach().requires_grad_(requires_grad)


class ParameterReprOnOneLine(ParameterCopying):
    def __new__(cls, data=None, requires_grad=True):
        return tc.Tensor._make_subclass(cls, tc.empty(0) if data is None else data, requires_grad)

    def __repr__(self):
        return "Parameter containing: " + tc.Tensor.__repr__(self)


def subclass_copying(cls, data, require_grad=False):
    made = make_subclass(cls, data.clone(), require_grad)  # its own storage: data's changes do not show
    return made


def subclass_with_own_counter(cls, data, require_grad=False):
    made = make_subclass(cls, data, require_grad)
    made._version, made._view_version = [data._version[0]], data._version[0]  # a counter of its own
    return made


def subclass_by_detach(cls, data, require_grad=False):
    made = data.detach()  # shares everything, but stays a view of data and of class Tensor
    made.requires_grad_(require_grad)
    return made


def subclass_without_checks(cls, data, require_grad=False):
    made = object.__new__(cls)
    made._data, made.dtype, made._device, made._name = data._data, data.dtype, data._device, data._name
    made._version, made._view_version = data._version, data._version[0]
    made._requires_grad, made.grad, made.grad_fn, made._output_nr = bool(require_grad), None, None, 0
    made._base = made._grad_acc = made._hooks = None
    return made


class ModuleOfFrameworkParameters(Module):
    def __setattr__(self, name, value):
        if isinstance(value, nn.Parameter):  # the framework's class, not the cell's own Parameter
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        else:
            object.__setattr__(self, name, value)


class NamesWithoutPrefix(Module):
    def named_parameters(self, prefix="", recurse=True):
        for _, module in self.named_modules() if recurse else [("", self)]:
            for name, p in module._parameters.items():
                yield name, p


class SharedTwice(Module):
    def named_parameters(self, prefix="", recurse=True):
        for module_prefix, module in self.named_modules(prefix=prefix) if recurse else [(prefix, self)]:
            for name, p in module._parameters.items():
                if p is not None:
                    yield (module_prefix + "." if module_prefix else "") + name, p

    def named_modules(self, memo=None, prefix=""):
        yield prefix, self
        for name, module in self._modules.items():
            yield from module.named_modules(None, prefix + ("." if prefix else "") + name)


class StateWithEveryBuffer(Module):
    def state_dict(self, destination=None, prefix="", keep_vars=False):
        destination = OrderedDict() if destination is None else destination
        for table in (self._parameters, self._buffers):
            for name, t in table.items():
                destination[prefix + name] = t if keep_vars else t.detach()
        for name, module in self._modules.items():
            module.state_dict(destination, prefix + name + ".", keep_vars)
        return destination


class TrainHereOnly(Module):
    def train(self, mode=True):
        self.training = mode
        return self


class GetattrWithBareMessage(Module):
    def __getattr__(self, name):
        for table in (self._parameters, self._buffers, self._modules):
            if name in table:
                return table[name]
        raise AttributeError(name)


class GetattrThroughSelf(Module):
    def __getattr__(self, name):
        for table in (self._parameters, self._buffers, self._modules):
            if name in table:
                return table[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")


class WithAHelperMethod(Module):
    def _tables(self):
        return self._parameters, self._buffers, self._modules


class SetattrSkippingRegister(Module):
    def __setattr__(self, name, value):
        if isinstance(value, Parameter):  # written into the table here: register_parameter's checks never run
            self.__dict__.pop(name, None)
            self._parameters[name] = value
        else:
            super().__setattr__(name, value)


class RegisterWithoutChecks(Module):
    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._parameters[name] = param


class RegisterModuleOverAnAttribute(Module):
    def register_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module


class RegisterWithBareMessages(Module):
    def register_parameter(self, name, param):
        if "." in name or name == "" or (hasattr(self, name) and name not in self._parameters):
            raise KeyError(name)
        if param is not None and (not isinstance(param, Parameter) or param.grad_fn is not None):
            raise TypeError(name)
        self._parameters[name] = param


class ModulesWithoutSelf(Module):
    def named_modules(self, memo=None, prefix=""):
        for name, module in self._modules.items():
            yield prefix + ("." if prefix else "") + name, module
            yield from module.named_modules(memo, prefix + ("." if prefix else "") + name)


class LoadIgnoringStrict(Module):
    def load_state_dict(self, state_dict, strict=True):
        own = self.state_dict(keep_vars=True)
        with tc.no_grad():
            for key, tensor in own.items():
                if key in state_dict:
                    tensor.copy_(state_dict[key])
        return [k for k in own if k not in state_dict], [k for k in state_dict if k not in own]


class ApplySelfFirst(Module):
    def apply(self, fn):
        fn(self)
        for module in self.children():
            module.apply(fn)
        return self


CATALOGUE = [
    ("03b.1", (make_subclass, ParameterCopying), ["your Parameter copied the data"]),
    ("03b.1", (make_subclass, ParameterWithoutGrad), ["Parameter(data).requires_grad to be True",
                                                      "the loss does not go down"]),
    ("03b.1", (make_subclass, ParameterAsPlainTensor), ["type(Parameter(data)) to be your Parameter (got Tensor)"]),
    ("03b.1", (make_subclass, ParameterReprOnOneLine), ["repr(Parameter(data))",
                                                        "the tensor's repr starts on the line after"]),
    ("03b.1", (subclass_copying, Parameter), ["the subclass copied the data"]),
    ("03b.1", (subclass_with_own_counter, Parameter), ["._version to be data._version (one counter)",
                                                       "saved_tensors would not notice"]),
    ("03b.1", (subclass_by_detach, Parameter), ["type(_make_subclass(Marked, data)) to be Marked (got Tensor)"]),
    ("03b.1", (subclass_without_checks, Parameter), ["_make_subclass(Marked, [1.0, 2.0]) to raise TypeError",
                                                     "got AttributeError"]),
    ("03b.2", module(Module=ModuleOfFrameworkParameters), ["the parameters stayed plain attributes in __dict__"]),
    ("03b.3", module(Module=NamesWithoutPrefix), ["the names have no prefix"]),
    ("03b.3", module(Module=SharedTwice), ["a shared layer's parameters were listed twice"]),
    ("03b.4", module(Module=StateWithEveryBuffer), ["the non-persistent buffer 'cache' is in it"]),
    ("03b.4", module(Module=TrainHereOnly), ["train() to walk the submodules with self.children()"]),
    ("03b.2", module(Module=GetattrWithBareMessage), ["the message of that AttributeError", "got 'missing'"]),
    ("03b.2", module(Module=GetattrThroughSelf), ["recursed too deeply"]),
    ("03b.2", module(Module=WithAHelperMethod), ["no method nn.Module does not have (yours: _tables)"]),
    ("03b.2", module(Module=SetattrSkippingRegister), ["your __setattr__ wrote _parameters itself"]),
    ("03b.2", module(Module=RegisterWithoutChecks), ["layer.register_parameter('a.b', p)",
                                                    "expected KeyError to be raised, but it returned None"]),
    ("03b.2", module(Module=RegisterModuleOverAnAttribute), ["layer.register_module('forward', m) (forward is a method)",
                                                            "expected KeyError to be raised"]),
    ("03b.2", module(Module=RegisterWithBareMessages), ["the message of layer.register_parameter('a.b', p)'s KeyError",
                                                       "got 'a.b'"]),
    ("03b.3", module(Module=ModulesWithoutSelf), ["names of net.named_modules()"]),
    ("03b.4", module(Module=LoadIgnoringStrict), ["load_state_dict with a key missing and one unexpected",
                                                  "expected RuntimeError"]),
    ("03b.4", module(Module=ApplySelfFirst), ["net.apply(fn) to call fn on the children first"]),
]


def _name(exercise, wrong):
    if exercise == "03b.1":
        return wrong[1].__name__ if wrong[0] is make_subclass else wrong[0].__name__
    return next(w.__name__ for w, right in zip(wrong, module()) if w is not right)


@pytest.mark.parametrize("exercise, wrong, phrases", CATALOGUE, ids=[f"{e}-{_name(e, w)}" for e, w, _ in CATALOGUE])
def test_a_wrong_answer_fails_naming_its_mistake(exercise, wrong, phrases):
    assert_names_mistake(exercise, wrong, *phrases)


NAMES = {"03b.1": ("_make_subclass", "Parameter"), "03b.2": ("Parameter", "Module"), "03b.3": ("Parameter", "Module"),
         "03b.4": ("Parameter", "Module")}


test_the_stub_fails, test_every_exercise_has_two_wrong_answers = catalogue_tests(NAMES, CATALOGUE, "03b")
