"""Attributes (Size, strides, item/tolist/numpy, clone/detach), views sharing storage, indexing."""
import numpy as np
import pytest
import torch
from core_helpers import assert_same, assert_same_error, error_of, pair
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tinygrad_course as tc


def test_size_prints_and_behaves_like_a_tuple():
    x = tc.zeros(2, 3)
    assert repr(x.shape) == "tc.Size([2, 3])" and str(x.size()) == "tc.Size([2, 3])"
    assert repr(tc.zeros(()).shape) == "tc.Size([])"
    assert x.shape == (2, 3) and isinstance(x.shape, tuple)
    assert x.size(1) == 3 and x.size(-2) == 2 and x.shape[1:] == tc.Size([3])
    assert isinstance(x.shape[1:], tc.Size) and x.shape.numel() == 6
    assert x.ndim == 2 and x.dim() == 2 and x.numel() == 6 and str(x.device) == "cpu"
    assert repr(x.dtype) == "tc.float32"


def _views(x):
    """(name, fn) pairs producing views; fn works on tc and torch alike."""
    return [
        ("view", lambda t: t.view(4, 6)), ("view-1", lambda t: t.view(-1)), ("reshape", lambda t: t.reshape(2, 12)),
        ("flatten", lambda t: t.flatten()), ("flatten12", lambda t: t.flatten(1)),
        ("unsqueeze", lambda t: t.unsqueeze(1)), ("unsqueeze-1", lambda t: t.unsqueeze(-1)),
        ("permute", lambda t: t.permute(2, 0, 1)), ("transpose", lambda t: t.transpose(0, 2)),
        ("mT", lambda t: t.mT), ("slice", lambda t: t[1:, ::2]), ("int", lambda t: t[1]),
        ("int-slice", lambda t: t[:, 1, 1:3]), ("ellipsis", lambda t: t[..., 2]), ("none", lambda t: t[0, None]),
        ("narrow", lambda t: t.narrow(2, 1, 2)), ("expand", lambda t: t[:, :1].expand(2, 5, 4)),
        ("squeeze", lambda t: t[:, :1].squeeze(1)), ("squeeze-all", lambda t: t[:1, :1].squeeze()),
        ("unbind", lambda t: t.unbind(1)[2]), ("split", lambda t: t.split(2, dim=2)[1]),
        ("chunk", lambda t: t.chunk(3, dim=1)[2]), ("T2", lambda t: t[0].T), ("t", lambda t: t[1].t()),
        ("step-slice", lambda t: t[:, 1::2, ::3]), ("detach", lambda t: t.detach()),
    ]


@pytest.mark.parametrize("name", [n for n, _ in _views(None)])
def test_views_share_storage_and_match_torch_strides(name):
    fn = dict(_views(None))[name]
    base = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x, tx = pair(base)
    v, tv = fn(x), fn(tx)
    assert_same(v, tv)
    assert v.stride() == tv.stride(), (v.stride(), tv.stride())
    assert v.storage_offset() == tv.storage_offset()
    assert v.is_contiguous() == tv.is_contiguous()
    # writing through the base shows in the view
    x.add_(100)
    tx.add_(100)
    assert_same(v, tv)
    assert v.contiguous().is_contiguous() and v.contiguous().stride() == tv.contiguous().stride()


def test_write_through_view_changes_base():
    x = tc.zeros(2, 3)
    x.view(6)[4] = 1.0
    x[0].fill_(2.0)
    x.t()[2, 1] += 3.0
    assert x.tolist() == [[2.0, 2.0, 2.0], [0.0, 1.0, 3.0]]


def test_contiguous_returns_self_when_contiguous():
    x = tc.zeros(2, 3)
    assert x.contiguous() is x
    y = x.t().contiguous()
    assert y is not x and y.is_contiguous() and y.stride() == (2, 1)


def test_reshape_copies_when_needed_and_view_fails_with_torch_message():
    x, tx = pair(np.arange(6.0).reshape(2, 3))
    r = x.t().reshape(6)
    assert_same(r, tx.t().reshape(6))
    x[0, 0] = 50.0
    assert r[0].item() == 0.0  # a copy
    assert_same_error(lambda: x.t().view(6), lambda: tx.t().view(6))
    assert_same_error(lambda: x.view(4), lambda: tx.view(4))
    assert_same_error(lambda: x.view(-1, -1), lambda: tx.view(-1, -1))


RESHAPES = {
    "contiguous": lambda a: a.reshape(24),
    "transposed_copy": lambda a: a.t().reshape(24),
    "strided_rows_copy": lambda a: a[::2].reshape(12),
    "strided_alias": lambda a: a[:, ::2].reshape(4, 3),
    "transposed_alias_split": lambda a: a.t().reshape(6, 2, 2),
    "slice_alias_unsqueeze": lambda a: a[:, :3].reshape(4, 3, 1),
}


