"""Helpers shared by the framework-core tests: move data between tc and torch and compare them."""
from __future__ import annotations

import numpy as np
import torch

import tinygrad_course as tc

DTYPE_PAIRS = [
    (tc.bool, torch.bool), (tc.uint8, torch.uint8), (tc.int8, torch.int8), (tc.int16, torch.int16),
    (tc.int32, torch.int32), (tc.int64, torch.int64), (tc.float16, torch.float16),
    (tc.bfloat16, torch.bfloat16), (tc.float32, torch.float32), (tc.float64, torch.float64),
]
TC_TO_TORCH = {a: b for a, b in DTYPE_PAIRS}
TORCH_TO_TC = {b: a for a, b in DTYPE_PAIRS}


def to_torch(t: tc.Tensor, requires_grad=None) -> torch.Tensor:
    """A torch copy of tc tensor `t` (same values, dtype and shape)."""
    data = t.detach().cpu()._data
    if t.dtype is tc.bfloat16:
        out = torch.from_numpy(data.astype(np.float32)).to(torch.bfloat16)
    else:
        out = torch.from_numpy(np.array(data))
    rg = t.requires_grad if requires_grad is None else requires_grad
    return out.requires_grad_(rg) if rg else out


def to_tc(t: torch.Tensor, requires_grad=None) -> tc.Tensor:
    """A tc copy of torch tensor `t`."""
    d = t.detach()
    if d.dtype is torch.bfloat16:
        out = tc.tensor(d.float().numpy()).to(tc.bfloat16)
    else:
        out = tc.tensor(d.numpy().copy())
    rg = t.requires_grad if requires_grad is None else requires_grad
    return out.requires_grad_(rg) if rg else out


def pair(np_array, requires_grad=False):
    """The same data as a (tc, torch) pair of leaves."""
    a = tc.tensor(np.array(np_array))
    b = torch.tensor(np.array(np_array))
    if requires_grad:
        a.requires_grad_(True)
        b.requires_grad_(True)
    return a, b


def assert_same(ours, theirs, rtol=1e-5, atol=1e-6, check_dtype=True):
    """Values, shape and dtype of a tc result equal a torch result (recursing into tuples/lists)."""
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)), f"expected a sequence, got {type(ours)}"
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            assert_same(o, t, rtol, atol, check_dtype)
        return
    if not isinstance(theirs, torch.Tensor):
        assert ours == theirs or np.isclose(ours, theirs, rtol=rtol, atol=atol), (ours, theirs)
        return
    assert isinstance(ours, tc.Tensor), f"expected a tc.Tensor, got {type(ours)}"
    assert tuple(ours.shape) == tuple(theirs.shape), (ours.shape, theirs.shape)
    if check_dtype:
        assert TC_TO_TORCH[ours.dtype] is theirs.dtype, (ours.dtype, theirs.dtype)
    ours = ours.detach().cpu()
    a = ours._data.astype(np.float64) if ours.dtype.is_floating_point else ours._data
    b = theirs.detach().to(torch.float64).numpy() if theirs.dtype.is_floating_point else theirs.detach().numpy()
    if a.dtype == np.bool_ or np.issubdtype(a.dtype, np.integer):
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


def error_of(fn):
    """(exception type, message) raised by `fn()`, or (None, None)."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - we compare whatever was raised
        return type(e), str(e)
    return None, None


def assert_same_error(ours_fn, torch_fn, match_message=True):
    """Both callables raise the same exception type; our message starts with torch's first sentence."""
    te, tm = error_of(torch_fn)
    oe, om = error_of(ours_fn)
    assert te is not None, "torch did not raise"
    assert oe is not None, f"tc did not raise (torch raised {te.__name__}: {tm})"
    assert issubclass(oe, te) or oe is te, f"{oe.__name__}: {om}  vs torch {te.__name__}: {tm}"
    if match_message:
        expected = tm.replace("torch.", "tc.").split("\n")[0]
        assert om.startswith(expected[: max(20, len(expected) // 2)]), f"\n ours: {om}\ntorch: {tm}"


def assert_same_values_and_sum_grads(out, tout, *leaf_pairs):
    """tc result `out` equals torch result `tout`, and after backpropagating their sums each (tc, torch) pair of
    leaves in `leaf_pairs` has the same gradient."""
    assert_same(out, tout)
    out.sum().backward()
    tout.sum().backward()
    for leaf, tleaf in leaf_pairs:
        assert_same(leaf.grad, tleaf.grad)
