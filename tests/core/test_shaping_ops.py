"""Shape, joining and index-update functions (tile, roll, rot90, meshgrid, tensor_split, unfold, index_add,
scatter_reduce, ...) and Tensor conveniences (new_*, type_as, sum_to_size, ...): parity with PyTorch for
values, dtypes, grad_fn names and gradients, gradcheck, and PyTorch's errors."""
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import tinygrad_course as tc
from gradcheck_table import gradcheck_tests

from core_helpers import assert_same, assert_same_error


def _a(*shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).uniform(-2, 2, shape).astype(dtype)


def _both(arrays, grad):
    """(tc inputs, torch inputs): float arrays become leaves that require grad when `grad`."""
    ours, theirs = [], []
    for a in arrays:
        rg = grad and a.dtype.kind == "f"
        ours.append(tc.tensor(a, requires_grad=rg))
        theirs.append(torch.tensor(a, requires_grad=rg))
    return ours, theirs


def _outputs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def check_parity(fn, *arrays, grad=True):
    """fn(lib, *tensors) gives the same values, dtypes, grad_fn names and input gradients in tc and torch."""
    ours_in, theirs_in = _both(arrays, grad)
    ours, theirs = fn(tc, *ours_in), fn(torch, *theirs_in)
    assert_same(ours, theirs)
    pairs = list(zip(_outputs(ours), _outputs(theirs)))
    for o, t in pairs:
        assert (o.grad_fn is None) == (t.grad_fn is None), (o.grad_fn, t.grad_fn)
        if t.grad_fn is not None:
            assert o.grad_fn.name() == t.grad_fn.name().split("::")[-1]
    if not grad or not any(t.requires_grad for _, t in pairs):
        return
    rng = np.random.default_rng(1)
    loss_o, loss_t = 0, 0
    for o, t in pairs:
        if t.requires_grad:
            w = rng.uniform(-1, 1, tuple(t.shape))
            loss_o = loss_o + (o * tc.tensor(w, dtype=o.dtype)).sum()
            loss_t = loss_t + (t * torch.tensor(w, dtype=t.dtype)).sum()
    loss_o.backward()
    loss_t.backward()
    for o, t in zip(ours_in, theirs_in):
        if t.requires_grad:
            assert_same(o.grad, t.grad)


I = [0, 2]  # an index used by many cases

