"""nn.Module behaviour against PyTorch: registration, traversal, state dicts and their errors, modes,
conversions, hooks, containers and repr."""
import pytest
import torch

import tinygrad_course as tc
import tinygrad_course.nn as nn
from tinygrad_course.autograd.engine import module_stack
from nn_helpers import assert_close, copy_weights, to_torch


def build(M):
    """The same small model in tc.nn or torch.nn (M is the namespace)."""

    class Block(M.Module):
        def __init__(self):
            super().__init__()
            self.conv = M.Conv2d(1, 4, 3, padding=1)
            self.bn = M.BatchNorm2d(4)
            self.register_buffer("scale", torch.ones(1) if M is torch.nn else tc.ones(1))
            self.register_buffer("cache", torch.zeros(2) if M is torch.nn else tc.zeros(2), persistent=False)

        def forward(self, x):
            return M.functional.relu(self.bn(self.conv(x))) * self.scale

    class Net(M.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.layers = M.ModuleList([M.Linear(4, 4), M.Linear(4, 4), M.Linear(4, 3)])
            self.heads = M.ModuleDict({"a": M.Linear(3, 2), "b": M.Identity()})
            self.shared = self.layers[0]
            self.seq = M.Sequential(M.Flatten(), M.Dropout(0.1))
            self.alpha = M.Parameter(torch.ones(1) if M is torch.nn else tc.ones(1))

        def forward(self, x):
            x = self.block(x).mean((2, 3))
            for layer in self.layers:
                x = layer(x)
            return self.heads["a"](x) * self.alpha

    return Net()


def test_names_and_traversal_match_torch():
    ours, theirs = build(nn), build(torch.nn)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert list(ours.state_dict().keys()) == list(theirs.state_dict().keys())
    assert len(list(ours.parameters())) == len(list(theirs.parameters()))  # shared layer counted once
    assert all(isinstance(p, tc.Tensor) and isinstance(p, nn.Parameter) for p in ours.parameters())
    assert len(list(ours.modules())) == len(list(theirs.modules()))


def test_repr_layout_matches_torch():
    ours, theirs = build(nn), build(torch.nn)
    assert repr(ours) == repr(theirs)
    assert repr(nn.ModuleList()) == repr(torch.nn.ModuleList())
    layers = [nn.Linear(2, 2) for _ in range(3)]
    tlayers = [torch.nn.Linear(2, 2) for _ in range(3)]
    assert repr(nn.ModuleList(layers)) == repr(torch.nn.ModuleList(tlayers))
    for spec in ["BatchNorm1d(3, affine=False)", "LayerNorm((2, 3))", "Embedding(5, 2, padding_idx=0)",
                 "Conv2d(2, 4, 3, stride=2, padding=1, dilation=2, groups=2, bias=False)", "MaxPool2d(2)",
                 "AvgPool2d(3, stride=1)", "AdaptiveAvgPool2d((2, 2))", "GELU(approximate='tanh')", "LeakyReLU()",
                 "ReLU(inplace=True)", "Unflatten(1, (2, 2))", "Softmax(dim=1)", "CrossEntropyLoss()", "Dropout(0.2)"]:
        assert repr(eval("nn." + spec)) == repr(eval("torch.nn." + spec)), spec


def test_parameter_repr_and_identity():
    p = nn.Parameter(tc.tensor([1.0, 2.0]))
    tp = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    assert repr(p) == repr(tp).replace("torch.", "tc.")
    assert p.requires_grad and p.is_leaf and isinstance(p, tc.Tensor)
    assert not nn.Parameter(tc.ones(2), requires_grad=False).requires_grad
    (p * 3).sum().backward()
    assert p.grad.tolist() == [3.0, 3.0]


def test_state_dict_round_trip_and_torch_interchange():
    ours, theirs = build(nn), build(torch.nn)
    ours.train()
    ours(tc.randn(2, 1, 5, 5))  # change running stats
    copy_weights(ours, theirs)
    other = build(nn)
    result = other.load_state_dict(ours.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    for (k, a), (_, b) in zip(other.state_dict().items(), ours.state_dict().items()):
        assert tc.equal(a, b), k
    ours.eval(), theirs.eval(), other.eval()
    x = tc.randn(2, 1, 5, 5)
    assert_close(ours(x), theirs(to_torch(x)))
    assert tc.equal(other(x), ours(x))
    assert "cache" not in ours.state_dict()
    sd = ours.state_dict()
    assert not any(v.requires_grad for v in sd.values())
    assert ours.state_dict(keep_vars=True)["alpha"] is ours.alpha


def _error(fn):
    with pytest.raises(RuntimeError) as info:
        fn()
    return str(info.value).replace("torch.", "tc.")


def test_load_state_dict_errors_match_torch():
    ours, theirs = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)), torch.nn.Sequential(
        torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))
    sd = {k: v for k, v in ours.state_dict().items() if k != "2.bias"}
    sd["0.weight"] = tc.zeros(4, 2)
    sd["extra"] = tc.zeros(1)
    sd["2.weight.x"] = tc.zeros(1)
    tsd = {k: to_torch(v) for k, v in sd.items()}
    assert _error(lambda: ours.load_state_dict(sd)) == _error(lambda: theirs.load_state_dict(tsd))
    sd.pop("0.weight")
    tsd.pop("0.weight")
    result = ours.load_state_dict(sd, strict=False)
    tresult = theirs.load_state_dict(tsd, strict=False)
    assert result.missing_keys == tresult.missing_keys and result.unexpected_keys == tresult.unexpected_keys


