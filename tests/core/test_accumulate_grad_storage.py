"""What a leaf's first `.grad` is stored as: a backward's fresh result is kept as it is, even when seen through a
reshape or transpose (no copy per step), while a gradient that shares memory with anything else is copied,
so `.grad` never aliases another tensor (PyTorch's AccumulateGrad keeps a gradient only no one else holds)."""
import numpy as np

import tinygrad_course as tc


def test_linear_weight_gradient_is_kept_without_a_copy():
    lin = tc.nn.Linear(5, 4, device="cpu")  # NumPy arrays: the rule reads their reference counts
    lin(tc.randn(3, 5, device="cpu")).sum().backward()
    data = lin.weight.grad._data
    assert data.base is not None and data.flags.c_contiguous  # the product's own array, transposed back
    first = data.copy()
    lin(tc.randn(3, 5, device="cpu")).sum().backward()
    assert lin.weight.grad._data is data  # later backwards accumulate into it
    assert not np.array_equal(data, first)


def test_gradient_viewing_a_kept_tensor_is_copied():
    w = tc.randn(4, requires_grad=True)
    kept = tc.zeros(2, 4)
    w.register_hook(lambda g: kept[0])
    (w * 1).sum().backward()
    w.grad += 1
    assert kept.sum().item() == 0


def test_gradient_viewing_part_of_a_fresh_array_gets_its_own_storage():
    w = tc.randn(4, requires_grad=True)
    w.register_hook(lambda g: tc.ones(100)[:4])
    (w * 1).sum().backward()
    assert w.grad._data.base is None and w.grad._data.nbytes == 16


def test_gradient_viewing_a_whole_kept_tensor_is_copied():
    w = tc.randn(2, 3, requires_grad=True)
    kept = tc.ones(3, 2)
    w.register_hook(lambda g: kept.view(2, 3))
    (w * 1).sum().backward()
    w.grad.mul_(5)
    np.testing.assert_array_equal(kept.cpu().numpy(), np.ones((3, 2)))
