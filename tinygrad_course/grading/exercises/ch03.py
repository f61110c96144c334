"""Chapter 03 (modules): checks for the lab's layers, Module, Dropout and LayerNorm (nn.init in ch03_init.py,
Embedding and ModuleList in ch03_embedding.py).

Exercises that build a framework piece are also checked by plugging the learner's piece into a model that
trains for a few steps on the digits (tinygrad_course.datasets.load_digits).
"""
import copy
from collections import OrderedDict
from functools import lru_cache

import numpy as np

import tinygrad_course as tc
from tinygrad_course.datasets import load_digits

from .. import mistakes
from ..registry import exercise
from . import ch03_embedding  # noqa: F401  (registers 03.6: Embedding and ModuleList)
from . import ch03_init  # noqa: F401  (registers 03.5: nn.init's initialisers and init_weights)
from .learner_classes import no_helpers as _no_helpers


@lru_cache(maxsize=1)
def _digits_arrays():
    data = load_digits()
    return (data.data / 16.0).astype(np.float32), data.target.astype(np.int64)


def digits(start=0, stop=512):
    """A slice of the digits as (features (N, 64) float32, labels (N,) int64) tensors."""
    X, y = _digits_arrays()
    return tc.tensor(X[start:stop]), tc.tensor(y[start:stop])


def train_full_batch(model, X, y, steps=60, lr=0.01):
    """Adam on the cross-entropy of the whole batch; returns the last loss (float)."""
    opt = tc.optim.Adam(model.parameters(), lr=lr)
    loss = None
    for _ in range(steps):
        opt.zero_grad()
        loss = tc.nn.functional.cross_entropy(model(X), y)
        loss.backward()
        opt.step()
    return float(loss.item())


def accuracy(model, X, y):
    model.eval()
    with tc.no_grad():
        return float((model(X).argmax(dim=1) == y).float().mean().item())


def _param_names(module):
    return sorted(name for name, _ in module.named_parameters())


# --- 03.1 -------------------------------------------------------------------------------------------------
def _activations(t, Tanh, ReLU):
    for cls in (Tanh, ReLU):
        t.true(isinstance(cls, type) and issubclass(cls, tc.nn.Module), f"{cls.__name__} to be a subclass of "
               "tc.nn.Module", hint=f"class {getattr(cls, '__name__', 'it')}(nn.Module)")
    _no_helpers(t, Tanh, tc.nn.Tanh)
    _no_helpers(t, ReLU, tc.nn.ReLU)
    x = tc.linspace(-3, 3, 7, requires_grad=True)
    values = x.detach().numpy()
    out = Tanh()(x)
    t.close(out, np.tanh(values), what="Tanh()(x)", given="x = tc.linspace(-3, 3, 7)", mistakes=[
        mistakes.custom(lambda g, e: np.allclose(g, 1 / (1 + np.exp(-values)), atol=1e-5),
                        "that is the sigmoid, not tanh", "tc.tanh(input): values in (-1, 1), tanh(0) = 0")])
    t.true(out.requires_grad, "Tanh's output to be connected to the autograd graph",
           hint="compute it with a tensor op (tc.tanh or input.tanh()), not through NumPy")
    t.close(ReLU()(x), np.maximum(values, 0), what="ReLU()(x)", given="x = tc.linspace(-3, 3, 7)", mistakes=[
        mistakes.custom(lambda g, e: np.allclose(g, np.abs(values)), "negative inputs became positive (abs)",
                        "max(x, 0): a negative input gives 0"),
        mistakes.custom(lambda g, e: np.allclose(g, np.minimum(values, 0)), "you kept the negative part",
                        "max(x, 0), not min(x, 0)")])
    y = tc.tensor([-1.0, 2.0])
    same = ReLU(inplace=True)(y)
    t.true(same is y and y.tolist() == [0.0, 2.0], "ReLU(inplace=True)(y) to change y itself and return it",
           hint="with self.inplace use the in-place op: input.relu_()")