@pytest.mark.parametrize("name", sorted(RESHAPES))
def test_reshape_records_torchs_nodes_and_copies_are_not_views(name):
    fn = RESHAPES[name]
    x, tx = pair(np.arange(24.0).reshape(4, 6))
    x.requires_grad_(), tx.requires_grad_()
    ours, theirs = fn(x * 1), fn(tx * 1)
    assert ours.grad_fn.name() == theirs.grad_fn.name()
    assert [n.name() for n, _ in ours.grad_fn.next_functions] == [n.name() for n, _ in theirs.grad_fn.next_functions]
    assert ours._is_view() == theirs._is_view()
    base, tbase = x * 1, tx * 1
    r, tr = fn(base), fn(tbase)
    r.mul_(2), tr.mul_(2)  # through a view this changes the base; through a copy it does not
    assert_same(base, tbase)
    (r * r).sum().backward(), (tr * tr).sum().backward()
    assert_same(x.grad, tx.grad)


def test_item_tolist_numpy():
    assert tc.tensor(3).item() == 3 and isinstance(tc.tensor(3).item(), int)
    assert tc.tensor([2.5]).item() == 2.5 and tc.tensor(True).item() is True
    assert tc.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert tc.tensor(1.5).tolist() == 1.5
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        tc.tensor([1, 2]).item()
    x = tc.tensor([1.0, 2.0])
    assert isinstance(x.numpy(), np.ndarray) and np.shares_memory(x.numpy(), x._data)
    w = tc.tensor([1.0], requires_grad=True)
    _, torch_msg = None, None
    try:
        torch.tensor([1.0], requires_grad=True).numpy()
    except RuntimeError as e:
        torch_msg = str(e)
    with pytest.raises(RuntimeError) as info:
        w.numpy()
    assert str(info.value).startswith(torch_msg)
    assert w.detach().numpy().tolist() == [1.0]


