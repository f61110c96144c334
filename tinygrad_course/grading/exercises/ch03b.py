"""Chapter 03b (inside Module): checks for the learner's `Parameter` (03b.1) and the machinery of `nn.Module`
written as a class `Module`: registration (03b.2), the walks over the tree (03b.3), and state_dict,
load_state_dict, train/eval, apply and zero_grad (03b.4). Each check builds small modules of the learner's
`Parameter`s on their `Module`; build mode then runs each method inside the framework against the reference.
"""
import copy
from collections import OrderedDict

import numpy as np

import tinygrad_course as tc

from ..registry import exercise

# --- 03b.1 ------------------------------------------------------------------------------------------------
# the methods each exercise adds to the learner's Module, in the exercises' order
_STAGES = (
    ("03b.2", ("__init__", "__setattr__", "__getattr__", "register_parameter", "register_module", "register_buffer")),
    ("03b.3", ("named_parameters", "parameters", "named_children", "children", "named_modules", "modules")),
    ("03b.4", ("state_dict", "load_state_dict", "train", "eval", "apply", "zero_grad")),
)


class _Marked(tc.Tensor):
    """A subclass of Tensor for the check of _make_subclass (any subclass can be made over a tensor)."""


def _message(call):
    """The exception `call()` raises (None when it returns)."""
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the learner's code may raise anything
        return exc
    return None


def _make_subclass(t, make_subclass):
    """The learner's _make_subclass: an object of class cls over data's storage and version counter, a fresh leaf,
    PyTorch's errors for bad input; compared with tc.Tensor._make_subclass on the same input."""
    t.true(callable(make_subclass), "_make_subclass to be a function _make_subclass(cls, data, require_grad=False)")
    data = tc.tensor([[1.0, 2.0], [3.0, 4.0]])
    made = make_subclass(_Marked, data)
    t.true(type(made) is _Marked, f"type(_make_subclass(Marked, data)) to be Marked (got {type(made).__name__})",
           why="the object must be made of class cls: nn.Parameter's type is what Module.__setattr__ looks at",
           hint="t = object.__new__(cls) makes an empty object of class cls (no __init__ runs); fill its fields")
    t.equal(made.tolist(), [[1.0, 2.0], [3.0, 4.0]], what="the values of _make_subclass(Marked, data)")
    t.true(made.dtype is data.dtype and made.device == data.device,
           f"_make_subclass(Marked, data) to keep data's dtype and device (got {made.dtype}, {made.device})")
    t.true(not made.requires_grad and made.grad is None and made.grad_fn is None,
           "_make_subclass(Marked, data) to be a leaf that does not require grad (require_grad=False by default)")
    with tc.no_grad():
        data.mul_(10.0)
    t.equal(made.tolist(), [[10.0, 20.0], [30.0, 40.0]], what="_make_subclass(Marked, data) after data.mul_(10.0)",
            why="the subclass copied the data: it must be data's storage seen as another class (one array), so "
                "nn.Parameter(t) costs no memory and sees every change of t",
            hint="t._data = data._data: the same array object, no copy")
    t.true(made._version is data._version, "_make_subclass(Marked, data)._version to be data._version (one counter)",
           why="the version counter belongs to the storage: an in-place change through either tensor must show in "
               "both, or saved_tensors would not notice that a parameter was changed after forward",
           hint="t._version = data._version (the same list), t._view_version = data._version[0]")
    x = tc.ones(3, requires_grad=True)
    computed = make_subclass(_Marked, x * 2, True)
    t.true(computed.requires_grad and computed.is_leaf and computed.grad_fn is None,
           "_make_subclass(Marked, x * 2, True) to be a leaf that requires grad (grad_fn None, requires_grad True)",
           why="the new tensor is cut from data's graph: gradients stop at it and accumulate in its .grad",
           hint="t._requires_grad = bool(require_grad); t.grad = t.grad_fn = None; t._output_nr = 0")
    (computed * 3).sum().backward()
    t.true(computed.grad is not None and computed.grad.tolist() == [3.0, 3.0, 3.0] and x.grad is None,
           "(_make_subclass(Marked, x * 2, True) * 3).sum().backward() to give it .grad [3., 3., 3.] and x none",
           hint="a fresh leaf has no gradient node or hooks yet: t._grad_acc = t._hooks = None")
    base = tc.arange(4.0)
    view = make_subclass(_Marked, base[1:])
    t.true(view._base is None, "_make_subclass(Marked, base[1:])._base to be None (a tensor of its own, not a view)",
           hint="t._base = None")
    for what, call in (("_make_subclass(Marked, [1.0, 2.0])", lambda f: f(_Marked, [1.0, 2.0])),
                       ("_make_subclass(int, tc.ones(2))", lambda f: f(int, tc.ones(2))),
                       ("_make_subclass('Marked', tc.ones(2))", lambda f: f("Marked", tc.ones(2))),
                       ("_make_subclass(Marked, tc.arange(3), True)", lambda f: f(_Marked, tc.arange(3), True))):
        want = _message(lambda: call(tc.Tensor._make_subclass))
        mine = _message(lambda: call(make_subclass))
        t.true(type(mine) is type(want), f"{what} to raise {type(want).__name__} (got "
               f"{'no error' if mine is None else type(mine).__name__})",
               why="bad input gets PyTorch's error before anything is made",
               hint="check cls (a type, a subclass of tc.Tensor), data (a tensor) and require_grad (float data "
                    "only) first")
        words = str(want).split(". Hint")[0]
        t.true(str(mine).startswith(words), f"the message of {what} to start with PyTorch's {words!r} "
               f"(got {str(mine)!r})")


