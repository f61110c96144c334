"""A view's geometry (`tinygrad_course/strides.py`): the rules against PyTorch's own views, and the views that
build mode makes from them over the storage (`ops/storage_views.py`) against the framework's usual ones."""
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import tinygrad_course as tc
from tinygrad_course import seams, strides

RULES = ("view_strides", "permute_strides", "expand_strides", "index_view", "storage_positions")


def _moving(shape, stride):
    """The strides of dims larger than 1 (the others are never used to read an element)."""
    return tuple(s for n, s in zip(shape, stride) if n != 1)


@st.composite
def strided_tensors(draw):
    """A torch view of an arange: a shape, then maybe a permutation and a step along the last dim."""
    shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    t = torch.arange(int(np.prod(shape))).reshape(shape)
    if len(shape) > 1:
        t = t.permute(*draw(st.permutations(range(len(shape)))))
    if draw(st.booleans()) and t.shape[-1] > 1:
        t = t[..., ::2]
    return t


@st.composite
def view_cases(draw):
    t = draw(strided_tensors())
    n, new = t.numel(), []
    for _ in range(draw(st.integers(0, 3))):
        d = draw(st.sampled_from([d for d in (1, 2, 3, 4) if n % d == 0]))
        new.append(d)
        n //= d
    new.append(n)
    return t, tuple(draw(st.permutations(new)))


@given(view_cases())
def test_view_strides_is_pytorchs_rule(case):
    t, new_shape = case
    got = strides.view_strides(tuple(t.shape), t.stride(), new_shape)
    try:
        expected = t.view(new_shape).stride()
    except RuntimeError:
        assert got is None
    else:
        assert got is not None and _moving(new_shape, got) == _moving(new_shape, expected)


@given(strided_tensors(), st.data())
def test_index_view_is_pytorchs_basic_indexing(t, data):
    index = []
    for size in t.shape[:data.draw(st.integers(1, t.ndim))]:
        if data.draw(st.booleans()):
            index.append(data.draw(st.integers(-size, size - 1)))
        else:
            index.append(slice(data.draw(st.none() | st.integers(-6, 6)), data.draw(st.none() | st.integers(-6, 6)),
                               data.draw(st.none() | st.integers(1, 3))))
    v = t[tuple(index)]
    shape, stride, offset = strides.index_view(tuple(t.shape), t.stride(), t.storage_offset(), tuple(index))
    assert shape == tuple(v.shape) and _moving(shape, stride) == _moving(shape, v.stride())
    assert v.numel() == 0 or offset == v.storage_offset()


@given(strided_tensors(), st.data())
def test_permute_and_expand_strides_are_pytorchs(t, data):
    dims = tuple(data.draw(st.permutations(range(t.ndim))))
    p = t.permute(dims)
    assert strides.permute_strides(tuple(t.shape), t.stride(), dims) == (tuple(p.shape), p.stride())
    lead = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2)))
    t1 = t[..., :1]
    new = lead + tuple(t1.shape[:-1]) + (data.draw(st.integers(1, 3)),)
    got = strides.expand_strides(tuple(t1.shape), t1.stride(), new)
    assert _moving(new, got) == _moving(new, t1.expand(new).stride())


@given(strided_tensors())
def test_storage_positions_are_where_each_element_sits(t):
    positions = strides.storage_positions(tuple(t.shape), t.stride(), t.storage_offset())
    assert positions.shape == tuple(t.shape) and positions.dtype == np.int64
    np.testing.assert_array_equal(np.arange(t.untyped_storage().nbytes() // 8)[positions], t.numpy())


def _views():
    """Views of every kind, their values, geometry, a write through two of them and the gradient back."""
    x = tc.arange(24.0).view(2, 3, 4).requires_grad_()
    views = [x.view(6, 4), x[:, 1:].reshape(2, 8), x.transpose(0, 2), x.T, x[1].t(), x.permute(1, 2, 0),
             x[:, :1].expand(3, 2, 3, 4), x[0, 0].expand(2, 4), x[1, 1:, ::2], x[-1, -2], x[:, 5:], x[1, 2, 3],
             x.transpose(0, 1).reshape(3, 8), x[None, 1], x[..., 2], x.transpose(0, 2).contiguous(),
             x[:, 1:, ::2].contiguous(), x[0, :, :1].expand(2, 3, 4).contiguous()]
    out = [(tuple(v.shape), _moving(v.shape, v.stride()), v.storage_offset(), v.detach().tolist())
           for v in views]
    sum((v * (i + 1)).sum() for i, v in enumerate(views)).backward()
    y = tc.zeros(3, 4)
    y.T[1, 2] = 5.0
    y[1:, ::2][0] += 1.0
    return out, x.grad.cpu().numpy(), y.cpu().numpy()


def test_build_mode_views_are_made_from_the_rules_and_match_the_framework():
    expected = _views()
    for name in RULES:
        seams.install(name, seams.reference(name))
    try:
        seams.reset_calls()
        got = _views()
        calls = seams.calls()
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            tc.arange(6.0).view(2, 3).T.view(6)
    finally:
        seams.uninstall()
    assert got[0] == expected[0]
    np.testing.assert_array_equal(got[1], expected[1])
    np.testing.assert_array_equal(got[2], expected[2])
    on_cpu = tc.zeros(1).device.type == "cpu"  # contiguous() reads positions on the CPU only
    assert all(calls.get(name, 0) > 0 for name in RULES if on_cpu or name != "storage_positions"), calls


def test_a_view_outside_the_storage_is_refused_not_read():
    seams.install("permute_strides", lambda shape, strides, dims: (tuple(shape[d] for d in dims), tuple(strides)))
    try:
        with pytest.raises(RuntimeError, match="permute_strides gave a view .* outside its storage of 12 elements"):
            tc.arange(12.0).view(3, 4).T
    finally:
        seams.uninstall()
