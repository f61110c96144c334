"""Chapter 03 (modules): checks for Linear, parameter counting, Dropout, a residual block, init, freezing, hooks.

Exercises that build a framework piece are also checked by plugging the learner's piece into a model that
trains for a few steps on the digits (tinygrad_course.datasets.load_digits).
"""
from functools import lru_cache

import numpy as np

import tinygrad_course as tc
from tinygrad_course.datasets import load_digits

from .. import mistakes
from ..registry import exercise


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
@exercise("03.1", title="Linear from scratch", points=3, forbidden=["tinygrad_course.nn.functional.linear"])
def linear_check(t, Linear):
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
           hint="with bias=False set self.bias = None (PyTorch registers it as None)")
    # the real run: an MLP made of the learner's Linear trains on the digits
    tc.manual_seed(0)
    X, y = digits()
    model = tc.nn.Sequential(Linear(64, 32), tc.nn.ReLU(), Linear(32, 10))
    start = float(tc.nn.functional.cross_entropy(model(X), y).item())
    final = train_full_batch(model, X, y, steps=60, lr=0.02)
    t.true(final < 0.3, f"an MLP built from your Linear to train on 512 digits: loss {start:.3f} -> {final:.3f} "
                        "after 60 Adam steps, expected below 0.3",
           hint="does the gradient reach weight and bias? build the output with tensor operations only")


# --- 03.2 -------------------------------------------------------------------------------------------------
@exercise("03.2", title="counting parameters", points=1)
def count_check(t, count_parameters):
    mlp = tc.nn.Sequential(tc.nn.Linear(784, 128), tc.nn.ReLU(), tc.nn.Linear(128, 10))
    got = count_parameters(mlp)
    why = None
    if got == 784 * 128 + 128 * 10:
        why = "you counted the weights only: the biases are parameters too"
    elif got == 4:
        why = "you counted the parameter tensors, not the numbers in them"
    elif got == 784 + 128 + 128 + 10:
        why = "you added up the first dimension of each parameter, not its number of elements"
    t.equal(got, 101_770, what="count_parameters of a 784-128-10 MLP", why=why,
            hint="add up p.numel() for p in model.parameters()")
    shared = tc.nn.Linear(8, 8)
    tied = tc.nn.Sequential(shared, tc.nn.ReLU(), shared)
    t.equal(count_parameters(tied), 72, what="count_parameters of Sequential(shared, ReLU(), shared)",
            hint="a layer used twice owns one set of parameters; model.parameters() lists each only once")
    for p in mlp[0].parameters():
        p.requires_grad_(False)
    t.equal(count_parameters(mlp, trainable_only=True), 1290,
            what="count_parameters(mlp, trainable_only=True) after freezing the first layer",
            hint="with trainable_only=True count only parameters with requires_grad=True")
    t.equal(count_parameters(mlp), 101_770, what="count_parameters(mlp) after freezing (trainable_only=False)")


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
@exercise("03.4", title="a residual block", points=2)
def residual_check(t, ResidualBlock):
    F = tc.nn.functional
    tc.manual_seed(0)
    block = ResidualBlock(16, 32, p=0.1)
    for name, kind in (("norm", tc.nn.LayerNorm), ("fc1", tc.nn.Linear), ("fc2", tc.nn.Linear),
                       ("dropout", tc.nn.Dropout)):
        t.true(isinstance(getattr(block, name, None), kind), f"block.{name} to be a tc.nn.{kind.__name__}",
               hint="create the layers in __init__ under the names given in the exercise")
    n = 2 * 16 + (16 * 32 + 32) + (32 * 16 + 16)
    t.equal(sum(p.numel() for p in block.parameters()), n, what="number of parameters of ResidualBlock(16, 32)",
            hint="LayerNorm(dim), Linear(dim, hidden), Linear(hidden, dim)")
    block.eval()
    x = tc.randn(4, 16)
    with tc.no_grad():
        branch = block.fc2(F.gelu(block.fc1(block.norm(x))))
        expected = (x + branch).numpy()
        post_norm = block.norm(x + block.fc2(F.gelu(block.fc1(x)))).numpy()
        got = block(x)
    t.close(got, expected, what="block(x) in eval mode", rtol=1e-4, atol=1e-5, given={"x": x}, mistakes=[
        mistakes.custom(lambda g, e: np.allclose(g, branch.numpy(), atol=1e-5),
                        "your block returns the branch alone: the input is not added back (no residual connection)",
                        "return x + branch: that is what makes the block residual"),
        mistakes.custom(lambda g, e: np.allclose(g, post_norm, atol=1e-5),
                        "the LayerNorm was applied after the sum (post-norm) instead of to the branch's input",
                        "pre-norm: x + fc2(gelu(fc1(norm(x))))")])
    block.train()
    t.true(not np.array_equal(block(x).detach().numpy(), block(x).detach().numpy()),
           "dropout on the branch to be active in training mode", hint="apply self.dropout to the branch output")
    # the real run: a stack of the learner's blocks trains on the digits
    tc.manual_seed(0)
    X, y = digits()
    model = tc.nn.Sequential(tc.nn.Linear(64, 32), ResidualBlock(32, 64, p=0.0), ResidualBlock(32, 64, p=0.0),
                             tc.nn.LayerNorm(32), tc.nn.Linear(32, 10))
    final = train_full_batch(model, X, y, steps=40, lr=0.01)
    t.true(final < 0.2, f"a stack of two of your blocks to fit 512 digits in 40 Adam steps (loss {final:.3f}, "
                        "expected below 0.2)")


