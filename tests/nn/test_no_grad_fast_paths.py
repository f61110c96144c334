"""The shortcuts taken when no graph is recorded (generation under `no_grad`): `F.linear` and `F.layer_norm`
compute on the arrays without running their ops (view/t/addmm/view; Normalize), embedding lookups are one
`take`, `topk(k=1)` is an argmax, `cat` and softmax do less bookkeeping. Each gives PyTorch's result, and every
case a shortcut does not cover (grad mode on, other dtypes or devices, bad sizes, the profiler, autocast,
build mode) runs the ops as before."""
import numpy as np
import pytest
import torch

import tinygrad_course as tc
import tinygrad_course.nn.functional as F
from tinygrad_course import seams
from tinygrad_course.autograd import engine


@pytest.fixture
def ops_run(monkeypatch):
    """A list that collects the name of every op applied while the test runs."""
    names = []
    apply = engine.Op._apply.__func__

    def counting(cls, *args, **kwargs):
        names.append(cls.__name__)
        return apply(cls, *args, **kwargs)

    monkeypatch.setattr(engine.Op, "_apply", classmethod(counting))
    return names


def _linear_pair(shape, out_features=5, bias=True, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((out_features, shape[-1])).astype(dtype)
    b = rng.standard_normal(out_features).astype(dtype) if bias else None
    return x, w, b


def _tc(a, requires_grad=False):
    return None if a is None else tc.tensor(a, requires_grad=requires_grad)


def _torch(a):
    return None if a is None else torch.tensor(a)


@pytest.mark.parametrize("shape", [(7,), (3, 7), (2, 3, 7), (2, 1, 3, 7), (1, 1, 7)])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_linear_without_a_graph_runs_no_op_and_matches_torch(ops_run, shape, bias, dtype):
    x, w, b = _linear_pair(shape, bias=bias, dtype=dtype)
    weight, bias_t = _tc(w, True), _tc(b, True)  # parameters require grad, as in a model under no_grad
    with tc.no_grad():
        y = F.linear(_tc(x), weight, bias_t)
    assert ops_run == []
    expected = torch.nn.functional.linear(_torch(x), _torch(w), _torch(b))
    assert tuple(y.shape) == tuple(expected.shape) and y.dtype.name == str(expected.dtype).split(".")[-1]
    assert not y.requires_grad and y.grad_fn is None and y.is_contiguous()
    np.testing.assert_allclose(y.numpy(), expected.numpy(), rtol=1e-5, atol=1e-5)
    # grad mode on but nothing requiring grad records nothing either
    y2 = F.linear(_tc(x), _tc(w), _tc(b))
    assert ops_run == [] and y2.grad_fn is None
    np.testing.assert_array_equal(y2.numpy(), y.numpy())


@pytest.mark.parametrize("shape", [(3, 7), (2, 3, 7)])
def test_linear_with_a_graph_records_pytorchs_nodes(ops_run, shape):
    x, w, b = _linear_pair(shape)
    weight, bias = _tc(w, True), _tc(b, True)
    y = F.linear(_tc(x), weight, bias)
    assert "Addmm" in ops_run
    assert y.grad_fn.name() == ("AddmmBackward0" if len(shape) == 2 else "ViewBackward0")
    y.sum().backward()
    tw = torch.tensor(w, requires_grad=True)
    torch.nn.functional.linear(torch.tensor(x), tw, torch.tensor(b)).sum().backward()
    np.testing.assert_allclose(weight.grad.numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_linear_falls_back_to_the_ops_for_what_it_does_not_cover(ops_run):
    x, w, b = _linear_pair((2, 3, 7))
    with tc.no_grad():
        half = F.linear(_tc(x).half(), _tc(w).half(), _tc(b).half())  # float16: the ops' float32 accumulation
        assert half.dtype is tc.float16 and ops_run
        ops_run.clear()
        F.linear(_tc(x), _tc(w), tc.tensor([0.5]))  # a bias that broadcasts
        assert "Addmm" in ops_run
        with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied"):
            F.linear(_tc(x), _tc(w[:, :6]), _tc(b))
        with pytest.raises(RuntimeError):
            F.linear(_tc(x).double(), _tc(w), _tc(b))  # mixed dtypes: the op's error
        ops_run.clear()
        with tc.profiler.profile() as prof:
            F.linear(_tc(x), _tc(w), _tc(b))
        assert "Addmm" in ops_run and "aten::addmm" in prof.key_averages().table()
        ops_run.clear()
        with tc.autocast("cpu", dtype=tc.bfloat16):
            assert F.linear(_tc(x), _tc(w), _tc(b)).dtype is tc.bfloat16
        assert ops_run


def test_linear_runs_the_ops_in_build_mode(ops_run):
    x, w, b = _linear_pair((3, 7))
    seams.install("sum_to_shape", seams.reference("sum_to_shape"))  # any installed component
    try:
        with tc.no_grad():
            F.linear(_tc(x), _tc(w), _tc(b))
    finally:
        seams.uninstall("sum_to_shape")
    assert "Addmm" in ops_run


def test_linear_module_hooks_still_run_under_no_grad():
    layer = tc.nn.Linear(7, 5)
    seen = []
    layer.register_forward_hook(lambda module, args, out: seen.append(tuple(out.shape)))
    with tc.no_grad():
        y = layer(tc.ones(2, 3, 7))
    assert seen == [(2, 3, 5)] and tuple(y.shape) == (2, 3, 5)


def test_embedding_lookup_without_a_graph():
    w = np.random.default_rng(0).standard_normal((10, 4)).astype(np.float32)
    weight = tc.tensor(w, requires_grad=True)
    for idx in ([[1, -1, 3]], [0, 9], [[[2]]], np.array([4, -10], dtype=np.int32)):
        with tc.no_grad():
            ours = F.embedding(tc.tensor(idx), weight)
        assert ours.grad_fn is None
        np.testing.assert_array_equal(ours.numpy(), w[np.asarray(idx) % 10])
    for bad in ([10], [-11]):
        with tc.no_grad(), pytest.raises(IndexError, match="index out of range in self"):
            F.embedding(tc.tensor(bad), weight)
    out = F.embedding(tc.tensor([[1, 1, -1]]), weight)  # recorded: the gradient adds into each row
    out.sum().backward()
    np.testing.assert_array_equal(weight.grad.numpy()[:, 0], [0, 2, 0, 0, 0, 0, 0, 0, 0, 1])


@pytest.mark.parametrize("dtype", [tc.float32, tc.float64, tc.int64, tc.bfloat16])
def test_topk_one_is_the_first_maximum(dtype):
    a = np.array([[1, 3, 0, 3], [2, 2, 1, 0], [0, 1, 1, 1]], np.float32)
    x = tc.tensor(a).to(dtype)
    values, indices = x.topk(1, dim=-1)
    assert indices.numpy().tolist() == [[1], [0], [1]] and values.float().numpy().tolist() == [[3], [2], [1]]
    assert values.dtype is dtype and indices.dtype is tc.int64
    values, indices = x.topk(1, dim=0)
    assert indices.numpy().tolist() == [[1, 0, 1, 0]]
    values, indices = x.topk(1, dim=-1, largest=False)
    assert values.float().numpy().tolist() == [[0], [0], [0]]


def test_topk_one_counts_nan_as_largest_and_keeps_its_gradient():
    x = tc.tensor([[1.0, float("nan"), 5.0], [4.0, 2.0, 4.0]], requires_grad=True)
    values, indices = x.topk(1)
    expected = torch.tensor([[1.0, float("nan"), 5.0], [4.0, 2.0, 4.0]]).topk(1)
    assert indices.numpy().tolist() == expected.indices.numpy().tolist()
    np.testing.assert_array_equal(values.detach().numpy(), expected.values.numpy())
    values.backward(tc.ones(2, 1))
    assert x.grad.numpy().tolist() == [[0, 1, 0], [1, 0, 0]]


def test_cat_promotes_and_records_only_with_a_graph():
    a = tc.ones(2, 3, requires_grad=True)
    out = tc.cat([a, tc.zeros(0), tc.full((1, 3), 2, dtype=tc.int64)], 0)
    assert out.dtype is tc.float32 and out.detach().numpy().tolist() == [[1] * 3, [1] * 3, [2] * 3]
    out.sum().backward()
    assert a.grad.numpy().tolist() == [[1] * 3] * 2
    with tc.no_grad():
        same = tc.cat([a, a], dim=1)
    assert same.grad_fn is None and tuple(same.shape) == (2, 6)
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 1. Expected size 2 "
                                           "but got size 3 for tensor number 1 in the list."):
        tc.cat([a, tc.ones(3, 3)], dim=1)
    assert tc.cat([tc.zeros(0), tc.ones(2, dtype=tc.int64)]).dtype is tc.float32


def test_softmax_matches_torch_on_special_values():
    a = np.array([[1, np.inf, 2], [np.nan, 1, 2], [-np.inf, -np.inf, 0], [1e30, -1e30, 0]], np.float32)
    ours = F.softmax(tc.tensor(a), dim=1).numpy()
    np.testing.assert_allclose(ours, torch.softmax(torch.tensor(a), 1).numpy(), equal_nan=True)
    for dim in (0, 1):
        b = np.random.default_rng(dim).standard_normal((4, 5))
        np.testing.assert_allclose(F.softmax(tc.tensor(b), dim=dim).numpy(),
                                   torch.softmax(torch.tensor(b), dim).numpy(), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_norm_statistics_are_numpys_mean(dtype):
    """The mean and variance are NumPy's `mean` to the bit, however the sums are taken."""
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 5, 97)) * 1e3 + 7).astype(dtype)
    out = F.layer_norm(tc.tensor(a), (5, 97), eps=1e-5).numpy()
    mean = a.mean(axis=(1, 2), keepdims=True)
    xc = a - mean
    expected = (xc * (1.0 / np.sqrt((xc * xc).mean(axis=(1, 2), keepdims=True) + 1e-5))).astype(dtype)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_without_a_graph_runs_no_op_and_matches_torch(ops_run, affine):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 3, 8)).astype(np.float32)
    ours, theirs = tc.nn.LayerNorm(8, elementwise_affine=affine), torch.nn.LayerNorm(8, elementwise_affine=affine)
    if affine:
        w, b = rng.standard_normal(8).astype(np.float32), rng.standard_normal(8).astype(np.float32)
        ours.load_state_dict({"weight": tc.tensor(w), "bias": tc.tensor(b)})
        theirs.load_state_dict({"weight": torch.tensor(w), "bias": torch.tensor(b)})
    ops_run.clear()
    with tc.no_grad():
        y = ours(tc.tensor(a))
    assert ops_run == [] and y.grad_fn is None
    with torch.no_grad():
        np.testing.assert_allclose(y.numpy(), theirs(torch.tensor(a)).numpy(), rtol=1e-5, atol=1e-5)
    plain = ours(tc.tensor(a))  # grad mode on: recorded only when something requires grad
    assert ops_run == ["Normalize"] * affine and (plain.grad_fn is not None) == affine
    recorded = ours(tc.tensor(a, requires_grad=True))
    assert ops_run[-1] == "Normalize" and recorded.grad_fn.name() == "NativeLayerNormBackward0"
    np.testing.assert_array_equal(recorded.detach().numpy(), y.numpy())
    np.testing.assert_array_equal(plain.detach().numpy(), y.numpy())