PARITY = {
    "tile": (lambda m, x: x.tile((2, 1, 3)), (_a(2, 3),)),
    "tile_short": (lambda m, x: m.tile(x, (2,)), (_a(2, 3),)),
    "tile_empty_dims": (lambda m, x: x.tile(()), (_a(2, 3),)),
    "repeat_interleave_int": (lambda m, x: x.repeat_interleave(2), (_a(2, 3),)),
    "repeat_interleave_dim": (lambda m, x: m.repeat_interleave(x, 3, dim=-1), (_a(2, 3),)),
    "repeat_interleave_tensor": (lambda m, x: x.repeat_interleave(m.tensor([1, 0, 2]), dim=1), (_a(2, 3),)),
    "repeat_interleave_one_count": (lambda m, x: x.repeat_interleave(m.tensor([2]), dim=0), (_a(2, 3),)),
    "repeat_interleave_0d": (lambda m, x: x.repeat_interleave(2), (_a(),)),
    "repeat_interleave_counts_only": (lambda m: m.repeat_interleave(m.tensor([1, 2, 0, 3])), ()),
    "roll_flat": (lambda m, x: x.roll(4), (_a(2, 3),)),
    "roll_dims": (lambda m, x: m.roll(x, (1, -2), (0, -1)), (_a(3, 4),)),
    "roll_int": (lambda m, x: x.roll(-1, 0), (_a(5).astype(np.int64),)),
    "rot90": (lambda m, x: x.rot90(), (_a(2, 3),)),
    "rot90_k2": (lambda m, x: m.rot90(x, 2, (1, 2)), (_a(2, 3, 4),)),
    "rot90_k3_neg": (lambda m, x: x.rot90(-1, [0, -1]), (_a(2, 3, 4),)),
    "rot90_k0": (lambda m, x: x.rot90(4), (_a(2, 3),)),
    "flipud": (lambda m, x: m.flipud(x), (_a(3, 2),)),
    "fliplr": (lambda m, x: x.fliplr(), (_a(3, 2, 2),)),
    "broadcast_to": (lambda m, x: m.broadcast_to(x, (2, 3, 4)), (_a(3, 1),)),
    "broadcast_to_keep": (lambda m, x: x.broadcast_to((2, -1, 4)), (_a(3, 1),)),
    "movedim": (lambda m, x: m.movedim(x, 0, -1), (_a(2, 3, 4),)),
    "movedim_many": (lambda m, x: x.moveaxis((0, 1), (2, 0)), (_a(2, 3, 4),)),
    "tensor_split_sections": (lambda m, x: x.tensor_split(3, dim=1), (_a(2, 7),)),
    "tensor_split_more_sections": (lambda m, x: m.tensor_split(x, 5), (_a(3, 2),)),
    "tensor_split_indices": (lambda m, x: x.tensor_split([1, 5, 3], -1), (_a(2, 6),)),
    "tensor_split_tensor": (lambda m, x: x.tensor_split(m.tensor([2, 4])), (_a(6),)),
    "tensor_split_tensor_0d": (lambda m, x: x.tensor_split(m.tensor(2)), (_a(6),)),
    "hsplit_1d": (lambda m, x: x.hsplit(2), (_a(4),)),
    "hsplit": (lambda m, x: m.hsplit(x, [1, 3]), (_a(2, 4),)),
    "vsplit": (lambda m, x: x.vsplit(2), (_a(4, 3),)),
    "dsplit": (lambda m, x: m.dsplit(x, 3), (_a(1, 2, 6),)),
    "diff": (lambda m, x: x.diff(), (_a(3, 4),)),
    "diff_n2_dim0": (lambda m, x: m.diff(x, 2, 0), (_a(4, 3),)),
    "diff_n0": (lambda m, x, p: x.diff(0, 0, p), (_a(2, 3), _a(1, 3, seed=1))),
    "diff_n_too_big": (lambda m, x: x.diff(9), (_a(2, 3),)),
    "diff_prepend_append": (lambda m, x, p, a: x.diff(1, 1, p, a), (_a(2, 3), _a(2, 1, seed=1), _a(2, 2, seed=2))),
    "diff_int": (lambda m, x: x.diff(), (_a(6).astype(np.int64),)),
    "diff_bool": (lambda m, x: (x > 0).diff(), (_a(6),)),
    "unfold": (lambda m, x: x.unfold(1, 2, 1), (_a(3, 4),)),
    "unfold_step_gt_size": (lambda m, x: x.unfold(0, 2, 3), (_a(8, 2),)),
    "unfold_size_gt_windows": (lambda m, x: x.unfold(-1, 5, 1), (_a(2, 6),)),
    "unfold_0d": (lambda m, x: x.unfold(0, 1, 1), (_a(),)),
    "select": (lambda m, x: m.select(x, 1, -1), (_a(2, 3, 4),)),
    "as_strided": (lambda m, x: x.as_strided((2, 2), (1, 2), 1), (_a(3, 4),)),
    "as_strided_overlap": (lambda m, x: m.as_strided(x, (3, 3), (1, 1)), (_a(6),)),
    "as_strided_of_view": (lambda m, x: x[1:].as_strided((2, 2), (3, 1)), (_a(3, 3),)),
    "meshgrid_ij": (lambda m, a, b: m.meshgrid(a, b, indexing="ij"), (_a(3), _a(4, seed=1))),
    "meshgrid_xy": (lambda m, a, b, c: m.meshgrid([a, b, c], indexing="xy"), (_a(2), _a(3, seed=1), _a(4, seed=2))),
    "meshgrid_0d": (lambda m, a, b: m.meshgrid(a, b, indexing="xy"), (_a(), _a(3, seed=1))),
    "hstack": (lambda m, a, b: m.hstack([a, b]), (_a(2, 3), _a(2, 1, seed=1))),
    "hstack_1d": (lambda m, a, b: m.hstack((a, b)), (_a(3), _a(2, seed=1))),
    "vstack": (lambda m, a, b: m.vstack([a, b]), (_a(3), _a(2, 3, seed=1))),
    "row_stack": (lambda m, a, b: m.row_stack([a, b]), (_a(3), _a(3, seed=1))),
    "dstack": (lambda m, a, b: m.dstack([a, b]), (_a(2, 3), _a(2, 3, 2, seed=1))),
    "column_stack": (lambda m, a, b, c: m.column_stack([a, b, c]), (_a(3), _a(3, 2, seed=1), _a(3, seed=2))),
    "column_stack_0d": (lambda m, a, b: m.column_stack([a, b]), (_a(), _a(1, seed=1))),
    "atleast_1d": (lambda m, a, b: m.atleast_1d(a, b), (_a(), _a(2, 2, seed=1))),
    "atleast_2d": (lambda m, a, b, c: m.atleast_2d([a, b, c]), (_a(), _a(3, seed=1), _a(1, 2, 3, seed=2))),
    "atleast_3d": (lambda m, a, b, c: m.atleast_3d(a, b, c), (_a(), _a(3, seed=1), _a(2, 3, seed=2))),
    "atleast_3d_single": (lambda m, a: m.atleast_3d(a), (_a(2, 3),)),
    "cartesian_prod": (lambda m, a, b: m.cartesian_prod(a, b), (_a(2), _a(3, seed=1))),
    "cartesian_prod_three": (lambda m, a, b, c: m.cartesian_prod(a, b, c), (_a(2), _a(1, seed=1), _a(3, seed=2))),
    "combinations": (lambda m, a: m.combinations(a), (_a(4),)),
    "combinations_r3_replacement": (lambda m, a: m.combinations(a, 3, True), (_a(3),)),
    "combinations_r1": (lambda m, a: m.combinations(a, 1), (_a(3),)),
    "combinations_r0": (lambda m, a: m.combinations(a, 0), (_a(3),)),
    "combinations_r_too_big": (lambda m, a: m.combinations(a, 4), (_a(3),)),
    "index_add": (lambda m, x, s: x.index_add(0, m.tensor(I), s), (_a(3, 4), _a(2, 4, seed=1))),
    "index_add_alpha_dim1": (lambda m, x, s: m.index_add(x, -1, m.tensor([1, 1, 0]), s, alpha=-2.5),
                             (_a(2, 3), _a(2, 3, seed=1))),
    "index_add_int32_index": (lambda m, x, s: x.index_add(1, m.tensor([2, 0], dtype=m.int32), s),
                              (_a(2, 3), _a(2, 2, seed=1))),
    "index_add_int": (lambda m, x, s: x.index_add(0, m.tensor([0, 0]), s, alpha=3),
                      (_a(3).astype(np.int64), _a(2, seed=1).astype(np.int64))),
    "index_add_0d": (lambda m, x, s: x.index_add(0, m.tensor([0]), s), (_a(), _a(seed=1))),
    "index_copy": (lambda m, x, s: x.index_copy(1, m.tensor([3, 0]), s), (_a(2, 4), _a(2, 2, seed=1))),
    "index_copy_fn": (lambda m, x, s: m.index_copy(x, 0, m.tensor(I), s), (_a(3, 2), _a(2, 2, seed=1))),
    "index_fill": (lambda m, x: x.index_fill(1, m.tensor([0, -1]), -3.0), (_a(2, 3),)),
    "index_fill_tensor_value": (lambda m, x, v: m.index_fill(x, 0, m.tensor(I), v), (_a(3, 2), _a(seed=1))),
    "index_fill_int": (lambda m, x: x.index_fill(0, m.tensor([1]), 1.5), (_a(3).astype(np.int64),)),
    "masked_scatter": (lambda m, x, s: x.masked_scatter(x > 0, s), (_a(3, 4), _a(13, seed=1))),
    "masked_scatter_broadcast": (lambda m, x, s: m.masked_scatter(x, m.tensor([True, False, True]), s),
                                 (_a(2, 3), _a(2, 2, seed=1))),
    "masked_scatter_broadcast_self": (lambda m, x, s: x.masked_scatter(m.ones(2, 3, dtype=m.bool), s),
                                      (_a(3), _a(6, seed=1))),
    "put": (lambda m, x, s: x.put(m.tensor([0, 5, -1]), s), (_a(3, 4), _a(3, seed=1))),
    "put_accumulate": (lambda m, x, s: m.put(x, m.tensor([[0, 5], [0, -1]]), s, accumulate=True),
                       (_a(3, 4), _a(2, 2, seed=1))),
    "index_put": (lambda m, x, v: x.index_put((m.tensor(I),), v), (_a(3, 4), _a(2, 4, seed=1))),
    "index_put_broadcast_acc": (lambda m, x, v: m.index_put(x, [m.tensor([0, 0, 1]), m.tensor([1, 1, 2])], v, True),
                                (_a(3, 4), _a(1, seed=1))),
    "index_put_bool": (lambda m, x, v: x.index_put((x > 0,), v), (_a(3, 4), _a(seed=1))),
    "index_put_bool_acc": (lambda m, x, v: x.index_put((x > 0,), v, accumulate=True), (_a(3, 4), _a(seed=1))),
}