def _parameter(t, Parameter):
    """The learner's Parameter: a Tensor subclass whose __new__ wraps a tensor without copying it, as a leaf that
    requires grad, printed as PyTorch prints one."""
    t.true(isinstance(Parameter, type) and issubclass(Parameter, tc.Tensor), "Parameter to be a subclass of "
           "tc.Tensor", hint="class Parameter(tc.Tensor): a parameter is a tensor, and every op takes it as one")
    own = {name for klass in Parameter.__mro__[:-1] if not klass.__module__.startswith("tinygrad_course")
           for name in vars(klass)}
    t.true("__new__" in own, "your Parameter to define __new__(cls, data=None, requires_grad=True)",
           why="a Tensor subclass is made in __new__: it returns the new object, __init__ only fills one in",
           hint="def __new__(cls, data=None, requires_grad=True): return _make_subclass(cls, data, requires_grad)")
    extra = sorted(name for name in own if callable(getattr(Parameter, name, None)) and not hasattr(tc.nn.Parameter,
                                                                                                    name))
    t.true(not extra, f"no method nn.Parameter does not have (yours: {', '.join(extra)})",
           why="inside the framework every parameter is an nn.Parameter, which has no such method",
           hint="write a helper as a function outside the class, or inline it")
    data = tc.tensor([[1.0, 2.0], [3.0, 4.0]])
    p = Parameter(data)
    t.true(type(p) is Parameter, f"type(Parameter(data)) to be your Parameter (got {type(p).__name__})",
           why="a plain tensor: Module.__setattr__ cannot tell it from any other tensor attribute, so parameters() "
               "would not list it and the optimizer would never update it",
           hint="_make_subclass(cls, data, requires_grad) makes an object of class cls over data")
    t.true(p.requires_grad, "Parameter(data).requires_grad to be True (the default requires_grad=True)",
           why="a parameter that does not require grad gets no .grad in backward(): the optimizer skips it and the "
               "loss does not go down",
           hint="pass requires_grad on: _make_subclass(cls, data, requires_grad)")
    t.equal(p.detach().tolist(), [[1.0, 2.0], [3.0, 4.0]], what="the values of Parameter(tc.tensor([[1., 2.], [3., "
            "4.]]))")
    with tc.no_grad():
        data.mul_(10.0)
    t.equal(p.detach().tolist(), [[10.0, 20.0], [30.0, 40.0]], what="Parameter(data) after data.mul_(10.0)",
            why="your Parameter copied the data: an nn.Parameter is the tensor it wraps (one storage), so "
                "nn.Parameter(t) costs no memory and sees every change of t",
            hint="_make_subclass(cls, data, requires_grad) shares data's storage: no clone(), no tc.tensor()")
    x = tc.ones(3, requires_grad=True)
    computed = Parameter(x * 2)
    t.true(computed.is_leaf and computed.grad_fn is None, "Parameter(x * 2) to be a leaf (grad_fn None)",
           why="a parameter is where gradients stop and accumulate; one with a grad_fn would send them back into x",
           hint="_make_subclass cuts the new tensor from data's graph: do not return data itself")
    t.true(not Parameter(tc.zeros(2), requires_grad=False).requires_grad,
           "Parameter(tc.zeros(2), requires_grad=False).requires_grad to be False (a frozen parameter)")
    none = Parameter()
    t.true(type(none) is Parameter and tuple(none.shape) == (0,) and none.requires_grad,
           "Parameter() to be an empty parameter of shape (0,) that requires grad",
           hint="data=None means tc.empty(0), as PyTorch's")
    want = "Parameter containing:\n" + repr(tc.tensor([[10.0, 20.0], [30.0, 40.0]], requires_grad=True))
    mine = repr(p)
    t.equal(mine, want, what="repr(Parameter(data))",
            why="the tensor's repr starts on the line after 'Parameter containing:'" if mine.startswith(
                "Parameter containing:") and not mine.startswith("Parameter containing:\n") else None,
            hint='"Parameter containing:\\n" + super().__repr__(): the tensor\'s own repr after that line')


