"""`Tensor._make_subclass(cls, data, require_grad=False)`, how `nn.Parameter` is made: parity with PyTorch 2.13."""
import numpy as np
import pytest
import torch

import tinygrad_course as tc


class Mine(tc.Tensor):
    pass


class TorchMine(torch.Tensor):
    pass


@pytest.mark.parametrize("require_grad", [False, True])
def test_a_subclass_over_the_same_storage_as_torch(require_grad):
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    data, tdata = tc.tensor(values), torch.tensor(values)
    made = tc.Tensor._make_subclass(Mine, data, require_grad)
    tmade = torch.Tensor._make_subclass(TorchMine, tdata, require_grad)
    assert type(made) is Mine and type(tmade) is TorchMine
    assert (made.requires_grad, made.is_leaf, made.grad, made.dtype == data.dtype) == (
        tmade.requires_grad, tmade.is_leaf, tmade.grad, True)
    with tc.no_grad():
        data.mul_(2.0)  # an in-place change of data shows in the subclass and bumps the one version counter
    with torch.no_grad():
        tdata.mul_(2.0)
    assert made.tolist() == tmade.tolist()
    assert made._version[0] == tmade._version == 1


def test_a_non_leaf_is_cut_from_its_graph_and_a_view_is_not_a_view_any_more():
    x, tx = tc.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
    made = tc.Tensor._make_subclass(Mine, x * 2, True)
    tmade = torch.Tensor._make_subclass(TorchMine, tx * 2, True)
    assert (made.is_leaf, made.grad_fn, made.requires_grad) == (tmade.is_leaf, tmade.grad_fn, tmade.requires_grad)
    (made * 3).sum().backward()
    (tmade * 3).sum().backward()
    assert made.grad.tolist() == tmade.grad.tolist() and x.grad is None and tx.grad is None
    base, tbase = tc.arange(4.0), torch.arange(4.0)
    assert tc.Tensor._make_subclass(Mine, base[1:])._base is None and torch.Tensor._make_subclass(
        TorchMine, tbase[1:])._base is None


@pytest.mark.parametrize("call", [
    lambda T, Sub: T.Tensor._make_subclass(Sub, [1.0, 2.0]),              # data must be a tensor
    lambda T, Sub: T.Tensor._make_subclass(int, T.ones(2)),               # cls must subclass Tensor
    lambda T, Sub: T.Tensor._make_subclass("Mine", T.ones(2)),            # cls must be a type
    lambda T, Sub: T.Tensor._make_subclass(Sub, T.arange(3), True),       # only float data can require grad
], ids=["data-not-a-tensor", "not-a-tensor-class", "not-a-type", "int-requires-grad"])
def test_errors_have_torchs_words(call):
    with pytest.raises(Exception) as theirs:
        call(torch, TorchMine)
    with pytest.raises(type(theirs.value)) as ours:
        call(tc, Mine)
    assert str(ours.value).startswith(str(theirs.value))


def test_parameter_is_made_this_way():
    data = tc.tensor([1.0, 2.0])
    p = tc.nn.Parameter(data)
    assert type(p) is tc.nn.Parameter and p.requires_grad and p.is_leaf and p._version is data._version
    assert repr(p) == "Parameter containing:\n" + repr(data.requires_grad_(True))
    empty, tempty = tc.nn.Parameter(), torch.nn.Parameter()
    assert tuple(empty.shape) == tuple(tempty.shape) and empty.requires_grad == tempty.requires_grad