def _sequential(t, Linear, Tanh, Sequential):
    t.true(isinstance(Sequential, type) and issubclass(Sequential, tc.nn.Module),
           "Sequential to be a subclass of tc.nn.Module")
    _no_helpers(t, Sequential, tc.nn.Sequential)
    first, act, last = Linear(3, 4), Tanh(), Linear(4, 2)
    seq = Sequential(first, act, last)
    t.equal(list(seq._modules), ["0", "1", "2"], what="list(Sequential(a, b, c)._modules)",
            hint="register each module with self.add_module(str(i), module): a plain list is invisible to "
                 "parameters()")
    x = tc.randn(5, 3)
    t.close(seq(x), last(act(first(x))).detach().numpy(), what="Sequential(a, b, c)(x)", mistakes=[
        mistakes.custom(lambda g, e: np.allclose(g, x.numpy(), atol=1e-6), "your Sequential returned its input",
                        "feed the input through every module in order, each output the next input")])
    t.true(seq[0] is first and seq[-1] is last, "seq[0] and seq[-1] to be the first and the last module",
           hint="a negative index counts from the end")
    t.raises(IndexError, lambda: seq[3], what="seq[3] of a Sequential of 3", hint="raise IndexError(f'index "
             "{idx} is out of range')")
    tail = seq[1:]
    t.true(isinstance(tail, Sequential) and list(tail._modules) == ["1", "2"] and tail[0] is act,
           "seq[1:] to be a Sequential of the same modules under their own names ('1', '2')",
           hint="a slice gives Sequential(OrderedDict(list(self._modules.items())[idx]))")
    named = Sequential(OrderedDict([("fc", Linear(2, 2)), ("act", Tanh())]))
    t.equal(list(named._modules), ["fc", "act"], what="the names of Sequential(OrderedDict(fc=..., act=...))",
            hint="one OrderedDict argument: its names are the modules' names")


@exercise("03.1", title="the lab's layers: Linear, Tanh, ReLU, Sequential", points=5,
          forbidden=["tinygrad_course.nn.functional.linear"])
def linear_check(t, Linear, Tanh, ReLU, Sequential):
    _no_helpers(t, Linear, tc.nn.Linear)
    tc.manual_seed(0)
    layer = Linear(64, 10)
    t.true(isinstance(layer, tc.nn.Module), "Linear to be a subclass of tc.nn.Module",
           hint="write `class Linear(nn.Module)` and call super().__init__() first in __init__")
    t.equal(tuple(layer.weight.shape), (10, 64), what="Linear(64, 10).weight.shape",
            hint="the weight is (out_features, in_features), like PyTorch's")
    t.equal(tuple(layer.bias.shape), (10,), what="Linear(64, 10).bias.shape", hint="one bias per output feature")
    names = _param_names(layer)
    t.equal(names, ["bias", "weight"], what="names in layer.named_parameters()",
            why="weight and bias are not registered as parameters (plain tensor attributes)" if not names else None,
            hint="wrap weight and bias in nn.Parameter: a plain tensor attribute is invisible to parameters() "
                 "and therefore to the optimizer")
    w = layer.weight.detach().numpy()
    bound = 1 / np.sqrt(64)
    why = None
    if w.std() == 0:
        why = "every weight has the same value, so every output unit computes the same thing"
    elif np.abs(w).max() > bound + 1e-6:
        why = f"your weights reach {np.abs(w).max():.3f} (std {w.std():.3f}): too large for 64 inputs"
    t.true(np.abs(w).max() <= bound + 1e-6 and w.std() > 0.25 * bound,
           f"Linear(64, 10)'s weights drawn uniformly from (-{bound:.3f}, {bound:.3f})", why=why,
           hint="PyTorch draws them from U(-1/sqrt(in_features), 1/sqrt(in_features)): uniform_(-bound, bound)")
    x = tc.randn(5, 64)
    W, b = layer.weight.detach().numpy(), layer.bias.detach().numpy()
    expected = x.numpy() @ W.T + b
    no_bias = x.numpy() @ W.T
    t.close(layer(x), expected, what="layer(x) for x of shape (5, 64)", rtol=1e-4, atol=1e-5,
            given="x = tc.randn(5, 64) with your layer's own weight and bias", mistakes=[
                mistakes.custom(lambda got, exp: np.allclose(got, no_bias, atol=1e-5),
                                "your output is exactly x @ W.T: the bias is missing", "add self.bias (when it is not None)"),
                mistakes.custom(lambda got, exp: np.allclose(got, no_bias - b, atol=1e-5),
                                "the bias was subtracted instead of added", "output = x @ W.T + b"),
                mistakes.transposed("the output is transposed", "use x @ W.T (W is (out, in)), not x @ W")])
    x3 = tc.randn(2, 3, 64)
    t.close(layer(x3), x3.numpy() @ W.T + b, what="layer(x) for a batch of shape (2, 3, 64)", rtol=1e-4, atol=1e-5)
    plain = Linear(4, 3, bias=False)
    t.true(plain.bias is None and _param_names(plain) == ["weight"],
           "Linear(4, 3, bias=False) to have bias None and only a weight parameter",
           hint="with bias=False call self.register_parameter('bias', None), as PyTorch does")
    t.equal((plain.in_features, plain.out_features), (4, 3), what="(in_features, out_features) of Linear(4, 3)",
            hint="keep both as attributes: nn.Linear's repr and reset_parameters read them")
    wide = Linear(4, 3, dtype=tc.float64)
    t.equal((str(wide.weight.dtype), str(wide.bias.dtype)), ("tc.float64", "tc.float64"),
            what="the dtypes of Linear(4, 3, dtype=tc.float64)'s weight and bias",
            hint="pass device and dtype on to tc.empty(..., device=device, dtype=dtype)")
    drawn = []

    class Counted(Linear):
        def reset_parameters(self):
            drawn.append(1)
            super().reset_parameters()

    Counted(4, 3)
    t.equal(len(drawn), 1, what="calls of self.reset_parameters() while Linear(4, 3) is built",
            hint="create the parameters with tc.empty, then draw them in reset_parameters(), called at the end of "
                 "__init__ (PyTorch's order: re-initialising a layer later is layer.reset_parameters())")
    before = layer.weight.detach().numpy().copy()
    layer.reset_parameters()
    t.true(not np.array_equal(before, layer.weight.detach().numpy())
           and np.abs(layer.weight.detach().numpy()).max() <= bound + 1e-6,
           "layer.reset_parameters() to draw new weights in the same bounds")
    _activations(t, Tanh, ReLU)
    _sequential(t, Linear, Tanh, Sequential)
    # the real run: an MLP made of the learner's layers trains on the digits
    tc.manual_seed(0)
    X, y = digits()
    model = Sequential(Linear(64, 32), ReLU(), Linear(32, 10))
    start = float(tc.nn.functional.cross_entropy(model(X), y).item())
    final = train_full_batch(model, X, y, steps=60, lr=0.02)
    t.true(final < 0.3, f"an MLP built from your Linear to train on 512 digits: loss {start:.3f} -> {final:.3f} "
                        "after 60 Adam steps, expected below 0.3",
           hint="does the gradient reach weight and bias? build the output with tensor operations only")