SCATTER_INDEX = [[0, 1, 0, 1], [2, 1, 1, 0]]
for _reduce in ("sum", "prod", "mean", "amax", "amin"):
    for _self in (True, False):
        PARITY[f"scatter_reduce_{_reduce}_{'self' if _self else 'noself'}"] = (
            lambda m, x, s, r=_reduce, inc=_self: x.scatter_reduce(0, m.tensor(SCATTER_INDEX), s, r, include_self=inc),
            (_a(3, 4), _a(2, 4, seed=1)))  # (torch's backward fails for a src larger than index)
PARITY["scatter_reduce_prod_zeros"] = (
    lambda m, x, s: m.scatter_reduce(x * (x > -1), 1, m.tensor([[0, 0, 0], [1, 1, 0]]), s * (s > 0), "prod"),
    (_a(2, 2), _a(2, 3, seed=3)))
PARITY["scatter_reduce_amax_ties"] = (
    lambda m, x, s: x.round().scatter_reduce(0, m.tensor([0, 0, 1, 1]), s.round(), "amax"), (_a(2), _a(4, seed=1)))
PARITY["scatter_reduce_mean_int"] = (
    lambda m, x: x.scatter_reduce(0, m.tensor([0, 0, 2]), m.tensor([4, 5, 7]), "mean"), (np.array([1, 2, 3]),))
PARITY["scatter_reduce_0d"] = (lambda m, x, s: x.scatter_reduce(0, m.tensor(0), s, "amax"), (_a(), _a(seed=1)))


@pytest.mark.parametrize("name", sorted(PARITY))
def test_parity_with_torch(name):
    fn, arrays = PARITY[name]
    check_parity(fn, *arrays)


def test_meshgrid_without_indexing_warns_and_uses_ij():
    a, b = tc.arange(3), tc.arange(2)
    with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
        x, y = tc.meshgrid(a, b)
    assert x.shape == (3, 2) and y.tolist() == [[0, 1]] * 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tc.meshgrid(a, b, indexing="ij")


def test_views_share_storage_and_strides_like_torch():
    x = tc.arange(24.0).reshape(2, 3, 4)
    t = torch.arange(24.0).reshape(2, 3, 4)
    for f in (lambda m, v: v.unfold(2, 2, 1), lambda m, v: v.movedim(0, 2), lambda m, v: v.select(1, 1),
              lambda m, v: v.broadcast_to((2, 2, 3, 4)), lambda m, v: v.as_strided((3, 2), (4, 1), 2),
              lambda m, v: v.tensor_split(2, 2)[1], lambda m, v: m.atleast_3d(v[0, 0])):
        o, r = f(tc, x), f(torch, t)
        assert o.stride() == r.stride() and o.storage_offset() == r.storage_offset()
        assert o._is_view() and r._is_view()
    w = x.unfold(2, 2, 2)
    x[0, 0, 1] = 100.0
    assert w[0, 0, 0, 1].item() == 100.0
    assert x.rot90().stride() == t.rot90().stride() and not x.rot90()._is_view()