def test_layer_norm_falls_back_to_the_op_for_other_dtypes_and_autocast(ops_run):
    x = tc.tensor(np.random.default_rng(2).standard_normal((3, 8)).astype(np.float32))
    layer = tc.nn.LayerNorm(8)
    with tc.no_grad():
        layer.half()
        x16 = x.half()
        ops_run.clear()
        assert layer(x16).dtype is tc.float16 and ops_run == ["Normalize"]
        layer.float()
        ops_run.clear()
        with tc.autocast("cpu", dtype=tc.bfloat16):
            layer(x)
        assert ops_run == ["Normalize"]  # autocast decides the op's dtypes


@pytest.mark.parametrize("shape, normalized", [((64,), (64,)), ((1, 1, 64), (64,)), ((1, 2, 3), (2, 3)),
                                               ((1, 1, 5), (1, 5))])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_norm_of_one_row_runs_no_op_and_gives_the_ops_bits(ops_run, shape, normalized, affine, dtype):
    """Generation's single position: torch's values, and the recorded op's bits (the same sums in the same order)."""
    rng = np.random.default_rng(3)
    a = (rng.standard_normal(shape) * 10 + 3).astype(dtype)
    w = rng.standard_normal(normalized).astype(dtype) if affine else None
    b = rng.standard_normal(normalized).astype(dtype) if affine else None
    ops_run.clear()
    with tc.no_grad():
        y = F.layer_norm(tc.tensor(a), normalized, _tc(w), _tc(b), eps=1e-5)
    assert ops_run == [] and y.grad_fn is None and y.shape == shape and y.dtype is tc.tensor(a).dtype
    recorded = F.layer_norm(tc.tensor(a, requires_grad=True), normalized, _tc(w), _tc(b), eps=1e-5)
    assert ops_run == ["Normalize"]
    np.testing.assert_array_equal(y.numpy(), recorded.detach().numpy())
    expected = torch.nn.functional.layer_norm(torch.tensor(a), normalized, _torch(w), _torch(b), eps=1e-5)
    np.testing.assert_allclose(y.numpy(), expected.numpy(), rtol=1e-5, atol=1e-5)