# --- 03.2 -------------------------------------------------------------------------------------------------
_MODULE_METHODS = ("__init__", "__setattr__", "__getattr__", "register_parameter", "register_module",
                   "register_buffer", "named_parameters", "parameters",
                   "named_children", "children", "named_modules", "modules", "state_dict", "load_state_dict", "train",
                   "eval", "apply", "zero_grad")


def _parameter(t, Parameter):
    """The learner's Parameter: a Tensor subclass whose __new__ wraps a tensor without copying it, as a leaf that
    requires grad, printed as PyTorch prints one."""
    t.true(isinstance(Parameter, type) and issubclass(Parameter, tc.Tensor), "Parameter to be a subclass of "
           "tc.Tensor", hint="class Parameter(tc.Tensor): a parameter is a tensor, and every op takes it as one")
    own = {name for klass in Parameter.__mro__[:-1] if not klass.__module__.startswith("tinygrad_course")
           for name in vars(klass)}
    t.true("__new__" in own, "your Parameter to define __new__(cls, data=None, requires_grad=True)",
           why="a Tensor subclass is made in __new__: it returns the new object, __init__ only fills one in",
           hint="def __new__(cls, data=None, requires_grad=True): return tc.Tensor._make_subclass(cls, data, "
                "requires_grad)")
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
           hint="tc.Tensor._make_subclass(cls, data, requires_grad) makes an object of class cls over data")
    t.true(p.requires_grad, "Parameter(data).requires_grad to be True (the default requires_grad=True)",
           why="a parameter that does not require grad gets no .grad in backward(): the optimizer skips it and the "
               "loss does not go down",
           hint="pass requires_grad on: tc.Tensor._make_subclass(cls, data, requires_grad)")
    t.equal(p.detach().tolist(), [[1.0, 2.0], [3.0, 4.0]], what="the values of Parameter(tc.tensor([[1., 2.], [3., "
            "4.]]))")
    with tc.no_grad():
        data.mul_(10.0)
    t.equal(p.detach().tolist(), [[10.0, 20.0], [30.0, 40.0]], what="Parameter(data) after data.mul_(10.0)",
            why="your Parameter copied the data: an nn.Parameter is the tensor it wraps (one storage), so "
                "nn.Parameter(t) costs no memory and sees every change of t",
            hint="tc.Tensor._make_subclass(cls, data, requires_grad) shares data's storage: no clone(), no tc.tensor()")
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
    copied = copy.deepcopy(net)
    t.true([n for n, _ in copied.named_parameters()] == expected and copied.first.weight is not net.first.weight,
           "copy.deepcopy(net) to give a net with its own parameters under the same names",
           hint="copying builds the object without calling __init__: __getattr__ must read the tables through "
                "self.__dict__.get(...), which works even before they exist")
    calls = {"named_parameters": 0, "named_modules": 0, "named_children": 0, "children": 0}

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

        def children(self):
            calls["children"] += 1
            return super().children()

    spy = Spy()
    list(spy.parameters())
    walks = {"train": spy.train, "apply": lambda: spy.apply(lambda m: None)}
    for name, walk in walks.items():
        before = calls["children"]
        walk()
        t.true(calls["children"] > before, f"{name}() to walk the submodules with self.children(), as PyTorch's "
               "does", hint="for module in self.children(): ...")
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