@pytest.mark.parametrize("case", ["squeeze_", "squeeze_dim", "squeeze_dims", "unsqueeze_", "t_", "t_1d",
                                  "transpose_", "swapdims_", "swapaxes_"])
def test_inplace_shape_changes(case):
    ops = {
        "squeeze_": (lambda v: v.squeeze_(), (3, 1, 4)), "squeeze_dim": (lambda v: v.squeeze_(1), (3, 1, 4)),
        "squeeze_dims": (lambda v: v.squeeze_((0, 1)), (3, 1, 4)), "unsqueeze_": (lambda v: v.unsqueeze_(-1), (3, 4)),
        "t_": (lambda v: v.t_(), (3, 4)), "t_1d": (lambda v: v.t_(), (3,)),
        "transpose_": (lambda v: v.transpose_(0, 2), (2, 3, 4)), "swapdims_": (lambda v: v.swapdims_(1, 0), (2, 3)),
        "swapaxes_": (lambda v: v.swapaxes_(-1, 0), (2, 3)),
    }
    op, shape = ops[case]
    a = _a(*shape)
    (x,), (t,) = _both([a], True)
    ours, theirs = x * 2, t * 2
    v0o, v0t = ours._version[0], theirs._version
    assert op(ours) is ours and op(theirs) is theirs
    assert ours.shape == theirs.shape and ours.stride() == theirs.stride()
    assert ours.grad_fn.name() == theirs.grad_fn.name()
    assert ours._version[0] - v0o == theirs._version - v0t
    w = _a(*theirs.shape, seed=5)
    (ours * tc.tensor(w)).sum().backward()
    (theirs * torch.tensor(w)).sum().backward()
    assert_same(x.grad, t.grad)
    plain = tc.tensor(a)
    op(plain)
    assert plain.shape == theirs.shape and plain.grad_fn is None


def test_inplace_shape_change_on_a_view_and_on_a_leaf():
    (x,), (t,) = _both([_a(2, 3)], True)
    yo, yt = x * 1, t * 1
    vo, vt = yo[0], yt[0]
    vo.unsqueeze_(0)
    vt.unsqueeze_(0)
    assert vo._base is yo and vo.shape == vt.shape and vo.grad_fn.name() == vt.grad_fn.name()
    (vo * 3).sum().backward()
    (vt * 3).sum().backward()
    assert_same(x.grad, t.grad)
    assert_same_error(lambda: x.t_(), lambda: t.t_())
    saved_o, saved_t = x * 1, t * 1
    lo, lt = saved_o * saved_o, saved_t * saved_t
    saved_o.t_()
    saved_t.t_()
    assert_same_error(lambda: lo.sum().backward(), lambda: lt.sum().backward(), match_message=False)


@pytest.mark.parametrize("name", ["index_add_", "index_copy_", "index_fill_", "masked_scatter_", "put_",
                                  "index_put_", "scatter_reduce_"])
def test_inplace_index_updates(name):
    calls = {
        "index_add_": lambda m, y, s: y.index_add_(0, m.tensor(I), s[:2], alpha=2),
        "index_copy_": lambda m, y, s: y.index_copy_(0, m.tensor(I), s[:2]),
        "index_fill_": lambda m, y, s: y.index_fill_(1, m.tensor(I), s[0, 0]),
        "masked_scatter_": lambda m, y, s: y.masked_scatter_(m.tensor([True, False, False, True]), s),
        "put_": lambda m, y, s: y.put_(m.tensor([1, 1, 4]), s[0, :3], accumulate=True),
        "index_put_": lambda m, y, s: y.index_put_((m.tensor(I), m.tensor([3, 1])), s[0, :2]),
        "scatter_reduce_": lambda m, y, s: y.scatter_reduce_(1, m.tensor([[0, 0, 1, 3]] * 3), s, "amax"),
    }

    def run(m, x, s):
        y = x * 1
        out = calls[name](m, y, s)
        assert out is y
        return y

    check_parity(run, _a(3, 4), _a(3, 4, seed=1))
    plain = tc.tensor(_a(3, 4))
    v = plain._version[0]
    assert calls[name](tc, plain, tc.tensor(_a(3, 4, seed=1))) is plain
    assert plain._version[0] > v


def test_masked_scatter_inplace_needs_a_mask_that_broadcasts_to_self():
    assert_same_error(lambda: tc.zeros(4).masked_scatter_(tc.ones(3, 4, dtype=tc.bool), tc.zeros(12)),
                      lambda: torch.zeros(4).masked_scatter_(torch.ones(3, 4, dtype=torch.bool), torch.zeros(12)),
                      match_message=False)


