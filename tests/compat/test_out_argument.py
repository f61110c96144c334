"""`out=` on PyTorch's functions: results written into `out`, PyTorch's resize rule (with its warning),
its dtype rule, and its refusal when inputs require grad."""
import warnings

import numpy as np
import pytest
import torch

import tinygrad_course as tc


def _run(ns, call, out_shape, out_dtype):
    out = ns.empty(out_shape, dtype=getattr(ns, out_dtype)) if out_shape is not None else None
    a = ns.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
    b = ns.tensor([[2.0, 1.0, 0.5], [1.0, -1.0, 2.0]])
    i = ns.tensor([[1, 2, 3], [4, 5, 6]])
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        r = eval(call, {"ns": ns, "a": a, "b": b, "i": i, "out": out})
    msgs = [str(w.message).split(" (Triggered internally")[0] for w in rec if w.category is UserWarning]
    return r, out, msgs


CALLS = [
    ("ns.add(a, b, out=out)", (2, 3)), ("ns.add(a, b, alpha=2, out=out)", (2, 3)), ("ns.sub(a, 1, out=out)", (2, 3)),
    ("ns.mul(a, b, out=out)", (2, 3)), ("ns.div(a, b, out=out)", (2, 3)), ("ns.exp(a, out=out)", (2, 3)),
    ("ns.matmul(a, b.t(), out=out)", (2, 2)), ("ns.mm(a, b.t(), out=out)", (2, 2)),
    ("ns.cat([a, b], out=out)", (4, 3)), ("ns.stack([a, b], out=out)", (2, 2, 3)),
    ("ns.sum(a, 1, out=out)", (2,)), ("ns.mean(a, 0, out=out)", (3,)), ("ns.where(a > 0, a, b, out=out)", (2, 3)),
    ("ns.clamp(a, -1, 1, out=out)", (2, 3)), ("ns.tanh(a, out=out)", (2, 3)), ("ns.pow(a, 2, out=out)", (2, 3)),
    ("ns.maximum(a, b, out=out)", (2, 3)), ("ns.sqrt(b.abs(), out=out)", (2, 3)), ("ns.cumsum(a, 1, out=out)", (2, 3)),
    ("ns.zeros(2, 3, out=out)", (2, 3)), ("ns.arange(6, out=out)", (6,)), ("ns.sigmoid(a, out=out)", (2, 3)),
    ("ns.tensordot(a, b.t(), dims=1, out=out)", (2, 2)), ("ns.linalg.norm(a, dim=1, out=out)", (2,)),
    ("ns.linalg.vector_norm(a, 3, dim=0, out=out)", (3,)), ("ns.linalg.det(a[:, :2], out=out)", ()),
    ("ns.linalg.inv(a[:, :2], out=out)", (2, 2)), ("ns.linalg.cross(a, b, out=out)", (2, 3)),
]


@pytest.mark.parametrize("call, shape", CALLS)
@pytest.mark.parametrize("given", ["right", "empty", "wrong"])
def test_out_written_resized_and_returned_like_pytorch(call, shape, given):
    out_shape = {"right": shape, "empty": (0,), "wrong": (7,)}[given]
    dtype = "int64" if "arange" in call else "float32"
    r, out, msgs = _run(tc, call, out_shape, dtype)
    tr, tout, tmsgs = _run(torch, call, out_shape, dtype)
    assert r is out and tr is tout
    assert tuple(out.shape) == tuple(tout.shape)
    np.testing.assert_allclose(out.numpy(), tout.numpy(), rtol=1e-6)
    assert msgs == tmsgs
    assert (len(msgs) == 1) == (given == "wrong" and "zeros" not in call)


DTYPE_CALLS = [
    ("ns.add(a, b, out=out)", "int64"), ("ns.add(i, 1, out=out)", "bool"), ("ns.add(i, 1, out=out)", "float64"),
    ("ns.exp(i, out=out)", "int64"), ("ns.mean(a, 0, out=out)", "int64"), ("ns.cat([a], out=out)", "int64"),
    ("ns.cat([i], out=out)", "float32"), ("ns.matmul(a, b.t(), out=out)", "int64"),
    ("ns.matmul(a, b.t(), out=out)", "float64"), ("ns.where(a > 0, a, b, out=out)", "float64"),
    ("ns.clamp(a, 0, 1, out=out)", "int64"), ("ns.sum(a, 0, out=out)", "int64"), ("ns.sum(i, 0, out=out)", "float32"),
    ("ns.eq(a, 1, out=out)", "float32"), ("ns.argmax(a, out=out)", "float32"), ("ns.exp(a, out=out)", "float64"),
    ("ns.stack([a], out=out)", "int64"), ("ns.tensordot(a, b.t(), dims=1, out=out)", "float64"),
    ("ns.linalg.norm(a, dim=1, out=out)", "int64"), ("ns.linalg.vector_norm(a, dim=1, out=out)", "float64"),
    ("ns.linalg.inv(a[:, :2], out=out)", "float64"),
]


@pytest.mark.parametrize("call, dtype", DTYPE_CALLS)
def test_out_dtype_rule_like_pytorch(call, dtype):
    try:
        tr, tout, _ = _run(torch, call, (0,), dtype)
    except (RuntimeError, TypeError) as e:
        with pytest.raises(type(e)) as ours:
            _run(tc, call, (0,), dtype)
        assert str(ours.value).replace("tc.", "torch.") == str(e)
        return
    r, out, _ = _run(tc, call, (0,), dtype)
    assert str(out.dtype).split(".")[1] == str(tout.dtype).split(".")[1]
    np.testing.assert_allclose(out.numpy().astype(np.float64), tout.numpy().astype(np.float64), rtol=1e-6)


@pytest.mark.parametrize("fn", ["add", "sum", "matmul"])
def test_out_refuses_inputs_that_require_grad(fn):
    for ns in (tc, torch):
        x = ns.ones(2, 2, requires_grad=True)
        args = {"add": (x, 1), "sum": (x, 0), "matmul": (x, x)}[fn]
        with pytest.raises(RuntimeError, match=fn + r"\(\): functions with out=\.\.\. arguments don't support automatic "
                                                    r"differentiation, but one of the arguments requires grad\."):
            getattr(ns, fn)(*args, out=ns.empty(0))
        with ns.no_grad():
            r = getattr(ns, fn)(*args, out=ns.empty(0))
        assert not r.requires_grad


def test_tuple_out_for_values_and_indices():
    x, tx = tc.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]]), torch.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    v, i = tc.empty(0), tc.empty(0, dtype=tc.int64)
    tv, ti = torch.empty(0), torch.empty(0, dtype=torch.int64)
    r = tc.max(x, 1, out=(v, i))
    tc_r = torch.max(tx, 1, out=(tv, ti))
    assert r[0] is v and r[1] is i and r.values is v
    np.testing.assert_array_equal(v.numpy(), tv.numpy())
    np.testing.assert_array_equal(i.numpy(), ti.numpy())
    assert tc_r.values is tv


def test_out_may_alias_an_input():
    x, tx = tc.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0])
    tc.add(x, x, out=x)
    torch.add(tx, tx, out=tx)
    np.testing.assert_array_equal(x.numpy(), tx.numpy())