def test_clone_and_detach():
    x = tc.tensor([1.0, 2.0], requires_grad=True)
    c = x.clone()
    assert c.grad_fn.name() == "CloneBackward0" and c.requires_grad
    assert not np.shares_memory(c._data, x._data)
    d = x.detach()
    assert not d.requires_grad and d.grad_fn is None and np.shares_memory(d._data, x._data)
    (c * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_requires_grad_():
    x = tc.zeros(2)
    assert x.requires_grad_() is x and x.requires_grad
    y = x * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad_(False)


# ---- indexing ---------------------------------------------------------------------------------------

INDICES = [
    lambda m: (1,), lambda m: (slice(1, None), 2), lambda m: (Ellipsis, 1), lambda m: (None, 0, slice(None, None, 2)),
    lambda m: (m.tensor([0, 2, 2]),), lambda m: (m.tensor([[0, 1], [2, 0]]), slice(None)),
    lambda m: (m.tensor([0, 2]), m.tensor([1, 3])), lambda m: (slice(None), m.tensor([3, 0])),
    lambda m: (m.arange(3) > 0,), lambda m: (-1, -2), lambda m: ([0, 1],), lambda m: (m.tensor(1),),
]


@pytest.mark.parametrize("k", range(len(INDICES)))
def test_getitem_matches_torch_and_advanced_indexing_copies(k):
    x, tx = pair(np.arange(12.0).reshape(3, 4))
    idx, tidx = INDICES[k](tc), INDICES[k](torch)
    r, tr = x[idx], tx[tidx]
    assert_same(r, tr)
    if r.numel():
        assert np.shares_memory(r._data, x._data) == (tr.untyped_storage().data_ptr() == tx.untyped_storage().data_ptr())


def test_boolean_mask_indexing():
    x, tx = pair(np.array([[1.0, -2.0], [-3.0, 4.0]]))
    assert_same(x[x > 0], tx[tx > 0])
    assert_same(x[tc.tensor([True, False])], tx[torch.tensor([True, False])])


@pytest.mark.parametrize("k", range(len(INDICES)))
def test_setitem_matches_torch(k):
    x, tx = pair(np.arange(12.0).reshape(3, 4))
    idx, tidx = INDICES[k](tc), INDICES[k](torch)
    x[idx] = -1.0
    tx[tidx] = -1.0
    assert_same(x, tx)
    shape = tx[tidx].shape
    vals = np.arange(float(np.prod(shape))).reshape(shape) + 100
    x[idx] = tc.tensor(vals)
    tx[tidx] = torch.tensor(vals)
    assert_same(x, tx)


def test_setitem_broadcasts_and_converts_dtype():
    x, tx = pair(np.zeros((2, 3), dtype=np.int64))
    x[:, 1:] = tc.tensor([7, 8])
    tx[:, 1:] = torch.tensor([7, 8])
    x[0] = 2.9
    tx[0] = 2.9
    assert_same(x, tx)


def test_negative_step_is_rejected_like_torch():
    x, tx = pair(np.arange(4.0))
    assert_same_error(lambda: x[::-1], lambda: tx[::-1])


def test_index_errors_like_torch():
    x, tx = pair(np.arange(6.0).reshape(2, 3))
    assert_same_error(lambda: x[2], lambda: tx[2])
    assert_same_error(lambda: x[0, 5], lambda: tx[0, 5])
    assert_same_error(lambda: x[0, 0, 0], lambda: tx[0, 0, 0])
    assert_same_error(lambda: x[tc.tensor([0.5])], lambda: tx[torch.tensor([0.5])], match_message=False)


def test_expand_has_zero_stride_and_errors_like_torch():
    x, tx = pair(np.arange(3.0).reshape(3, 1))
    assert x.expand(3, 4).stride() == tx.expand(3, 4).stride()
    assert_same(x.expand(2, -1, 4), tx.expand(2, -1, 4))
    assert_same_error(lambda: x.expand(2, 4), lambda: tx.expand(2, 4))


@st.composite
def basic_index(draw):
    """A random shape and a PyTorch basic index for it (ints, positive-step slices, None, ...)."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, max_side=5))
    parts, dims_left = [], list(shape)
    use_ellipsis = draw(st.booleans())
    for size in list(dims_left)[: draw(st.integers(0, len(shape)))]:
        kind = draw(st.sampled_from(["int", "slice", "none", "full"]))
        if kind == "int":
            parts.append(draw(st.integers(-size, size - 1)))
        elif kind == "slice":
            start = draw(st.one_of(st.none(), st.integers(-size - 1, size + 1)))
            stop = draw(st.one_of(st.none(), st.integers(-size - 1, size + 1)))
            parts.append(slice(start, stop, draw(st.one_of(st.none(), st.integers(1, 3)))))
        elif kind == "none":
            parts.extend([None, slice(None)])
        else:
            parts.append(slice(None))
    if use_ellipsis:
        parts.insert(draw(st.integers(0, len(parts))), Ellipsis)
    return shape, tuple(parts)


@given(case=basic_index())
def test_random_basic_indexing_matches_torch(case):
    shape, index = case
    data = np.arange(float(np.prod(shape))).reshape(shape)
    x, tx = pair(data, requires_grad=True)
    if error_of(lambda: tx[index])[0] is not None:
        assert_same_error(lambda: x[index], lambda: tx[index])
        return
    v, tv = x[index], tx[index]
    assert_same(v, tv)
    # strides of size-1 dims and of empty views may differ (NumPy normalises them; see the test above)
    assert v.stride() == tv.stride() or 1 in tuple(tv.shape) or v.numel() == 0
    assert v.storage_offset() == tv.storage_offset() or v.numel() == 0
    g = np.arange(float(tv.numel())).reshape(tuple(tv.shape))
    v.backward(tc.tensor(g))
    tv.backward(torch.tensor(g))
    assert_same(x.grad, tx.grad)


ADVANCED_OUT_OF_RANGE = {
    "last_dim": lambda t, x: x[:, :, t([9])],
    "two_index_tensors": lambda t, x: x[t([0]), :, t([9])],
    "adjacent": lambda t, x: x[:, t([0]), t([9])],
    "first": lambda t, x: x[t([7])],
    "with_none": lambda t, x: x[None, :, t([7])],
    "ellipsis": lambda t, x: x[..., t([-5])],
    "lists": lambda t, x: x[[0, 1], [1, 7]],
}


@pytest.mark.parametrize("name", sorted(ADVANCED_OUT_OF_RANGE))
def test_out_of_range_index_tensors_raise_torchs_error(name):
    fn = ADVANCED_OUT_OF_RANGE[name]
    assert_same_error(lambda: fn(tc.tensor, tc.zeros(2, 3, 4)), lambda: fn(torch.tensor, torch.zeros(2, 3, 4)))


DIM_INDEX_OUT_OF_RANGE = {
    "gather_high_then_negative": lambda t, x: x.gather(1, t([[3, -7]])),
    "gather_negative": lambda t, x: x.gather(1, t([[-1]])),
    "scatter": lambda t, x: x.scatter(1, t([[5]]), 1.0),
    "scatter_negative": lambda t, x: x.scatter(1, t([[-1]]), 1.0),
    "scatter_add": lambda t, x: x.scatter_add(1, t([[5]]), x[:1, :1]),
    "index_select": lambda t, x: x.index_select(1, t([5])),
    "index_select_negative": lambda t, x: x.index_select(1, t([-1])),
}


@pytest.mark.parametrize("name", sorted(DIM_INDEX_OUT_OF_RANGE))
def test_gather_scatter_index_select_reject_out_of_range_indices_like_torch(name):
    fn = DIM_INDEX_OUT_OF_RANGE[name]
    assert_same_error(lambda: fn(tc.tensor, tc.zeros(2, 3)), lambda: fn(torch.tensor, torch.zeros(2, 3)))