def test_new_factories_inherit_dtype_and_device():
    x = tc.ones(2, dtype=tc.float64)
    t = torch.ones(2, dtype=torch.float64)
    makers = {"zeros": lambda v: v.new_zeros(2, 3), "ones": lambda v: v.new_ones((2,)),
              "empty": lambda v: v.new_empty([1, 2]), "full": lambda v: v.new_full((2, 2), 7),
              "tensor": lambda v: v.new_tensor([1, 2]),
              "zeros_long": lambda v: v.new_zeros(3, dtype=v.new_tensor([1]).long().dtype)}
    for name, f in makers.items():
        o, r = f(x), f(t)
        assert o.shape == r.shape and o.device == x.device
        assert o.dtype.name == str(r.dtype).split(".")[1]
        if name != "empty":  # uninitialised memory has no values to compare
            assert_same(o, r)
    assert x.new_zeros(2, requires_grad=True).requires_grad
    with pytest.warns(UserWarning, match="recommended to use sourceTensor.detach"):
        copy = x.new_tensor(tc.tensor([1, 2]))
    assert copy.dtype is tc.int64 and not copy.requires_grad


def test_conveniences():
    x, t = tc.tensor(_a(3, 4)), torch.tensor(_a(3, 4))
    assert x.type_as(tc.tensor([1])).dtype is tc.int64
    assert x.ndimension() == t.ndimension() == 2
    assert x.is_complex() is False and tc.is_complex(x) is False
    assert x.nelement() == 12
    for size in ((1, 4), (3, 1), (4,), (3, 4), (1,)):
        (xo,), (xt,) = _both([_a(3, 4)], True)
        ro, rt = xo.sum_to_size(*size), xt.sum_to_size(size)
        assert_same(ro, rt)
        assert (ro.grad_fn is None) == (rt.grad_fn is None)
    assert_same_error(lambda: x.sum_to_size(2, 3), lambda: t.sum_to_size(2, 3))
    assert_same_error(lambda: x.sum_to_size(1, 3, 4), lambda: t.sum_to_size(1, 3, 4))
    assert not x.is_pinned() and not x.is_shared()
    assert x.share_memory_() is x and x.is_shared() and x[0].is_shared()
    if not tc.cuda.is_available():
        assert_same_error(lambda: x.pin_memory(), lambda: t.pin_memory())
    else:
        host = tc.ones(2, device="cpu")
        pinned = host.pin_memory()
        assert pinned.is_pinned() and not host.is_pinned() and pinned.pin_memory() is pinned


def test_inplace_op_through_unfold_and_as_strided_views_writes_the_base():
    (x,), (t,) = _both([_a(6)], True)
    yo, yt = x * 1, t * 1
    yo.unfold(0, 2, 2).mul_(3)
    yt.unfold(0, 2, 2).mul_(3)
    yo.as_strided((2,), (2,), 1).add_(1)
    yt.as_strided((2,), (2,), 1).add_(1)
    assert_same(yo, yt)
    (yo * yo).sum().backward()
    (yt * yt).sum().backward()
    assert_same(x.grad, t.grad)


@pytest.mark.parametrize("device", ["cpu"])
def test_apply_map_and_resize(device):
    x = tc.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    assert x.apply_(lambda v: v * 10) is x and x.tolist() == [[10, 20], [30, 40]]
    x.map_(tc.tensor([1.0, 2.0], device=device), lambda a, b: a + b)
    assert x.tolist() == [[11, 22], [31, 42]]
    w = tc.ones(2, requires_grad=True, device=device)
    assert_same_error(lambda: w.apply_(abs), lambda: torch.ones(2, requires_grad=True).apply_(abs))
    assert_same_error(lambda: (w * 1).map_(w, max), lambda: (torch.ones(2, requires_grad=True) * 1).map_(
        torch.ones(2), max))
    t = torch.tensor([[11.0, 22.0], [31.0, 42.0]])
    assert_same(x.resize_(3), t.resize_(3))
    assert x.resize_(2, 2).shape == (2, 2) and x.resize_as_(tc.ones(1, 3)).shape == (1, 3)
    big = tc.arange(4.0).resize_(2, 3)
    assert big.shape == (2, 3) and big.reshape(-1)[:4].tolist() == [0, 1, 2, 3]
    assert_same_error(lambda: w.resize_(1), lambda: torch.ones(2, requires_grad=True).resize_(1))


def test_apply_refuses_gpu_tensors():
    if not tc.cuda.is_available():
        pytest.skip("needs a (stand-in) GPU")
    with pytest.raises(TypeError, match="only implemented on CPU"):
        tc.ones(2, device="cuda").apply_(abs)


def _err(name, fn, *arrays):
    return pytest.param(fn, arrays, id=name)