def test_layer_norm_of_one_long_row_and_of_half_rows_take_the_general_paths(ops_run):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((1, 5000)).astype(np.float32)  # from 4096 numbers on the sums are products
    with tc.no_grad():
        y = F.layer_norm(tc.tensor(a), (5000,))
        x16 = tc.tensor(a[:, :64]).half()
        assert ops_run == ["ToCopy"]
        ops_run.clear()
        half = F.layer_norm(x16, (64,))
    assert ops_run == ["Normalize"] and half.dtype is tc.float16
    recorded = F.layer_norm(tc.tensor(a, requires_grad=True), (5000,))
    np.testing.assert_array_equal(y.numpy(), recorded.detach().numpy())
    np.testing.assert_allclose(y.numpy(), torch.nn.functional.layer_norm(torch.tensor(a), (5000,)).numpy(),
                               rtol=1e-5, atol=1e-5)


def _qkv(length, source, dtype=np.float32, heads=3, kv_heads=3, seed=5):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((2, heads, length, 8)).astype(dtype),
            rng.standard_normal((2, kv_heads, source, 8)).astype(dtype),
            rng.standard_normal((2, kv_heads, source, 8)).astype(dtype))


@pytest.mark.parametrize("source", [1, 5, 40, 255])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("scale", [None, 0.7])
def test_one_query_attention_runs_no_op_and_gives_the_ops_bits(ops_run, source, dtype, scale):
    """One query against a key/value cache: torch's values, and the fused op's bits."""
    q, k, v = _qkv(1, source, dtype)
    ops_run.clear()
    with tc.no_grad():
        y = F.scaled_dot_product_attention(_tc(q), _tc(k), _tc(v), scale=scale)
    assert ops_run == [] and y.grad_fn is None and y.shape == (2, 3, 1, 8)
    recorded = F.scaled_dot_product_attention(_tc(q, True), _tc(k), _tc(v), scale=scale)
    assert ops_run == ["ScaledDotProductAttention"]
    np.testing.assert_array_equal(y.numpy(), recorded.detach().numpy())
    expected = torch.nn.functional.scaled_dot_product_attention(_torch(q), _torch(k), _torch(v), scale=scale)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(y.numpy(), expected.numpy(), rtol=tol, atol=tol)