def _toy_modules(Parameter, Module):
    """Two small layers built on the learner's Module and Parameter: an affine map with buffers, and a net of two
    of them."""

    class Affine(Module):
        def __init__(self, n_in, n_out):
            super().__init__()
            self.weight = Parameter(tc.randn(n_out, n_in))
            self.bias = Parameter(tc.zeros(n_out))
            self.register_buffer("calls", tc.zeros(()))
            self.register_buffer("cache", tc.zeros(n_out), persistent=False)
            self.scale = 2.0

        def forward(self, x):
            return (x @ self.weight.T + self.bias) * self.scale

    class Net(Module):
        def __init__(self):
            super().__init__()
            self.first = Affine(3, 4)
            self.second = Affine(4, 2)

        def forward(self, x):
            return self.second(self.first(x).tanh())

    return Affine, Net


def _registration(t, Module, Affine):
    fresh = Module()
    t.true(fresh.__dict__.get("training") is True and all(
        fresh.__dict__.get(k) == {} for k in ("_parameters", "_buffers", "_modules"))
        and fresh.__dict__.get("_non_persistent_buffers_set") == set(),
        "Module() to have training=True and empty _parameters, _buffers, _modules and _non_persistent_buffers_set "
        "in its __dict__", hint="set them with object.__setattr__(self, name, value) in __init__: your own "
                                "__setattr__ needs the tables before it can run")
    layer = Affine(3, 4)
    params = layer.__dict__.get("_parameters", {})
    t.equal(sorted(params), ["bias", "weight"], what="the keys of layer._parameters after self.weight = "
            "Parameter(...) and self.bias = Parameter(...)",
            why="the parameters stayed plain attributes in __dict__ (does __setattr__ test for your own Parameter "
                "class? the check builds the layers with it)" if "weight" in layer.__dict__ else None,
            hint="in __setattr__, put a Parameter (your class) into self._parameters[name] instead of __dict__")
    t.true("weight" not in layer.__dict__ and layer.__dict__.get("scale") == 2.0,
           "a parameter only in _parameters, and a plain value (self.scale = 2.0) in __dict__")
    t.true(layer.weight is params["weight"], "layer.weight to be the parameter in layer._parameters",
           hint="__getattr__ runs only when normal lookup fails: look the name up in _parameters, _buffers, _modules")
    t.equal(sorted(layer.__dict__.get("_buffers", {})), ["cache", "calls"], what="the keys of layer._buffers",
            hint="register_buffer(name, tensor, persistent) stores the tensor in self._buffers[name]")
    t.equal(layer.__dict__.get("_non_persistent_buffers_set"), {"cache"}, what="layer._non_persistent_buffers_set",
            hint="a buffer registered with persistent=False goes into self._non_persistent_buffers_set")
    error = t.raises(AttributeError, lambda: layer.missing, what="layer.missing (no such attribute)",
                     hint="end __getattr__ with raise AttributeError(...): hasattr() and getattr(obj, name, default) "
                          "rely on it")
    t.equal(str(error), "'Affine' object has no attribute 'missing'", what="the message of that AttributeError",
            hint="f\"'{type(self).__name__}' object has no attribute '{name}'\", Python's own wording")
    copied = copy.deepcopy(layer)
    t.true(list(copied.__dict__.get("_parameters", {})) == ["weight", "bias"] and copied.weight is not layer.weight,
           "copy.deepcopy(layer) to give a layer with its own parameters under the same names",
           hint="copying builds the object without calling __init__: __getattr__ must read the tables through "
                "self.__dict__.get(...), which works even before they exist")
    layer.bias = None
    t.true("bias" in layer._parameters and layer._parameters["bias"] is None and layer.bias is None,
           "layer.bias = None to keep 'bias' in _parameters with the value None (as PyTorch's)",
           hint="a name already in _parameters keeps its place: None is allowed, another value is a TypeError")
    t.raises(TypeError, setattr, layer, "weight", tc.ones(4, 3), what="layer.weight = tc.ones(4, 3) (a plain tensor "
             "for a parameter's name)", hint="raise TypeError: PyTorch refuses anything but a Parameter or None there")
    layer.calls = tc.ones(())
    t.true(layer._buffers["calls"].item() == 1.0 and "calls" not in layer.__dict__,
           "layer.calls = tc.ones(()) to replace the buffer in _buffers", hint="a name in _buffers takes a new tensor")
    t.raises(AttributeError, lambda: Module.__new__(Module).register_buffer("x", tc.ones(1)),
             what="register_buffer before __init__ ran", hint="without self.__dict__['_buffers'] raise AttributeError("
                                                              "'cannot assign buffer before Module.__init__() call')")


