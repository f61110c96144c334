"""Catalogue of wrong answers, chapter 03 (modules): each realistic mistake fails with a message that names
it, the hint waits for a second failure, and the unsolved stub fails."""
import pytest

import tinygrad_course as tc
from tinygrad_course import nn

from .wrong_answers import assert_names_mistake, catalogue_tests

F = nn.functional


class LinearWithoutBias(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        bound = 1 / in_features ** 0.5
        self.weight = nn.Parameter(tc.empty(out_features, in_features).uniform_(-bound, bound))
        self.bias = nn.Parameter(tc.empty(out_features).uniform_(-bound, bound)) if bias else None

    def forward(self, x):
        return x @ self.weight.T


class LinearInByOut(LinearWithoutBias):
    def __init__(self, in_features, out_features, bias=True):
        nn.Module.__init__(self)
        bound = 1 / in_features ** 0.5
        self.weight = nn.Parameter(tc.empty(in_features, out_features).uniform_(-bound, bound))
        self.bias = nn.Parameter(tc.empty(out_features).uniform_(-bound, bound)) if bias else None

    def forward(self, x):
        return x @ self.weight + self.bias


class LinearOfZeros(LinearWithoutBias):
    def __init__(self, in_features, out_features, bias=True):
        nn.Module.__init__(self)
        self.weight = nn.Parameter(tc.zeros(out_features, in_features))
        self.bias = nn.Parameter(tc.zeros(out_features)) if bias else None

    def forward(self, x):
        return x @ self.weight.T + self.bias


class LinearOfPlainTensors(LinearOfZeros):
    def __init__(self, in_features, out_features, bias=True):
        nn.Module.__init__(self)
        bound = 1 / in_features ** 0.5
        self.weight = tc.empty(out_features, in_features).uniform_(-bound, bound).requires_grad_()
        self.bias = tc.empty(out_features).uniform_(-bound, bound).requires_grad_() if bias else None


def count_weights_only(model, trainable_only=False):
    return sum(p.numel() for name, p in model.named_parameters() if name.endswith("weight"))


def count_tensors(model, trainable_only=False):
    return len(list(model.parameters()))


def count_ignoring_trainable_only(model, trainable_only=False):
    return sum(p.numel() for p in model.parameters())


class _Dropout(nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p


class DropoutKeepsWithP(_Dropout):
    def forward(self, x):
        if not self.training:
            return x
        return x * (tc.rand_like(x) < self.p).to(x.dtype) / (1 - self.p)


class DropoutUnscaled(_Dropout):
    def forward(self, x):
        if not self.training:
            return x
        return x * (tc.rand_like(x) >= self.p).to(x.dtype)


class DropoutAlwaysOn(_Dropout):
    def forward(self, x):
        return x * (tc.rand_like(x) >= self.p).to(x.dtype) / (1 - self.p)


class _Block(nn.Module):
    def __init__(self, dim, hidden, p=0.1):
        super().__init__()
        self.norm, self.fc1, self.fc2 = nn.LayerNorm(dim), nn.Linear(dim, hidden), nn.Linear(hidden, dim)
        self.dropout = nn.Dropout(p)


class BlockWithoutResidual(_Block):
    def forward(self, x):
        return self.dropout(self.fc2(F.gelu(self.fc1(self.norm(x)))))


class BlockPostNorm(_Block):
    def forward(self, x):
        return self.norm(x + self.dropout(self.fc2(F.gelu(self.fc1(x)))))


def _normal_init(m, std_of):
    if isinstance(m, nn.Linear):
        with tc.no_grad():
            m.weight.normal_(0.0, std_of(*m.weight.shape))
            m.bias.zero_()


def init_fan_out(m):
    _normal_init(m, lambda out, inp: (2 / out) ** 0.5)


def init_xavier(m):
    _normal_init(m, lambda out, inp: (2 / (out + inp)) ** 0.5)


def init_without_gain(m):
    _normal_init(m, lambda out, inp: (1 / inp) ** 0.5)


def init_keeping_biases(m):
    if isinstance(m, nn.Linear):
        with tc.no_grad():
            m.weight.normal_(0.0, (2 / m.weight.shape[1]) ** 0.5)


def freeze_everything(model):
    for p in model.parameters():
        p.requires_grad_(False)


def freeze_the_head(model):
    for p in model[-1].parameters():
        p.requires_grad_(False)


def _record(model, x, leaves_only=True, remove=True):
    shapes, handles = [], []
    for name, module in model.named_modules():
        if not leaves_only or next(module.children(), None) is None:
            handles.append(module.register_forward_hook(
                lambda mod, inputs, output, name=name: shapes.append((name, tuple(output.shape)))))
    model(x)
    if remove:
        for handle in handles:
            handle.remove()
    return shapes


def record_every_module(model, x):
    return _record(model, x, leaves_only=False)


def record_keeping_hooks(model, x):
    return _record(model, x, remove=False)


class _Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden, self.out = nn.Linear(64, 32), nn.Linear(32, 10)


class ClassifierWithSoftmax(_Classifier):
    def forward(self, x):
        return F.softmax(self.out(F.relu(self.hidden(x))), dim=1)


class ClassifierWithoutReLU(_Classifier):
    def forward(self, x):
        return self.out(self.hidden(x))


class ClassifierWithLogSoftmax(_Classifier):
    def forward(self, x):
        return F.log_softmax(self.out(F.relu(self.hidden(x))), dim=1)


CATALOGUE = [
    ("03.1", LinearWithoutBias, ["your output is exactly x @ W.T: the bias is missing", "input: x = tc.randn(5, 64)"]),
    ("03.1", LinearInByOut, ["Linear(64, 10).weight.shape: expected (10, 64), got (64, 10)"]),
    ("03.1", LinearOfZeros, ["every weight has the same value"]),
    ("03.1", LinearOfPlainTensors, ["weight and bias are not registered as parameters"]),
    ("03.2", count_weights_only, ["expected 101770, got 101632", "you counted the weights only"]),
    ("03.2", count_tensors, ["got 4", "counted the parameter tensors, not the numbers in them"]),
    ("03.2", count_ignoring_trainable_only, ["trainable_only=True", "expected 1290, got 101770"]),
    ("03.3", DropoutKeepsWithP, ["your Dropout keeps elements with probability p"]),
    ("03.3", DropoutUnscaled, ["the kept values were not rescaled"]),
    ("03.3", DropoutAlwaysOn, ["your Dropout still changes its input in eval mode"]),
    ("03.4", BlockWithoutResidual, ["the input is not added back", "input: x = "]),
    ("03.4", BlockPostNorm, ["post-norm"]),
    ("03.5", init_fan_out, ["computed from fan_out"]),
    ("03.5", init_xavier, ["Xavier/Glorot"]),
    ("03.5", init_without_gain, ["the ReLU gain is missing"]),
    ("03.5", init_keeping_biases, ["model[0].bias after apply", "the biases were not set to zero"]),
    ("03.6", freeze_everything, ["every parameter is frozen, the head's too"]),
    ("03.6", freeze_the_head, ["the head was frozen and the rest left trainable"]),
    ("03.7", record_every_module, ["containers (modules with children"]),
    ("03.7", record_keeping_hooks, ["your hooks are still registered"]),
    ("03.8", ClassifierWithSoftmax, ["you returned probabilities"]),
    ("03.8", ClassifierWithoutReLU, ["there is no ReLU between the two layers"]),
    ("03.8", ClassifierWithLogSoftmax, ["you returned log-probabilities"]),
]


@pytest.mark.parametrize("exercise, wrong, phrases", CATALOGUE, ids=[f"{e}-{w.__name__}" for e, w, _ in CATALOGUE])
def test_a_wrong_answer_fails_naming_its_mistake(exercise, wrong, phrases):
    assert_names_mistake(exercise, (wrong,), *phrases)


NAMES = {"03.1": "Linear", "03.2": "count_parameters", "03.3": "Dropout", "03.4": "ResidualBlock",
         "03.5": "init_weights", "03.6": "freeze_all_but_head", "03.7": "record_shapes", "03.8": "DigitClassifier"}


test_the_stub_fails, test_every_exercise_has_two_wrong_answers = catalogue_tests(NAMES, CATALOGUE, "03")
