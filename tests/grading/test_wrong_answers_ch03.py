"""Catalogue of wrong answers, chapter 03 (modules): each realistic mistake fails with a message that names
it, the hint waits for a second failure, and the unsolved stub fails."""
import pytest

import tinygrad_course as tc
from tinygrad_course import nn

from .wrong_answers import assert_names_mistake, catalogue_tests, solution

F = nn.functional


from collections import OrderedDict  # noqa: E402  (the released solution's layers use it)

class Linear(nn.Module):
    """y = x @ W.T + b with W of shape (out_features, in_features), like nn.Linear."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = nn.Parameter(tc.empty(out_features, in_features, device=device, dtype=dtype))
        if bias:
            self.bias = nn.Parameter(tc.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / self.in_features ** 0.5
        nn.init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x):
        out = x @ self.weight.T
        return out + self.bias if self.bias is not None else out


class Tanh(nn.Module):
    """tanh of every element, like nn.Tanh."""

    def forward(self, input):
        return tc.tanh(input)


class ReLU(nn.Module):
    """max(x, 0) of every element, like nn.ReLU (in place with inplace=True)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return input.relu_() if self.inplace else input.relu()


class Sequential(nn.Module):
    """Modules applied one after another, like nn.Sequential."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        n = len(self._modules)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return list(self._modules.values())[idx % n]

    def __len__(self):
        return len(self._modules)

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input


class TanhAsSigmoid(Tanh):
    def forward(self, input):
        return tc.sigmoid(input)


class ReLUAsAbs(ReLU):
    def forward(self, input):
        return input.abs()


class SequentialInAList(Sequential):
    def __init__(self, *args):
        nn.Module.__init__(self)
        self.layers = list(args)

    def forward(self, input):
        for module in self.layers:
            input = module(input)
        return input


class SequentialSliceAsList(Sequential):
    def __getitem__(self, idx):
        return list(self._modules.values())[idx]


def layers(**wrong):
    """The four classes of exercise 03.1, the released solution's except the wrong ones given."""
    return tuple(wrong.get(name, default) for name, default in
                 (("Linear", Linear), ("Tanh", Tanh), ("ReLU", ReLU), ("Sequential", Sequential)))


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


class DropoutNaNAtOne(_Dropout):
    def __init__(self, p=0.5, inplace=False):
        super().__init__(p)
        self.inplace = inplace

    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        return x * (tc.rand_like(x) >= self.p).to(x.dtype) / (1 - self.p)


class DropoutAlwaysOn(_Dropout):
    def forward(self, x):
        return x * (tc.rand_like(x) >= self.p).to(x.dtype) / (1 - self.p)


class LayerNorm(nn.Module):
    """Normalise over the last len(normalized_shape) dimensions, then scale and shift, like nn.LayerNorm."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = nn.Parameter(tc.ones(self.normalized_shape, device=device, dtype=dtype))
            if bias:
                self.bias = nn.Parameter(tc.zeros(self.normalized_shape, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        dims = tuple(range(-len(self.normalized_shape), 0))
        centred = input - input.mean(dim=dims, keepdim=True)
        var = (centred * centred).mean(dim=dims, keepdim=True)  # the biased variance, as PyTorch's
        out = centred / (var + self.eps).sqrt()
        if self.weight is not None:
            out = out * self.weight
        if self.bias is not None:
            out = out + self.bias
        return out


class LayerNormUnbiased(LayerNorm):
    def forward(self, input):
        dims = tuple(range(-len(self.normalized_shape), 0))
        out = (input - input.mean(dim=dims, keepdim=True)) / (input.var(dim=dims, keepdim=True) + self.eps).sqrt()
        return out * self.weight + self.bias


class LayerNormEpsOutside(LayerNorm):
    def forward(self, input):
        dims = tuple(range(-len(self.normalized_shape), 0))
        centred = input - input.mean(dim=dims, keepdim=True)
        out = centred / ((centred * centred).mean(dim=dims, keepdim=True).sqrt() + self.eps)
        return out * self.weight + self.bias


class LayerNormWithoutAffine(LayerNorm):
    def forward(self, input):
        dims = tuple(range(-len(self.normalized_shape), 0))
        centred = input - input.mean(dim=dims, keepdim=True)
        return centred / ((centred * centred).mean(dim=dims, keepdim=True) + self.eps).sqrt()


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


INIT = ("_calculate_fan_in_and_fan_out", "uniform_", "normal_", "zeros_", "kaiming_uniform_", "xavier_uniform_",
        "init_weights")
_INIT = dict(zip(INIT, solution("03", *INIT)))


def inits(**wrong):
    """The solution's seven nn.init functions of exercise 03.4, with the wrong ones given by name."""
    return tuple(wrong.get(name, _INIT[name]) for name in INIT)