def _registering(t, Parameter, Module, Affine):
    """register_parameter and register_module with PyTorch's checks, and __setattr__ handing every Parameter to
    register_parameter, as PyTorch's does."""
    layer = Affine(3, 4)
    gain, inner = Parameter(tc.ones(4)), Affine(2, 2)
    layer.register_parameter("gain", gain)
    layer.register_parameter("shift", None)
    layer.register_module("inner", inner)
    t.true(layer.__dict__["_parameters"].get("gain") is gain and layer.__dict__["_modules"].get("inner") is inner,
           "layer.register_parameter('gain', p) to put p into _parameters and layer.register_module('inner', m) "
           "to put m into _modules", hint="after the checks: self._parameters[name] = param")
    t.true("shift" in layer._parameters and layer._parameters["shift"] is None,
           "layer.register_parameter('shift', None) to keep 'shift' in _parameters with the value None",
           hint="None is allowed: it reserves the name (a Linear without bias registers 'bias' as None)")
    seen = []

    class Spy(Affine):
        def register_parameter(self, name, param):
            seen.append(name)
            super().register_parameter(name, param)

    spy = Spy(3, 4)
    spy.bias = None
    t.equal(seen, ["weight", "bias", "bias"], what="the names self.register_parameter was called with while "
            "Affine(3, 4) assigned self.weight and self.bias, then layer.bias = None",
            why="your __setattr__ wrote _parameters itself: inside the framework a layer's weights then skip the "
                "checks of register_parameter (a non-leaf, a dotted name)" if "weight" not in seen else None,
            hint="in __setattr__, hand a Parameter (and None for a parameter's name) to self.register_parameter("
                 "name, value), as PyTorch's __setattr__ does")
    odd = Parameter(tc.ones(2))
    odd.grad_fn = (tc.ones(2, requires_grad=True) * 2).grad_fn  # a parameter that is not a leaf
    cases = (
        ("layer.register_parameter('a.b', p)", KeyError, 'parameter name can\'t contain "."',
         lambda: layer.register_parameter("a.b", Parameter(tc.ones(1)))),
        ("layer.register_parameter('', p)", KeyError, 'parameter name can\'t be empty string ""',
         lambda: layer.register_parameter("", Parameter(tc.ones(1)))),
        ("layer.register_parameter('scale', p) (scale is a plain attribute)", KeyError,
         "attribute 'scale' already exists", lambda: layer.register_parameter("scale", Parameter(tc.ones(1)))),
        ("layer.register_parameter('w', tc.ones(2)) (a plain tensor)", TypeError, None,
         lambda: layer.register_parameter("w", tc.ones(2))),
        ("layer.register_parameter('w', p) for a p with a grad_fn", ValueError,
         "Cannot assign non-leaf Tensor to parameter 'w'. Model parameters must be created explicitly. To express "
         "'w' as a function of another Tensor, compute the value in the forward() method.",
         lambda: layer.register_parameter("w", odd)),
        ("register_parameter before __init__ ran", AttributeError,
         "cannot assign parameter before Module.__init__() call",
         lambda: Module.__new__(Module).register_parameter("w", Parameter(tc.ones(1)))),
        ("layer.register_module('x', 3)", TypeError, "int is not a Module subclass",
         lambda: layer.register_module("x", 3)),
        ("layer.register_module('forward', m) (forward is a method)", KeyError, "attribute 'forward' already exists",
         lambda: layer.register_module("forward", Affine(2, 2))),
        ("layer.register_module('a.b', m)", KeyError, 'module name can\'t contain ".", got: a.b',
         lambda: layer.register_module("a.b", Affine(2, 2))),
        ("layer.register_module('', m)", KeyError, 'module name can\'t be empty string ""',
         lambda: layer.register_module("", Affine(2, 2))),
    )
    for what, kind, message, call in cases:
        error = t.raises(kind, call, what=what, hint=f"raise {kind.__name__} there, as PyTorch does: the "
                         "checks come before anything is stored")
        text = str(error.args[0]) if error.args else ""
        if message is None:
            message = "cannot assign 'Tensor' object to parameter 'w' (torch.nn.Parameter or None required)"
            t.true("object to parameter 'w' (torch.nn.Parameter or None required)" in text,
                   f"the message of that TypeError to be PyTorch's {message!r} (got {text!r})")
        else:
            t.equal(text, message, what=f"the message of {what}'s {kind.__name__} (PyTorch's)")
    t.true(set(layer._parameters) == {"weight", "bias", "gain", "shift"} and set(layer._modules) == {"inner"},
           "a refused registration to store nothing", hint="check first, then store")