# --- 03.5 -------------------------------------------------------------------------------------------------
@exercise("03.5", title="Kaiming initialization with apply", points=2,
          forbidden=["tinygrad_course.nn.init.kaiming_normal_"])
def init_check(t, init_weights):
    tc.manual_seed(0)
    model = tc.nn.Sequential(tc.nn.Linear(1000, 400), tc.nn.ReLU(), tc.nn.Linear(400, 10), tc.nn.LayerNorm(10))
    returned = model.apply(init_weights)
    t.true(returned is model, "model.apply(init_weights) to return the model")
    for i in (0, 2):
        t.close(model[i].bias, np.zeros(model[i].bias.shape), what=f"model[{i}].bias after apply",
                mistakes=[mistakes.custom(lambda g, e: True, "the biases were not set to zero",
                                          "zero them in place: nn.init.zeros_(m.bias)")])
    std0 = float(model[0].weight.detach().numpy().std())
    expected = np.sqrt(2 / 1000)
    hint = "Kaiming (He) normal for ReLU: std = sqrt(2 / fan_in), where fan_in = in_features = weight.shape[1]"
    why = None
    if abs(std0 - np.sqrt(2 / 400)) < 0.05 * np.sqrt(2 / 400):
        why = "your std was computed from fan_out (the 400 outputs), not from fan_in (the 1000 inputs)"
        hint = "Kaiming keeps forward activations stable with fan_in = weight.shape[1]"
    elif abs(std0 - np.sqrt(2 / 1400)) < 0.05 * np.sqrt(2 / 1400):
        why = "that is Xavier/Glorot's std, which uses fan_in + fan_out"
        hint = "for ReLU, Kaiming's std uses fan_in alone"
    elif abs(std0 - np.sqrt(1 / 1000)) < 0.05 * np.sqrt(1 / 1000):
        why = "your std is too small by a factor sqrt(2): the ReLU gain is missing"
    elif abs(std0 - 2 / 1000) < 0.05 * 2 / 1000:
        why = "your std is 2 / fan_in: the square root is missing"
    t.true(abs(std0 - expected) < 0.05 * expected,
           f"model[0].weight of a Linear(1000, 400) to have std {expected:.4f} within 5% (got {std0:.4f})",
           why=why, hint=hint)
    t.true(abs(float(model[0].weight.detach().numpy().mean())) < 0.005, "model[0].weight to have mean 0")
    t.close(model[3].weight, np.ones(10), what="the LayerNorm weight (must stay untouched)", mistakes=[
        mistakes.custom(lambda g, e: True, "your function also changed the LayerNorm's weight",
                        "only initialize Linear layers: test isinstance(m, nn.Linear)")])
    # the real run: ReLU activations keep their scale through a deep MLP initialized with the learner's function
    layers = []
    for _ in range(12):
        layers += [tc.nn.Linear(256, 256), tc.nn.ReLU()]
    deep = tc.nn.Sequential(*layers).apply(init_weights)
    with tc.no_grad():
        out = deep(tc.randn(256, 256))
    second_moment = float((out.numpy() ** 2).mean())
    t.true(0.3 < second_moment < 3.0, "the mean square of activations after 12 ReLU layers initialized with your "
           f"function to stay near 1 (got {second_moment:.3g})")