ERRORS = [
    _err("roll_align", lambda m, x: x.roll((1, 2)), _a(3, 4)),
    _err("roll_align_dims", lambda m, x: x.roll((1, 2), (0,)), _a(3, 4)),
    _err("roll_dim", lambda m, x: x.roll(1, 5), _a(3, 4)),
    _err("rot90_dims", lambda m, x: x.rot90(1, (0,)), _a(3, 4)),
    _err("rot90_1d", lambda m, x: x.rot90(), _a(3)),
    _err("rot90_same", lambda m, x: x.rot90(1, (0, 0)), _a(3, 4)),
    _err("flipud_0d", lambda m, x: x.flipud(), _a()),
    _err("fliplr_1d", lambda m, x: x.fliplr(), _a(3)),
    _err("meshgrid_indexing", lambda m, x: m.meshgrid(x, x, indexing="foo"), _a(3)),
    _err("meshgrid_dtype", lambda m, x: m.meshgrid(x, x.long(), indexing="ij"), _a(3)),
    _err("meshgrid_empty", lambda m: m.meshgrid(indexing="ij")),
    _err("hstack_empty", lambda m: m.hstack([])),
    _err("column_stack_empty", lambda m: m.column_stack([])),
    _err("broadcast_to", lambda m, x: x.broadcast_to((2, 3)), _a(3, 4)),
    _err("movedim_len", lambda m, x: x.movedim((0, 1), (1,)), _a(3, 4)),
    _err("movedim_repeated", lambda m, x: x.movedim((0, 0), (1, 0)), _a(3, 4)),
    _err("tensor_split_zero", lambda m, x: x.tensor_split(0), _a(3, 4)),
    _err("tensor_split_float_tensor", lambda m, x: x.tensor_split(m.tensor([1.0])), _a(3, 4)),
    _err("tensor_split_2d_tensor", lambda m, x: x.tensor_split(m.tensor([[1]])), _a(3, 4)),
    _err("tensor_split_0d", lambda m, x: x.tensor_split(1), _a()),
    _err("hsplit_0d", lambda m, x: x.hsplit(1), _a()),
    _err("hsplit_indivisible", lambda m, x: x.hsplit(3), _a(3, 4)),
    _err("vsplit_1d", lambda m, x: x.vsplit(1), _a(3)),
    _err("dsplit_indivisible", lambda m, x: x.dsplit(2), _a(2, 2, 3)),
    _err("cartesian_prod_2d", lambda m, x: m.cartesian_prod(x), _a(3, 4)),
    _err("combinations_negative", lambda m, x: m.combinations(x, -1), _a(3)),
    _err("diff_0d", lambda m, x: x.diff(), _a()),
    _err("diff_negative", lambda m, x: x.diff(-1), _a(3, 4)),
    _err("diff_prepend_shape", lambda m, x: x.diff(prepend=m.ones(2, 1, dtype=x.dtype)), _a(3, 4)),
    _err("diff_prepend_ndim", lambda m, x: x.diff(prepend=m.ones(1, dtype=x.dtype)), _a(3, 4)),
    _err("unfold_too_big", lambda m, x: x.unfold(1, 5, 1), _a(3, 4)),
    _err("unfold_step", lambda m, x: x.unfold(1, 2, 0), _a(3, 4)),
    _err("unfold_size", lambda m, x: x.unfold(1, -1, 1), _a(3, 4)),
    _err("select_range", lambda m, x: x.select(1, 5), _a(3, 4)),
    _err("select_0d", lambda m, x: x.select(0, 0), _a()),
    _err("t_3d", lambda m, x: (x * 1).t_(), _a(2, 3, 4)),
    _err("squeeze_dim", lambda m, x: (x * 1).squeeze_(5), _a(3, 4)),
    _err("as_strided_out_of_bounds", lambda m, x: x.as_strided((10, 10), (1, 1)), _a(3, 4)),
    _err("as_strided_negative", lambda m, x: x.as_strided((2,), (-1,)), _a(3, 4)),
    _err("as_strided_lengths", lambda m, x: x.as_strided((2, 2), (1,)), _a(3, 4)),
    _err("repeat_interleave_negative", lambda m, x: x.repeat_interleave(-1), _a(3, 4)),
    _err("repeat_interleave_size", lambda m, x: x.repeat_interleave(m.tensor([1, 2]), dim=0), _a(3, 4)),
    _err("repeat_interleave_2d", lambda m, x: x.repeat_interleave(m.tensor([[1, 2, 3]]), dim=0), _a(3, 4)),
    _err("repeat_interleave_output_size", lambda m, x: x.repeat_interleave(2, dim=0, output_size=5), _a(3, 4)),
    _err("index_add_dtype", lambda m, x, s: x.index_add(0, m.tensor(I), s.float()), _a(3, 4), _a(2, 4)),
    _err("index_add_index_dtype", lambda m, x, s: x.index_add(0, m.tensor([0.0, 2.0]), s), _a(3, 4), _a(2, 4)),
    _err("index_add_index_2d", lambda m, x, s: x.index_add(0, m.tensor([I]), s), _a(3, 4), _a(2, 4)),
    _err("index_add_count", lambda m, x, s: x.index_add(0, m.tensor(I), s), _a(3, 4), _a(3, 4)),
    _err("index_add_shape", lambda m, x, s: x.index_add(0, m.tensor(I), s), _a(3, 4), _a(2, 3)),
    _err("index_add_range", lambda m, x, s: x.index_add(0, m.tensor([0, 5]), s), _a(3, 4), _a(2, 4)),
    _err("index_add_negative", lambda m, x, s: x.index_add(0, m.tensor([0, -1]), s), _a(3, 4), _a(2, 4)),
    _err("index_copy_dtype", lambda m, x, s: x.index_copy(0, m.tensor(I), s.float()), _a(3, 4), _a(2, 4)),
    _err("index_copy_index_dtype", lambda m, x, s: x.index_copy(0, m.tensor(I).int(), s), _a(3, 4), _a(2, 4)),
    _err("index_copy_count", lambda m, x, s: x.index_copy(0, m.tensor(I), s), _a(3, 4), _a(3, 4)),
    _err("index_copy_range", lambda m, x, s: x.index_copy(0, m.tensor([0, 5]), s), _a(3, 4), _a(2, 4)),
    _err("index_fill_index_dtype", lambda m, x: x.index_fill(0, m.tensor(I).int(), 1.0), _a(3, 4)),
    _err("index_fill_value_1d", lambda m, x: x.index_fill(0, m.tensor(I), m.tensor([1.0])), _a(3, 4)),
    _err("index_fill_range", lambda m, x: x.index_fill(0, m.tensor([5]), 1.0), _a(3, 4)),
    _err("masked_scatter_mask_dtype", lambda m, x, s: x.masked_scatter(m.ones(3, 4, dtype=m.int64), s),
         _a(3, 4), _a(12)),
    _err("masked_scatter_small", lambda m, x, s: x.masked_scatter(m.ones(3, 4, dtype=m.bool), s), _a(3, 4), _a(11)),
    _err("masked_scatter_dtype", lambda m, x, s: x.masked_scatter(x > 0, s.float()), _a(3, 4), _a(12)),
    _err("put_count", lambda m, x, s: x.put(m.tensor([0, 1]), s), _a(3, 4), _a(3)),
    _err("put_range", lambda m, x, s: x.put(m.tensor([0, 12]), s), _a(3, 4), _a(2)),
    _err("put_dtype", lambda m, x, s: x.put(m.tensor([0, 1]), s.float()), _a(3, 4), _a(2)),
    _err("put_index_dtype", lambda m, x, s: x.put(m.tensor([0, 1]).int(), s), _a(3, 4), _a(2)),
    _err("index_put_dtype", lambda m, x, s: x.index_put((m.tensor(I),), s.float()), _a(3, 4), _a(2, 4)),
    _err("index_put_shape", lambda m, x, s: x.index_put((m.tensor(I),), s), _a(3, 4), _a(3, 4)),
    _err("index_put_range", lambda m, x, s: x.index_put((m.tensor([3]),), s), _a(3, 4), _a(4)),
    _err("scatter_reduce_name", lambda m, x, s: x.scatter_reduce(0, m.tensor([[0, 1]]), s, "foo"), _a(3, 4), _a(2, 4)),
    _err("scatter_reduce_dtype", lambda m, x, s: x.scatter_reduce(0, m.tensor([[0, 1]]), s.float(), "sum"),
         _a(3, 4), _a(2, 4)),
    _err("scatter_reduce_range", lambda m, x, s: x.scatter_reduce(0, m.tensor([[0, 5]]), s, "sum"), _a(3, 4), _a(2, 4)),
    _err("resize_negative", lambda m, x: x.clone().resize_(-1, 2), _a(3, 4)),
]