def _traversal(t, Module, Affine, Net):
    net = Net()
    t.equal(sorted(net.__dict__.get("_modules", {})), ["first", "second"], what="the keys of net._modules",
            hint="in __setattr__, put a Module into self._modules[name]")
    names = [name for name, _ in net.named_parameters()]
    expected = ["first.weight", "first.bias", "second.weight", "second.bias"]
    why = None
    if names == ["weight", "bias", "weight", "bias"]:
        why = "the names have no prefix: a submodule's parameters are named after the path to them"
    elif names == []:
        why = "named_parameters() found nothing: did it walk the submodules?"
    t.equal(names, expected, what="[name for name, _ in net.named_parameters()]", why=why,
            hint="walk self.named_modules(prefix=prefix) and join each module's name and the parameter's with '.'")
    t.equal([n for n, _ in net.named_parameters(prefix="model")], ["model." + n for n in expected],
            what="names from net.named_parameters(prefix='model')")
    t.equal([n for n, _ in net.first.named_parameters(recurse=False)], ["weight", "bias"],
            what="net.first.named_parameters(recurse=False)")
    t.equal(len(list(net.named_parameters(recurse=False))), 0, what="len(list(net.named_parameters(recurse=False)))",
            hint="recurse=False: this module's own _parameters only")
    t.equal([n for n, _ in net.named_modules()], ["", "first", "second"], what="names of net.named_modules()",
            hint="yield (prefix, self) first, then each child's named_modules with the prefix extended")
    t.equal([n for n, _ in net.named_children()], ["first", "second"], what="names of net.named_children()")
    t.true([type(m).__name__ for m in net.children()] == ["Affine", "Affine"]
           and len(list(net.modules())) == 3 and len(list(net.parameters())) == 4,
           "children(), modules() and parameters() to yield what the named_ versions yield (2, 3 and 4 items)")
    tied = Net()
    tied.second = tied.first  # one layer used twice
    t.equal(len(list(tied.parameters())), 2, what="parameters of a net whose two attributes are the same layer",
            why=f"{len(list(tied.parameters()))}: a shared layer's parameters were listed twice, so an optimizer "
                "would update them twice per step",
            hint="keep a set of the ids of what you yielded (and of the modules you visited) and skip repeats")
    t.equal(len(list(tied.modules())), 2, what="modules of that net", hint="named_modules yields each module once")
    calls = {"named_parameters": 0, "named_modules": 0, "named_children": 0}

    class Spy(Net):
        def named_parameters(self, *args, **kwargs):
            calls["named_parameters"] += 1
            return super().named_parameters(*args, **kwargs)

        def named_modules(self, *args, **kwargs):
            calls["named_modules"] += 1
            return super().named_modules(*args, **kwargs)

        def named_children(self):
            calls["named_children"] += 1
            return super().named_children()

    spy = Spy()
    list(spy.parameters())
    list(spy.children())
    t.true(all(calls.values()), "parameters() to go through named_parameters(), named_parameters() through "
           f"named_modules() and children() through named_children(), as PyTorch's do (calls: {calls})",
           hint="the short versions yield from the named ones: for _, p in self.named_parameters(recurse=recurse)")