# --- 03.6 -------------------------------------------------------------------------------------------------
@exercise("03.6", title="freezing all but the head", points=1)
def freeze_check(t, freeze_all_but_head):
    tc.manual_seed(0)
    model = tc.nn.Sequential(tc.nn.Linear(64, 32), tc.nn.ReLU(), tc.nn.Linear(32, 32), tc.nn.ReLU(),
                             tc.nn.Linear(32, 10))
    freeze_all_but_head(model)
    flags = {name: p.requires_grad for name, p in model.named_parameters()}
    expected = {name: name.startswith("4.") for name in flags}
    why = None
    if not any(flags.values()):
        why = "every parameter is frozen, the head's too: nothing could learn"
    elif all(flags.values()):
        why = "nothing was frozen"
    elif all(flags[n] for n in flags if not n.startswith("4.")):
        why = "the head was frozen and the rest left trainable: the other way round"
    t.equal(flags, expected, what="requires_grad of each parameter after freeze_all_but_head(model)", why=why,
            hint="set requires_grad_(False) on every parameter except those of model[-1]")
    before = {name: p.detach().numpy().copy() for name, p in model.named_parameters()}
    X, y = digits(0, 128)
    opt = tc.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.5)
    for _ in range(5):
        opt.zero_grad()
        tc.nn.functional.cross_entropy(model(X), y).backward()
        opt.step()
    t.true(model[0].weight.grad is None, "frozen parameters to get no gradient (model[0].weight.grad is None)")
    changed = sorted(n for n, p in model.named_parameters() if not np.array_equal(before[n], p.detach().numpy()))
    t.equal(changed, ["4.bias", "4.weight"], what="parameters changed by 5 training steps")


# --- 03.7 -------------------------------------------------------------------------------------------------
@exercise("03.7", title="forward hooks that record shapes", points=2)
def hooks_check(t, record_shapes):
    model = tc.nn.Sequential(tc.nn.Linear(64, 32), tc.nn.ReLU(),
                             tc.nn.Sequential(tc.nn.Linear(32, 16), tc.nn.Tanh()), tc.nn.Linear(16, 10))
    x = tc.randn(5, 64)
    expected = [("0", (5, 32)), ("1", (5, 32)), ("2.0", (5, 16)), ("2.1", (5, 16)), ("3", (5, 10))]
    got = record_shapes(model, x)
    names = [str(n) for n, _ in got] if isinstance(got, list) else []
    t.equal([(str(n), tuple(s)) for n, s in got], expected, what="record_shapes(model, x)",
            why="containers (modules with children, like the model itself \"\" or \"2\") were recorded too"
            if "" in names or "2" in names else None,
            hint="register a forward hook on every module without children (named_modules()), run model(x) "
                 "once, and record (name, tuple(output.shape)) in call order")
    again = record_shapes(model, x)
    t.equal(len(again), len(expected), what="number of entries on a second call")
    recorded = len(got)
    with tc.no_grad():
        model(x)
    t.equal(len(got), recorded, what="entries in the first result after a later model(x)",
            why="your hooks are still registered: a later forward pass added entries to the first result",
            hint="remove every hook after the forward pass (handle.remove()), or they keep firing")


# --- 03.8 -------------------------------------------------------------------------------------------------
@exercise("03.8", title="a classifier that returns logits", points=1)
def classifier_check(t, DigitClassifier):
    tc.manual_seed(0)
    model = DigitClassifier()
    for name, shape in (("hidden", (32, 64)), ("out", (10, 32))):
        layer = getattr(model, name, None)
        t.true(isinstance(layer, tc.nn.Linear) and tuple(layer.weight.shape) == shape,
               f"model.{name} to be an nn.Linear with weight shape {shape}")
    X, y = digits(0, 256)
    with tc.no_grad():
        expected = model.out(tc.nn.functional.relu(model.hidden(X))).numpy()
        got = model(X)
    log_probs = expected - np.log(np.exp(expected - expected.max(1, keepdims=True)).sum(1, keepdims=True)) \
        - expected.max(1, keepdims=True)
    t.close(got, expected, what="model(x)", rtol=1e-4, atol=1e-5, given="x = the first 256 digits, shape (256, 64)",
            mistakes=[
                mistakes.probabilities_instead_of_logits(
                    "you returned probabilities (a softmax was applied)",
                    "return the raw logits: F.cross_entropy applies log_softmax itself"),
                mistakes.custom(lambda g, e: np.allclose(g, log_probs, atol=1e-4),
                                "you returned log-probabilities (a log_softmax was applied)",
                                "return the raw logits of the last Linear layer"),
                mistakes.custom(lambda g, e: np.allclose(g, model.out(model.hidden(X)).detach().numpy(), atol=1e-4),
                                "there is no ReLU between the two layers: the model is linear",
                                "apply F.relu to the hidden layer's output")])
    final = train_full_batch(model, X, y, steps=60, lr=0.02)
    t.true(final < 0.2, f"your classifier to fit 256 digits in 60 Adam steps (loss {final:.3f}, expected below 0.2)")
