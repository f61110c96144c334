"""PyTorch APIs the framework does not implement fail where the program uses them, with NotImplementedError
naming the function and what to use instead (never an AttributeError from inside the framework), while
`hasattr`-style feature tests still see them as absent."""
import importlib
import warnings

import pytest
import torch

import tinygrad_course as tc
from tinygrad_course._unsupported import TABLE, UnsupportedError

_OWNERS = {"tc": (tc, torch), "Tensor": (tc.zeros(2), torch.zeros(2)), "tc.linalg": (tc.linalg, torch.linalg),
           "tc.nn": (tc.nn, torch.nn), "tc.nn.functional": (tc.nn.functional, torch.nn.functional),
           "tc.nn.utils": (tc.nn.utils, torch.nn.utils), "tc.utils": (tc.utils, torch.utils),
           "tc.special": (tc.special, torch.special), "tc.sparse": (tc.sparse, torch.sparse),
           "tc.nn.modules.lazy": (tc.nn.modules.lazy, torch.nn.modules.lazy)}
_ENTRIES = [(owner, name) for owner, names in TABLE.items() for name in names]


def _torch_has(obj, name):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if hasattr(obj, name):
                return True
        importlib.import_module(f"{obj.__name__}.{name}")
        return True
    except (ImportError, AttributeError, TypeError):
        return False


@pytest.mark.parametrize("owner, name", _ENTRIES)
def test_every_listed_name_is_pytorchs_and_raises_with_advice(owner, name):
    ours, theirs = _OWNERS[owner]
    assert _torch_has(theirs, name), f"{owner}.{name} is not a PyTorch name"
    with pytest.raises(NotImplementedError, match=rf"^{owner}\.{name} is not implemented in tinygrad_course\. "
                                                   r"Instead, .+\.$"):
        getattr(ours, name)
    assert not hasattr(ours, name)
    assert getattr(ours, name, "fallback") == "fallback"


@pytest.mark.parametrize("call", [
    "tc.fft.rfft(x)", "tc.special.gammaln(x)", "x.stft(4)", "tc.stft(x, 4)", "tc.linalg.svd(m)", "tc.quantile(x, 0.5)",
    "tc.nn.functional.grid_sample(m, m)", "tc.nn.utils.spectral_norm(tc.nn.Linear(2, 2))", "tc.vmap(tc.sin)",
    "tc.sparse_coo_tensor([[0], [1]], [1.0], (2, 2)).index_select(0, tc.tensor([0]))",
])
def test_calls_a_tutorial_makes_fail_at_the_call_with_notimplementederror(call):
    x, m = tc.arange(8.0), tc.ones(2, 2)
    with pytest.raises(UnsupportedError, match="Instead, ") as info:
        eval(call)
    assert isinstance(info.value, NotImplementedError)


def test_names_pytorch_does_not_have_keep_pythons_attributeerror():
    with pytest.raises(AttributeError, match="module 'tinygrad_course' has no attribute 'not_a_function'") as info:
        tc.not_a_function
    assert not isinstance(info.value, NotImplementedError)
    with pytest.raises(AttributeError, match="'Tensor' object has no attribute 'not_a_method'") as info:
        tc.zeros(1).not_a_method
    assert not isinstance(info.value, NotImplementedError)
    with pytest.raises(AttributeError, match="'Parameter' object has no attribute 'nope'"):
        tc.nn.Parameter(tc.zeros(1)).nope


@pytest.mark.parametrize("name", ["expit", "logit", "erf", "erfc", "erfinv", "exp2", "expm1", "log1p", "sinc",
                                  "ndtr", "entr", "round"])
def test_special_functions_match_pytorch_with_gradients(name):
    import numpy as np
    data = [-0.7, 0.0, 0.3, 0.9] if name not in ("logit", "erfinv", "entr") else [0.05, 0.3, 0.5, 0.9]
    x, tx = tc.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    a, b = getattr(tc.special, name)(x), getattr(torch.special, name)(tx)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    if name != "round":
        a.sum().backward()
        b.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_special_two_argument_and_reductions_match_pytorch():
    import numpy as np
    x, y = [0.0, 0.5, 2.0], [1.0, 0.3, 4.0]
    for name in ("xlogy", "xlog1py"):
        np.testing.assert_allclose(getattr(tc.special, name)(tc.tensor(x), tc.tensor(y)).numpy(),
                                   getattr(torch.special, name)(torch.tensor(x), torch.tensor(y)).numpy(), rtol=1e-6)
    for name in ("softmax", "log_softmax", "logsumexp"):
        np.testing.assert_allclose(getattr(tc.special, name)(tc.tensor([x, y]), 1).numpy(),
                                   getattr(torch.special, name)(torch.tensor([x, y]), 1).numpy(), rtol=1e-6)


@pytest.mark.parametrize("module, name", [("fft", "rfft"), ("distributions", "Categorical"),
                                          ("utils.tensorboard", "SummaryWriter")])
def test_absent_modules_import_and_their_names_raise_with_advice(module, name):
    ours = importlib.import_module(f"tinygrad_course.{module}")
    with pytest.raises(NotImplementedError, match=rf"^tc\.{module}\.{name} is not implemented in tinygrad_course\. "
                                                   r"Instead, .+\.$"):
        getattr(ours, name)
    assert not hasattr(ours, name)
    try:
        theirs = importlib.import_module(f"torch.{module}")
    except ImportError:  # torch.utils.tensorboard needs the tensorboard package
        return
    assert hasattr(theirs, name)


def test_checkpoint_runs_the_function_with_pytorchs_results():
    import numpy as np
    lin, tlin = tc.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    with torch.no_grad():
        tlin.weight.copy_(torch.from_numpy(lin.weight.detach().numpy()))
        tlin.bias.copy_(torch.from_numpy(lin.bias.detach().numpy()))
    x, tx = tc.ones(4, 3, requires_grad=True), torch.ones(4, 3, requires_grad=True)
    tc.utils.checkpoint.checkpoint(lin, x, use_reentrant=False).tanh().sum().backward()
    torch.utils.checkpoint.checkpoint(tlin, tx, use_reentrant=False).tanh().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5)
    seq = tc.nn.Sequential(tc.nn.Linear(3, 3), tc.nn.ReLU())
    np.testing.assert_allclose(tc.utils.checkpoint.checkpoint_sequential(seq, 2, x, use_reentrant=False).detach()
                               .numpy(), seq(x).detach().numpy())