def _state(t, Affine, Net):
    tc.manual_seed(0)
    net = Net()
    state = net.state_dict()
    t.equal(list(state), ["first.weight", "first.bias", "first.calls", "second.weight", "second.bias", "second.calls"],
            what="list(net.state_dict())",
            why="the non-persistent buffer 'cache' is in it" if any("cache" in k for k in state) else
            ("the buffers are missing" if not any("calls" in k for k in state) else None),
            hint="this module's parameters, then its persistent buffers, then each child's with prefix + name + '.'")
    t.true(isinstance(state, OrderedDict), f"net.state_dict() to be an OrderedDict, PyTorch's type (got "
           f"{type(state).__name__})", hint="start from destination = OrderedDict() when none is given")
    t.true(all(not v.requires_grad for v in state.values()) and net.state_dict(keep_vars=True)["first.weight"]
           is net.first.weight, "state_dict() to hold detached tensors (keep_vars=True: the parameters themselves)",
           hint="p if keep_vars else p.detach()")
    tc.manual_seed(1)
    other = Net()
    result = other.load_state_dict(state)
    t.true(np.array_equal(other.second.weight.detach().numpy(), net.second.weight.detach().numpy()),
           "other.second.weight to equal net.second.weight after other.load_state_dict(net.state_dict())",
           hint="copy each tensor in place under tc.no_grad(): tensor.copy_(state_dict[key])")
    t.true(other.first.weight is not net.first.weight, "load_state_dict to copy values into the existing parameters, "
           "not to put the checkpoint's tensors into the model")
    t.equal(tuple(map(list, result)), ([], []), what="what load_state_dict returns when every key matches",
            hint="return (missing_keys, unexpected_keys), two lists")
    broken = {k: v for k, v in state.items() if k != "first.bias"}
    broken["head.weight"] = tc.zeros(2)
    error = t.raises(RuntimeError, other.load_state_dict, broken, what="load_state_dict with a key missing and one "
                     "unexpected", hint="strict=True: collect the problems and raise RuntimeError, as PyTorch does")
    want = ('Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: "first.bias". '
            '\n\tUnexpected key(s) in state_dict: "head.weight". ')
    t.equal(str(error), want, what="the message of that error (PyTorch's)",
            hint="'Error(s) in loading state_dict for ' + class name + ':\\n\\t' + the problems joined by "
                 "'\\n\\t'; each list as 'Missing key(s) in state_dict: \"a\", \"b\". '")
    missing, unexpected = other.load_state_dict(broken, strict=False)
    t.equal((list(missing), list(unexpected)), (["first.bias"], ["head.weight"]),
            what="load_state_dict(..., strict=False)", hint="strict=False loads what matches and only reports the rest")
    error = t.raises(RuntimeError, other.load_state_dict, {**state, "first.weight": tc.zeros(3, 3)},
                     what="load_state_dict with first.weight of shape (3, 3) instead of (4, 3)")
    t.true("size mismatch for first.weight: copying a param with shape" in str(error),
           f"the message to say 'size mismatch for first.weight: copying a param with shape ...' (got {str(error)!r})")


