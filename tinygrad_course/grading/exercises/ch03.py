"""Chapter 03 (modules): checks for the lab's layers, Dropout and LayerNorm (nn.init in ch03_init.py, Embedding
and ModuleList in ch03_embedding.py; Parameter and Module itself are chapter 03b's, in ch03b.py).

Exercises that build a framework piece are also checked by plugging the learner's piece into a model that
trains for a few steps on the digits (tinygrad_course.datasets.load_digits).
"""
from collections import OrderedDict
from functools import lru_cache

import numpy as np

import tinygrad_course as tc
from tinygrad_course.datasets import load_digits

from .. import mistakes
from ..registry import exercise
from . import ch03_embedding  # noqa: F401  (registers 03.5: Embedding and ModuleList)
from . import ch03_init  # noqa: F401  (registers 03.4: nn.init's initialisers and init_weights)
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
@exercise("03.2", title="Dropout with inverted scaling", points=3,
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


# --- 03.3 -------------------------------------------------------------------------------------------------
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


@exercise("03.3", title="LayerNorm", points=3)
def layer_norm_check(t, LayerNorm):
    _layer_norm(t, LayerNorm)
    # the real run: an MLP normalised by the learner's LayerNorm trains on the digits
    tc.manual_seed(0)
    X, y = digits()
    model = tc.nn.Sequential(tc.nn.Linear(64, 32), LayerNorm(32), tc.nn.GELU(), tc.nn.Linear(32, 10))
    final = train_full_batch(model, X, y, steps=40, lr=0.01)
    t.true(final < 0.2, f"an MLP normalised by your LayerNorm to fit 512 digits in 40 Adam steps (loss {final:.3f}, "
                        "expected below 0.2)")