@pytest.mark.parametrize("fn, arrays", ERRORS)
def test_errors_like_torch(fn, arrays):
    ours = [tc.tensor(a) for a in arrays]
    theirs = [torch.tensor(a) for a in arrays]
    assert_same_error(lambda: fn(tc, *ours), lambda: fn(torch, *theirs))


@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data())
def test_roll_tensor_split_and_movedim_match_torch_for_any_shape(shape, data):
    a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    x, t = tc.tensor(a), torch.tensor(a)
    nd = len(shape)
    dim = data.draw(st.integers(-nd, nd - 1))
    shift = data.draw(st.integers(-5, 5))
    sections = data.draw(st.integers(1, 5))
    dest = data.draw(st.integers(-nd, nd - 1))
    size = data.draw(st.integers(0, shape[dim]))
    step = data.draw(st.integers(1, 3))
    assert_same(x.roll(shift, dim), t.roll(shift, dim))
    assert_same(x.roll(shift), t.roll(shift))
    assert_same(list(x.tensor_split(sections, dim)), list(t.tensor_split(sections, dim)))
    assert_same(x.movedim(dim, dest), t.movedim(dim, dest))
    assert_same(x.unfold(dim, size, step), t.unfold(dim, size, step))
    assert_same(x.tile(tuple(shape[:2])), t.tile(tuple(shape[:2])))
    assert_same(x.diff(dim=dim), t.diff(dim=dim))


# ---- gradcheck (float64) ------------------------------------------------------------------------------

def _x(*shape, seed=0, positive=False):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 2.0, shape) if positive else rng.uniform(-2.0, 2.0, shape)
    return tc.tensor(a, dtype=tc.float64, requires_grad=True)


def _idx(values):
    return tc.tensor(values)