@exercise("03.2", title="Parameter and Module: registration, traversal, state_dict, modes", points=6)
def module_check(t, Parameter, Module):
    _parameter(t, Parameter)
    t.true(isinstance(Module, type), "Module to be a class")
    own = {name: value for klass in reversed(Module.__mro__[:-1]) for name, value in vars(klass).items()}
    missing = [name for name in _MODULE_METHODS if name not in own]
    t.true(not missing, f"your Module to define {', '.join(missing)}", hint="write every method of the exercise")
    extra = sorted(name for name, value in own.items() if callable(value) and not hasattr(tc.nn.Module, name))
    t.true(not extra, f"no method nn.Module does not have (yours: {', '.join(extra)})",
           why="inside the framework self is an nn.Module, which has no such method",
           hint="write a helper as a function outside the class, or inline it")
    Affine, Net = _toy_modules(Parameter, Module)
    _registration(t, Module, Affine)
    _registering(t, Parameter, Module, Affine)
    _traversal(t, Module, Affine, Net)
    _state(t, Affine, Net)
    _modes(t, Net)


# --- 03.3 -------------------------------------------------------------------------------------------------
@exercise("03.3", title="Dropout with inverted scaling", points=3,
          forbidden=["tinygrad_course.nn.functional.dropout"])