def test_train_eval_to_apply_zero_grad_requires_grad():
    model = build(nn)
    assert model.training and model.block.bn.training
    assert model.eval() is model and not model.block.bn.training and not model.seq[1].training
    model.train()
    assert model.seq[1].training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        model.train("yes")
    model.to(tc.float64)
    assert all(p.dtype == tc.float64 for p in model.parameters())
    assert model.block.bn.num_batches_tracked.dtype == tc.int64  # integer buffers keep their dtype
    param = model.alpha
    model.to(tc.float32)
    assert model.alpha is param and param.dtype == tc.float32  # parameters converted in place
    seen = []
    model.apply(lambda m: seen.append(type(m).__name__))
    assert seen[-1] == "Net" and seen[0] == "Conv2d"
    model(tc.randn(2, 1, 4, 4)).sum().backward()
    assert model.alpha.grad is not None
    model.zero_grad(set_to_none=False)
    assert model.alpha.grad.tolist() == [0.0]
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    model.requires_grad_(False)
    assert not any(p.requires_grad for p in model.parameters())


def test_registration_errors_and_attribute_rules():
    m = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="cannot assign 'tc.FloatTensor' as parameter 'weight'"):
        m.weight = tc.zeros(2, 2)
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'"):
        m.nope
    with pytest.raises(KeyError, match="attribute 'weight' already exists"):
        m.register_buffer("weight", tc.zeros(1))

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(tc.ones(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()
    m.bias = None
    assert [n for n, _ in m.named_parameters()] == ["weight"]
    del m.weight
    assert list(m.parameters()) == []
    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        nn.Module()(1)


def test_forward_hooks_and_pre_hooks():
    lin = nn.Linear(3, 2)
    calls = []
    h1 = lin.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    h2 = lin.register_forward_hook(lambda m, args, out: calls.append(out.shape) or out + 1)
    out = lin(tc.randn(4, 3))
    assert calls == [(4, 2)]
    assert tc.allclose(out, lin.bias.detach().expand(4, 2) + 1)
    h1.remove()
    h2.remove()
    x = tc.randn(4, 3)
    assert tc.equal(lin(x), lin.forward(x)) and calls == [(4, 2)]


def test_full_backward_hook_matches_torch():
    ours, theirs = nn.Linear(3, 2), torch.nn.Linear(3, 2)
    copy_weights(ours, theirs)
    seen, tseen = [], []

    def hook(store):
        def fn(module, grad_input, grad_output):
            store.append((grad_input[0].detach().cpu().numpy().copy(), grad_output[0].detach().cpu().numpy().copy()))
            return (grad_input[0] * 2,)
        return fn

    handle = ours.register_full_backward_hook(hook(seen))
    theirs.register_full_backward_hook(hook(tseen))
    x = tc.randn(4, 3, requires_grad=True)
    tx = to_torch(x)
    (ours(x) ** 2).sum().backward()
    (theirs(tx) ** 2).sum().backward()
    assert len(seen) == len(tseen) == 1
    for a, b in zip(seen[0], tseen[0]):
        assert a.shape == b.shape
        assert abs(a - b).max() < 1e-5
    assert_close(x.grad, tx.grad)  # the hook doubled grad_input in both
    handle.remove()
    x.grad = None
    ours(x).sum().backward()
    assert len(seen) == 1


def test_backward_hook_when_input_needs_no_grad():
    lin = nn.Linear(3, 2)
    got = []
    lin.register_full_backward_hook(lambda m, gi, go: got.append((gi, go[0].shape)))
    lin(tc.randn(4, 3)).sum().backward()
    assert got == [((None,), (4, 2))]


def test_module_stack_is_recorded_on_graph_nodes():
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    out = model(tc.randn(1, 2))
    assert out.grad_fn.modules == (model, model[1])
    assert out.grad_fn.next_functions[0][0].modules == (model, model[0])
    assert module_stack.modules == ()
    with pytest.raises(RuntimeError):
        model(tc.randn(1, 5))
    assert module_stack.modules == ()  # restored after an exception


def test_sequential_container_operations():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(seq) == 3 and isinstance(seq[-1], nn.Linear)
    head = seq[:2]
    assert isinstance(head, nn.Sequential) and len(head) == 2 and head[0] is seq[0]
    seq.append(nn.Sigmoid())
    assert len(seq) == 4 and [n for n, _ in seq.named_children()][-1] == "3"
    with pytest.raises(IndexError):
        seq[10]
    del seq[1]
    assert [n for n, _ in seq.named_children()] == ["0", "1", "2"]
    from collections import OrderedDict

    named = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.Tanh())]))
    assert named.fc is named[0]
    md = nn.ModuleDict({"x": nn.ReLU()})
    md["y"] = nn.Tanh()
    assert list(md.keys()) == ["x", "y"] and "y" in md and len(md) == 2