def test_one_query_attention_with_grouped_heads_and_extreme_scores():
    q, k, v = _qkv(1, 6, heads=4, kv_heads=2)
    q[0, 0, 0] *= 1e3  # scores far beyond exp's range: the maximum is subtracted
    with tc.no_grad():
        y = F.scaled_dot_product_attention(_tc(q), _tc(k), _tc(v), enable_gqa=True)
    expected = torch.nn.functional.scaled_dot_product_attention(_torch(q), _torch(k), _torch(v), enable_gqa=True)
    assert np.isfinite(y.numpy()).all()
    np.testing.assert_allclose(y.numpy(), expected.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", ["mask", "causal", "long", "grad", "two queries", "dropout-free float16"])
def test_one_query_attention_falls_back_to_the_op(ops_run, case):
    """A mask (a causal one keeps only the first key for one query), 256 keys or more (the op bounds the
    scores), a graph, several queries and other dtypes go through the op, with torch's values."""
    length, source = (2, 5) if case == "two queries" else (1, 300 if case == "long" else 5)
    q, k, v = _qkv(length, source)
    mask = np.random.default_rng(6).random((1, source)) > 0.3 if case == "mask" else None
    kwargs = {"is_causal": case == "causal"}
    ours = [_tc(q, case == "grad"), _tc(k), _tc(v)]
    theirs = [_torch(q), _torch(k), _torch(v)]
    if case == "dropout-free float16":
        ours = [t.half() for t in ours]
    ops_run.clear()
    with tc.set_grad_enabled(case == "grad"):
        y = F.scaled_dot_product_attention(*ours, attn_mask=_tc(mask), **kwargs)
    assert ops_run[-1:] == ["ScaledDotProductAttention"] or case == "dropout-free float16" and ops_run
    assert (y.grad_fn is not None) == (case == "grad")
    expected = torch.nn.functional.scaled_dot_product_attention(*theirs, attn_mask=_torch(mask), **kwargs)
    tol = 2e-3 if case == "dropout-free float16" else 1e-5
    np.testing.assert_allclose(y.detach().float().numpy(), expected.numpy(), rtol=tol, atol=tol)