def dropout_check(t, Dropout):
    tc.manual_seed(0)
    drop = Dropout(0.25)
    t.true(isinstance(drop, tc.nn.Module), "Dropout to be a subclass of tc.nn.Module")
    x = tc.ones(200, 100)
    out = drop(x).detach().numpy()
    t.equal(tuple(out.shape), (200, 100), what="shape of drop(x)")
    zero_fraction = float((out == 0).mean())
    if abs(zero_fraction - 0.75) < 0.03:
        t.fail("fraction of zeros with p=0.25", f"{zero_fraction:.3f}: your Dropout keeps elements with probability p"
               "\n  hint: p is the probability to DROP an element: keep each one with probability 1 - p")
    t.true(abs(zero_fraction - 0.25) < 0.03, f"about 25% zeros in training mode with p=0.25 (got {zero_fraction:.1%})",
           hint="zero each element independently with probability p, e.g. mask = (tc.rand_like(x) >= p)")
    kept = out[out != 0]
    t.close(kept, np.full(kept.shape, 1 / 0.75, np.float32), what="the values Dropout(0.25) keeps from an input of ones",
            rtol=1e-5, mistakes=[
                mistakes.custom(lambda got, exp: np.allclose(got, 1.0),
                                "the kept values were not rescaled, so the expected output shrinks by (1 - p)",
                                "scale the kept values by 1 / (1 - p) (inverted dropout) so the expected value stays "
                                "the same and eval needs no rescaling"),
                mistakes.custom(lambda got, exp: np.allclose(got, 0.75),
                                "the kept values were multiplied by (1 - p) instead of being scaled up",
                                "inverted dropout divides by the keep probability")])
    again = drop(x).detach().numpy()
    t.true(not np.array_equal(again, out), "a new random mask on every call",
           hint="draw the mask inside forward, not once in __init__")
    xg = tc.randn(50, 40, requires_grad=True)
    y = drop(xg)
    t.true(y.requires_grad, "the output to be connected to the autograd graph",
           hint="build the output with tensor operations (x * mask / (1 - p)); NumPy arrays cut the graph")
    y.sum().backward()
    mask = (y.detach().numpy() != 0)
    t.close(xg.grad, mask / 0.75, what="x.grad after drop(x).sum().backward()", rtol=1e-5)
    drop.eval()
    t.close(drop(x), x, what="Dropout in eval mode", given="x = tc.ones(200, 100) after drop.eval()",
            mistakes=[mistakes.custom(lambda got, exp: True, "your Dropout still changes its input in eval mode",
                                      "when self.training is False return the input unchanged")])
    drop.train()
    t.close(Dropout(0.0)(x), x, what="Dropout(0.0) in training mode")
    t.close(Dropout(1.0)(x), np.zeros((200, 100), np.float32), what="Dropout(1.0) in training mode",
            mistakes=[mistakes.custom(lambda g, e: np.isnan(g).any(), "dividing by 1 - p = 0 gave NaN",
                                      "with p = 1 every element is dropped: return zeros")])
    error = t.raises(ValueError, Dropout, 1.5, what="Dropout(1.5)",
                     hint="check p in __init__: PyTorch raises ValueError for p outside [0, 1]")
    t.equal(str(error), "dropout probability has to be between 0 and 1, but got 1.5", what="its message (PyTorch's)")
    t.true(Dropout(0.5, inplace=True).inplace is True and Dropout().p == 0.5 and Dropout().inplace is False,
           "Dropout(p=0.5, inplace=False) to keep p and inplace as attributes",
           hint="nn.Dropout's repr and the in-place variant read self.p and self.inplace")
    _no_helpers(t, Dropout, tc.nn.Dropout)
    # the real run: a model with the learner's Dropout trains, and evaluates deterministically
    tc.manual_seed(0)
    X, y = digits(0, 1000)
    Xv, yv = digits(1000, 1400)
    model = tc.nn.Sequential(tc.nn.Linear(64, 64), tc.nn.ReLU(), Dropout(0.2), tc.nn.Linear(64, 10))
    train_full_batch(model, X, y, steps=80, lr=0.02)
    model.eval()
    with tc.no_grad():
        first, second = model(Xv).numpy(), model(Xv).numpy()
    t.true(np.array_equal(first, second), "model.eval() to make a model with your Dropout deterministic")
    acc = accuracy(model, Xv, yv)
    t.true(acc > 0.9, f"a model with your Dropout to reach > 90% validation accuracy on the digits (got {acc:.1%})")