def _walks(t, Net):
    """train() and apply() walk the tree through self.children(), as PyTorch's do."""
    calls = []

    class Spy(Net):
        def children(self):
            calls.append(1)
            return super().children()

    spy = Spy()
    for name, walk in {"train": spy.train, "apply": lambda: spy.apply(lambda m: None)}.items():
        before = len(calls)
        walk()
        t.true(len(calls) > before, f"{name}() to walk the submodules with self.children(), as PyTorch's does",
               hint="for module in self.children(): ...")


def _modes(t, Net):
    net = Net()
    t.true(net.eval() is net and not any(m.training for m in (net, net.first, net.second)),
           "net.eval() to return net and set training=False on net and every submodule",
           hint="train(mode) sets self.training = mode, then calls train(mode) on every child")
    t.true(net.train() is net and all(m.training for m in (net, net.first, net.second)),
           "net.train() to return net and set training=True everywhere again")
    t.raises(ValueError, net.train, "no", what="net.train('no')", hint="PyTorch: ValueError('training mode is "
                                                                        "expected to be boolean')")
    seen = []
    t.true(net.apply(lambda m: seen.append(type(m).__name__)) is net and seen == ["Affine", "Affine", "Net"],
           f"net.apply(fn) to call fn on the children first, then on net, and return net (order: {seen})",
           hint="for each child: child.apply(fn); then fn(self); return self")
    net(tc.randn(5, 3)).sum().backward()
    net.zero_grad(set_to_none=False)
    t.true(all(p.grad is not None and not p.grad.abs().sum().item() for p in net.parameters()),
           "zero_grad(set_to_none=False) to fill every gradient with zeros")
    net.zero_grad()
    t.true(all(p.grad is None for p in net.parameters()), "zero_grad() to set every gradient to None",
           hint="set_to_none=True (the default): p.grad = None")


def _methods(t, Module, upto):
    """The learner's Module is a class with the methods of every exercise up to `upto` (and none nn.Module lacks)."""
    t.true(isinstance(Module, type), "Module to be a class")
    own = {name: value for klass in reversed(Module.__mro__[:-1]) for name, value in vars(klass).items()}
    for exercise_id, methods in _STAGES:
        missing = [name for name in methods if name not in own]
        where = "this exercise's cell" if exercise_id == upto else f"the cell of exercise {exercise_id} (run it first)"
        t.true(not missing, f"your Module to define {', '.join(missing)}", hint=f"write them in {where}")
        if exercise_id == upto:
            break
    extra = sorted(name for name, value in own.items() if callable(value) and not hasattr(tc.nn.Module, name))
    t.true(not extra, f"no method nn.Module does not have (yours: {', '.join(extra)})",
           why="inside the framework self is an nn.Module, which has no such method",
           hint="write a helper as a function outside the class, or inline it")


@exercise("03b.1", title="_make_subclass and Parameter: a tensor whose type says 'train me'", points=1)
def parameter_check(t, make_subclass, Parameter):
    _make_subclass(t, make_subclass)
    _parameter(t, Parameter)


# --- 03b.2 ------------------------------------------------------------------------------------------------
@exercise("03b.2", title="Module's tables: __setattr__, __getattr__ and the register methods", points=2)
def registration_check(t, Parameter, Module):
    _methods(t, Module, "03b.2")
    Affine, _ = _toy_modules(Parameter, Module)
    _registration(t, Module, Affine)
    _registering(t, Parameter, Module, Affine)


# --- 03b.3 ------------------------------------------------------------------------------------------------
@exercise("03b.3", title="walking the tree: named_parameters, named_children, named_modules", points=1)
def traversal_check(t, Parameter, Module):
    _methods(t, Module, "03b.3")
    Affine, Net = _toy_modules(Parameter, Module)
    _traversal(t, Module, Affine, Net)


# --- 03b.4 ------------------------------------------------------------------------------------------------
@exercise("03b.4", title="state_dict and load_state_dict, train and eval, apply, zero_grad", points=2)
def state_check(t, Parameter, Module):
    _methods(t, Module, "03b.4")
    Affine, Net = _toy_modules(Parameter, Module)
    _state(t, Affine, Net)
    _walks(t, Net)
    _modes(t, Net)