def fans_swapped(tensor):
    fan_in, fan_out = _INIT["_calculate_fan_in_and_fan_out"](tensor)
    return fan_out, fan_in


def fans_without_kernel(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    return tensor.shape[1], tensor.shape[0]


def uniform_without_bounds(tensor, a=0.0, b=1.0, generator=None):
    with tc.no_grad():
        return tensor.uniform_(generator=generator)


def uniform_outside_no_grad(tensor, a=0.0, b=1.0, generator=None):
    return tensor.uniform_(a, b, generator=generator)


def normal_with_variance(tensor, mean=0.0, std=1.0, generator=None):
    with tc.no_grad():
        return tensor.normal_(mean, std ** 2, generator=generator)


def _kaiming(tensor, a, mode, nonlinearity, generator, bound_of):
    fan_in, fan_out = _INIT["_calculate_fan_in_and_fan_out"](tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    bound = bound_of(nn.init.calculate_gain(nonlinearity, a), fan)
    return _INIT["uniform_"](tensor, -bound, bound, generator)


def kaiming_without_gain(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    return _kaiming(tensor, a, mode, nonlinearity, generator, lambda gain, fan: (3 / fan) ** 0.5)


def kaiming_std_as_bound(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    return _kaiming(tensor, a, mode, nonlinearity, generator, lambda gain, fan: gain / fan ** 0.5)


def xavier_fan_in_only(tensor, gain=1.0, generator=None):
    fan_in, _ = _INIT["_calculate_fan_in_and_fan_out"](tensor)
    a = gain * (6 / fan_in) ** 0.5
    return _INIT["uniform_"](tensor, -a, a, generator)


Embedding, ModuleList = solution("03", "Embedding", "ModuleList")


class EmbeddingDetached(Embedding):
    def forward(self, input):
        return self.weight.detach()[input]


class EmbeddingUniform(Embedding):
    def reset_parameters(self):
        nn.init.uniform_(self.weight, -1.0, 1.0)


class EmbeddingNegativePadding(Embedding):
    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        super().__init__(num_embeddings, embedding_dim, None, max_norm, norm_type, scale_grad_by_freq, sparse,
                         _weight, _freeze, device, dtype)
        self.padding_idx = padding_idx


class ModuleListInAList(ModuleList):
    def __init__(self, modules=None):
        super().__init__()
        object.__setattr__(self, "items", list(modules or []))

    def __len__(self):
        return len(self.items)

    def __iter__(self):
        return iter(self.items)


class ModuleListExtendAnything(ModuleList):
    def extend(self, modules):
        for module in list(modules) if hasattr(modules, "__iter__") else [modules]:
            self.append(module)
        return self


class ModuleListSliceAsList(ModuleList):
    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return list(self._modules.values())[idx]
        return super().__getitem__(idx)


CATALOGUE = [
    ("03.1", layers(Linear=LinearWithoutBias), ["your output is exactly x @ W.T: the bias is missing", "input: x = tc.randn(5, 64)"]),
    ("03.1", layers(Linear=LinearInByOut), ["Linear(64, 10).weight.shape: expected (10, 64), got (64, 10)"]),
    ("03.1", layers(Linear=LinearOfZeros), ["every weight has the same value"]),
    ("03.1", layers(Linear=LinearOfPlainTensors), ["weight and bias are not registered as parameters"]),
    ("03.1", layers(Tanh=TanhAsSigmoid), ["that is the sigmoid, not tanh"]),
    ("03.1", layers(ReLU=ReLUAsAbs), ["negative inputs became positive (abs)"]),
    ("03.1", layers(Sequential=SequentialInAList), ["list(Sequential(a, b, c)._modules): expected ['0', '1', '2'], got []"]),
    ("03.1", layers(Sequential=SequentialSliceAsList), ["seq[1:] to be a Sequential"]),
    ("03.2", DropoutKeepsWithP, ["your Dropout keeps elements with probability p"]),
    ("03.2", DropoutUnscaled, ["the kept values were not rescaled"]),
    ("03.2", DropoutNaNAtOne, ["Dropout(1.0) in training mode", "dividing by 1 - p = 0 gave NaN"]),
    ("03.2", DropoutAlwaysOn, ["your Dropout still changes its input in eval mode"]),
    ("03.3", LayerNormUnbiased, ["you divided by the unbiased variance (n - 1)", "input: x = "]),
    ("03.3", LayerNormEpsOutside, ["eps was added to the standard deviation"]),
    ("03.3", LayerNormWithoutAffine, ["the weight and bias were not applied"]),
    ("03.4", inits(_calculate_fan_in_and_fan_out=fans_swapped), ["fan_in and fan_out are swapped"]),
    ("03.4", inits(_calculate_fan_in_and_fan_out=fans_without_kernel), ["the kernel's size", "was not multiplied in"]),
    ("03.4", inits(uniform_=uniform_without_bounds), ["your values lie in [0, 1): a and b were not used"]),
    ("03.4", inits(uniform_=uniform_outside_no_grad), ["changing a parameter in place raised"]),
    ("03.4", inits(normal_=normal_with_variance), ["std was used as the variance"]),
    ("03.4", inits(kaiming_uniform_=kaiming_without_gain), ["your bound has no gain"]),
    ("03.4", inits(kaiming_uniform_=kaiming_std_as_bound), ["your bound is the standard deviation"]),
    ("03.4", inits(xavier_uniform_=xavier_fan_in_only), ["your bound uses fan_in alone"]),
    ("03.4", inits(init_weights=init_fan_out), ["computed from fan_out"]),
    ("03.4", inits(init_weights=init_xavier), ["Xavier/Glorot"]),
    ("03.4", inits(init_weights=init_without_gain), ["the ReLU gain is missing"]),
    ("03.4", inits(init_weights=init_keeping_biases), ["model[0].bias after apply", "the biases were not set to zero"]),
    ("03.5", (EmbeddingDetached, ModuleList), ["emb(idx) to be connected to the autograd graph"]),
    ("03.5", (EmbeddingUniform, ModuleList), ["drawn uniformly, not from N(0, 1)"]),
    ("03.5", (EmbeddingNegativePadding, ModuleList), ["Embedding(10, 4, padding_idx=-2).padding_idx: expected 8, got -2"]),
    ("03.5", (Embedding, ModuleListInAList), ["the modules are not registered"]),
    ("03.5", (Embedding, ModuleListExtendAnything), ["the message of ml.extend(3)'s TypeError", "ModuleList.extend should be called with an iterable"]),
    ("03.5", (Embedding, ModuleListSliceAsList), ["ml[1:] to be a new ModuleList"]),
]


def _name(exercise, wrong):
    if not isinstance(wrong, tuple):
        return wrong.__name__
    if len(wrong) == len(INIT):  # exercise 03.4: the wrong one of the seven
        return next(w.__name__ for w, name in zip(wrong, INIT) if w is not _INIT[name])
    if len(wrong) == 2:  # exercise 03.5: (Embedding, ModuleList)
        return next(w.__name__ for w, right in zip(wrong, (Embedding, ModuleList)) if w is not right)
    return next(w.__name__ for w, right in zip(wrong, layers()) if w is not right)


@pytest.mark.parametrize("exercise, wrong, phrases", CATALOGUE, ids=[f"{e}-{_name(e, w)}" for e, w, _ in CATALOGUE])
def test_a_wrong_answer_fails_naming_its_mistake(exercise, wrong, phrases):
    assert_names_mistake(exercise, wrong if isinstance(wrong, tuple) else (wrong,), *phrases)


NAMES = {"03.1": ("Linear", "Tanh", "ReLU", "Sequential"), "03.2": "Dropout", "03.3": "LayerNorm",
         "03.4": INIT, "03.5": ("Embedding", "ModuleList")}


test_the_stub_fails, test_every_exercise_has_two_wrong_answers = catalogue_tests(NAMES, CATALOGUE, "03")