# --- 03.4 -------------------------------------------------------------------------------------------------
def _layer_norm(t, LayerNorm):
    t.true(isinstance(LayerNorm, type) and issubclass(LayerNorm, tc.nn.Module),
           "LayerNorm to be a subclass of tc.nn.Module")
    _no_helpers(t, LayerNorm, tc.nn.LayerNorm)
    norm = LayerNorm(8)
    t.equal(tuple(getattr(norm, "normalized_shape", ())), (8,), what="LayerNorm(8).normalized_shape",
            hint="an int n means the last dimension: normalized_shape = (n,)")
    t.true(sorted(n for n, _ in norm.named_parameters()) == ["bias", "weight"]
           and norm.weight.detach().numpy().tolist() == [1.0] * 8 and not norm.bias.detach().numpy().any(),
           "LayerNorm(8) to have parameters weight (ones) and bias (zeros) of shape (8,)",
           hint="nn.Parameter(tc.ones(normalized_shape)), nn.Parameter(tc.zeros(normalized_shape))")
    t.true(getattr(norm, "eps", None) == 1e-5, "LayerNorm(8).eps to be 1e-5 (PyTorch's default)")
    tc.manual_seed(1)
    x = tc.randn(3, 5, 8) * 3 + 2
    with tc.no_grad():
        norm.weight.copy_(tc.linspace(0.5, 2.0, 8))
        norm.bias.copy_(tc.linspace(-1.0, 1.0, 8))
    xs, w, b = x.numpy().astype(np.float64), norm.weight.detach().numpy(), norm.bias.detach().numpy()
    mean, var = xs.mean(-1, keepdims=True), xs.var(-1, keepdims=True)
    expected = (xs - mean) / np.sqrt(var + 1e-5) * w + b
    unbiased = (xs - mean) / np.sqrt(xs.var(-1, ddof=1, keepdims=True) + 1e-5) * w + b
    t.close(norm(x), expected, what="LayerNorm(8)(x) with weight linspace(0.5, 2, 8), bias linspace(-1, 1, 8)",
            rtol=1e-4, atol=1e-4, given="x = tc.randn(3, 5, 8) * 3 + 2", mistakes=[
                mistakes.custom(lambda g, e: np.allclose(g, unbiased, atol=1e-4),
                                "you divided by the unbiased variance (n - 1)", "LayerNorm uses the biased variance: "
                                "the mean of (x - mean)**2"),
                mistakes.custom(lambda g, e: np.allclose(g, (xs - mean) / np.sqrt(var + 1e-5), atol=1e-4),
                                "the weight and bias were not applied", "multiply by self.weight, add self.bias"),
                mistakes.custom(lambda g, e: np.allclose(g, (xs - xs.mean(0)) / np.sqrt(xs.var(0) + 1e-5) * w + b,
                                                         atol=1e-4),
                                "you normalised over the batch (that is batch norm)",
                                "normalise over the last len(normalized_shape) dimensions")])
    flat = tc.linspace(0.0, 1.0, 8).reshape(1, 8) * 1e-3 + tc.ones(2, 1)  # rows that vary by 1e-3 only: eps matters
    fs = flat.numpy().astype(np.float64)
    centred = fs - fs.mean(-1, keepdims=True)
    t.close(norm(flat), centred / np.sqrt(fs.var(-1, keepdims=True) + 1e-5) * w + b, what="LayerNorm(8) of rows that "
            "vary by 1e-3 only", rtol=1e-3, atol=1e-3, given="x = tc.linspace(0, 1, 8) * 1e-3 + 1, two rows", mistakes=[
                mistakes.custom(lambda g, e: np.allclose(g, centred / (np.sqrt(fs.var(-1, keepdims=True)) + 1e-5) * w + b,
                                                         atol=1e-3),
                                "eps was added to the standard deviation", "eps goes inside the square root: "
                                "sqrt(var + eps)")])
    xg = x.clone().requires_grad_(True)
    norm(xg).pow(2).sum().backward()
    t.true(xg.grad is not None and norm.weight.grad is not None, "gradients to reach x and the weight",
           hint="compute with tensor ops (mean, sqrt, ...), not through NumPy")
    plain = LayerNorm((5, 8), elementwise_affine=False)
    flat = xs.reshape(3, 40)
    t.close(plain(x), ((flat - flat.mean(1, keepdims=True)) / np.sqrt(flat.var(1, keepdims=True) + 1e-5)).reshape(3, 5, 8),
            what="LayerNorm((5, 8), elementwise_affine=False)(x)", rtol=1e-4, atol=1e-4)
    t.true(plain.weight is None and plain.bias is None and LayerNorm(8, bias=False).bias is None,
           "weight and bias None without elementwise_affine, bias None with bias=False",
           hint="self.register_parameter('bias', None), as PyTorch does")
    wide = LayerNorm(4, dtype=tc.float64)
    t.equal(str(wide.weight.dtype), "tc.float64", what="LayerNorm(4, dtype=tc.float64).weight.dtype",
            hint="pass device and dtype on to tc.ones/tc.zeros")


@exercise("03.4", title="LayerNorm", points=3)
def layer_norm_check(t, LayerNorm):
    _layer_norm(t, LayerNorm)
    # the real run: an MLP normalised by the learner's LayerNorm trains on the digits
    tc.manual_seed(0)
    X, y = digits()
    model = tc.nn.Sequential(tc.nn.Linear(64, 32), LayerNorm(32), tc.nn.GELU(), tc.nn.Linear(32, 10))
    final = train_full_batch(model, X, y, steps=40, lr=0.01)
    t.true(final < 0.2, f"an MLP normalised by your LayerNorm to fit 512 digits in 40 Adam steps (loss {final:.3f}, "
                        "expected below 0.2)")