# name -> (function, inputs factory)
CASES = {
    "tile": (lambda a: a.tile((2, 1, 2)), lambda: (_x(2, 3),)),
    "repeat_interleave": (lambda a: a.repeat_interleave(2, dim=1), lambda: (_x(2, 3),)),
    "repeat_interleave_counts": (lambda a: a.repeat_interleave(_idx([2, 0, 1]), dim=1), lambda: (_x(2, 3),)),
    "roll": (lambda a: a.roll((1, -1), (0, 1)), lambda: (_x(3, 4),)),
    "roll_flat": (lambda a: a.roll(5), lambda: (_x(3, 4),)),
    "rot90": (lambda a: a.rot90(1, (1, 2)), lambda: (_x(2, 3, 4),)),
    "rot90_k3": (lambda a: a.rot90(3), lambda: (_x(2, 3),)),
    "flipud": (lambda a: a.flipud(), lambda: (_x(3, 2),)),
    "movedim": (lambda a: a.movedim((0, 1), (2, 0)), lambda: (_x(2, 3, 4),)),
    "broadcast_to": (lambda a: a.broadcast_to((2, 3, 4)), lambda: (_x(3, 1),)),
    "tensor_split": (lambda a: tc.cat(a.tensor_split([1, 3], 1)[::2], 1), lambda: (_x(2, 5),)),
    "diff": (lambda a: a.diff(2, 0), lambda: (_x(4, 3),)),
    "diff_prepend": (lambda a, p: a.diff(prepend=p), lambda: (_x(2, 3), _x(2, 2, seed=1))),
    "unfold": (lambda a: a.unfold(1, 3, 2), lambda: (_x(2, 7),)),
    "unfold_wide": (lambda a: a.unfold(0, 4, 1), lambda: (_x(5),)),
    "select": (lambda a: a.select(1, -1), lambda: (_x(2, 3),)),
    "as_strided": (lambda a: a.as_strided((3, 3), (1, 1), 1), lambda: (_x(6),)),
    "meshgrid": (lambda a, b: tc.stack(tc.meshgrid(a, b, indexing="xy")), lambda: (_x(2), _x(3, seed=1))),
    "hstack": (lambda a, b: tc.hstack([a, b]), lambda: (_x(2, 1), _x(2, 2, seed=1))),
    "dstack": (lambda a, b: tc.dstack([a, b]), lambda: (_x(2), _x(2, seed=1))),
    "cartesian_prod": (lambda a, b: tc.cartesian_prod(a, b), lambda: (_x(2), _x(3, seed=1))),
    "combinations": (lambda a: tc.combinations(a, 2, True), lambda: (_x(3),)),
    "index_add": (lambda a, s: a.index_add(0, _idx([0, 2, 0]), s, alpha=2), lambda: (_x(3, 2), _x(3, 2, seed=1))),
    "index_copy": (lambda a, s: a.index_copy(1, _idx([2, 0]), s), lambda: (_x(2, 3), _x(2, 2, seed=1))),
    "index_fill_tensor": (lambda a, v: a.index_fill(1, _idx([2, 0]), v), lambda: (_x(2, 3), _x(seed=1))),
    "masked_scatter": (lambda a, s: a.masked_scatter(tc.tensor([True, False, True]), s),
                       lambda: (_x(2, 3), _x(5, seed=1))),
    "put": (lambda a, s: a.put(_idx([1, -1]), s), lambda: (_x(2, 3), _x(2, seed=1))),
    "put_accumulate": (lambda a, s: a.put(_idx([1, 1, 4]), s, accumulate=True), lambda: (_x(2, 3), _x(3, seed=1))),
    "index_put": (lambda a, v: a.index_put((_idx([0, 1]), _idx([2, 0])), v), lambda: (_x(2, 3), _x(2, seed=1))),
    "index_put_accumulate": (lambda a, v: a.index_put((_idx([1, 1]),), v, True), lambda: (_x(2, 3), _x(3, seed=1))),
    "scatter_reduce_sum": (lambda a, s: a.scatter_reduce(0, _idx([[0, 1, 0], [0, 0, 1]]), s, "sum"),
                           lambda: (_x(2, 3), _x(2, 3, seed=1))),
    "scatter_reduce_mean": (lambda a, s: a.scatter_reduce(0, _idx([[0, 1, 0], [0, 0, 1]]), s, "mean", include_self=False),
                            lambda: (_x(2, 3), _x(2, 3, seed=1))),
    "scatter_reduce_prod": (lambda a, s: a.scatter_reduce(1, _idx([[0, 0, 1], [1, 1, 1]]), s, "prod"),
                            lambda: (_x(2, 2), _x(2, 3, seed=1))),
    "scatter_reduce_amax": (lambda a, s: a.scatter_reduce(0, _idx([[0, 1, 0], [0, 0, 1]]), s, "amax"),
                            lambda: (_x(2, 3), _x(2, 3, seed=1))),
    "scatter_reduce_amin": (lambda a, s: a.scatter_reduce(0, _idx([[0, 1, 0], [0, 0, 1]]), s, "amin", include_self=False),
                            lambda: (_x(2, 3), _x(2, 3, seed=1))),
    "scatter_reduce_src_larger_than_index": (lambda a, s: a.scatter_reduce(1, _idx([[0, 0], [1, 0]]), s, "sum"),
                                             lambda: (_x(2, 2), _x(2, 3, seed=1))),
    "sum_to_size": (lambda a: a.sum_to_size(1, 3), lambda: (_x(2, 3),)),
    "squeeze_": (lambda a: (a * 1).unsqueeze_(1).squeeze_(1), lambda: (_x(2, 3),)),
    "transpose_": (lambda a: (a * 1).transpose_(0, 1), lambda: (_x(2, 3),)),
}

SECOND_ORDER = ["roll", "rot90", "unfold", "as_strided", "index_add", "index_copy", "masked_scatter", "put",
                "index_put", "scatter_reduce_sum", "scatter_reduce_mean", "scatter_reduce_prod", "scatter_reduce_amax",
                "diff", "repeat_interleave_counts", "combinations"]


test_gradcheck, test_gradgradcheck = gradcheck_tests(CASES, SECOND_ORDER, eps=1e-6, atol=1e-5, second_atol=1e-4,
                                                     rtol=1e-3)
