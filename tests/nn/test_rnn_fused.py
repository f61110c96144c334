"""The fused recurrent layers (ops/recurrent.py) against PyTorch and finite differences: one graph node per layer
and direction, outputs, final states and every gradient (input, initial states, all weights) in float32 and
float64, partial use of the outputs, dropout between layers, double backward through the unfused fallback,
in-place changes after the forward, and no saved state when nothing needs a gradient."""
import numpy as np
import pytest
import torch

import tinygrad_course as tc
import tinygrad_course.nn as nn
from nn_helpers import assert_close, copy_weights, to_torch
from tinygrad_course.autograd import gradcheck, gradgradcheck
from tinygrad_course.ops.recurrent import recurrent_sequence, reference_sequence


def _graph_nodes(t):
    seen, todo = set(), [t.grad_fn]
    while todo:
        node = todo.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        todo.extend(fn for fn, _ in node.next_functions)
    return seen


@pytest.mark.parametrize("spec,node", [("LSTM(3, 4, num_layers=2, bidirectional=True)", "LstmSequenceBackward0"),
                                       ("GRU(3, 4, num_layers=2)", "GruSequenceBackward0"),
                                       ("RNN(3, 4, nonlinearity='relu', bidirectional=True)", "RnnSequenceBackward0")])
def test_one_graph_node_per_layer_and_direction(spec, node):
    module = eval("nn." + spec)
    out, _ = module(tc.randn(7, 2, 3, requires_grad=True))
    names = [n.name() for n in _graph_nodes(out)]
    directions = 2 if module.bidirectional else 1
    assert names.count(node) == module.num_layers * directions
    assert not any(name.startswith(("SigmoidBackward", "TanhBackward", "MmBackward")) for name in names)
    others = [name for name in names if name not in (node, "AccumulateGrad")]
    assert len(others) <= module.num_layers, others  # at most a cat of the two directions per layer


CONFIGS = [
    ("LSTM(3, 5, num_layers=2, bidirectional=True)", (6, 2, 3)),
    ("LSTM(3, 5, proj_size=2, batch_first=True)", (2, 6, 3)),
    ("LSTM(3, 5, proj_size=3, num_layers=2, bidirectional=True, bias=False)", (5, 3, 3)),
    ("GRU(3, 5, num_layers=2, bidirectional=True, batch_first=True)", (2, 6, 3)),
    ("GRU(3, 5, bias=False)", (6, 3)),
    ("RNN(3, 5, num_layers=2, bidirectional=True)", (6, 2, 3)),
    ("RNN(3, 5, nonlinearity='relu', batch_first=True)", (2, 6, 3)),
]


def _make(spec, dtype):
    ours, theirs = eval("nn." + spec), eval("torch.nn." + spec)
    if dtype is tc.float64:
        ours, theirs = ours.double(), theirs.double()
    copy_weights(ours, theirs)
    return ours, theirs


def _initial_states(module, shape, dtype):
    batch = () if len(shape) == 2 else (shape[0] if module.batch_first else shape[1],)
    layers = module.num_layers * (2 if module.bidirectional else 1)
    hx = tuple(tc.randn(layers, *batch, s, dtype=dtype).requires_grad_() for s in module._state_sizes())
    return hx if module.mode == "LSTM" else hx[0]


def _torch_like(hx):
    return tuple(to_torch(h) for h in hx) if isinstance(hx, tuple) else to_torch(hx)


def _states(s):
    return s if isinstance(s, tuple) else (s,)


@pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")
@pytest.mark.parametrize("use", ["all", "output", "final"])
@pytest.mark.parametrize("dtype", [tc.float32, tc.float64])
@pytest.mark.parametrize("spec,shape", CONFIGS)
def test_fused_layer_matches_torch(spec, shape, dtype, use):
    ours, theirs = _make(spec, dtype)
    x = tc.randn(*shape, dtype=dtype).requires_grad_()
    hx = _initial_states(ours, shape, dtype)
    tx, thx = to_torch(x), _torch_like(hx)
    out, state = ours(x, hx)
    tout, tstate = theirs(tx, thx)
    tol = {"atol": 1e-12, "rtol": 1e-10} if dtype is tc.float64 else {"atol": 1e-5, "rtol": 1e-4}
    assert_close(out, tout, **tol)
    for s, ts in zip(_states(state), _states(tstate)):
        assert_close(s, ts, **tol)

    def loss(o, st):
        parts = [] if use == "final" else [(o * o.cos()).sum()]
        if use != "output":
            parts += [(s * s).sum() * (k + 1) for k, s in enumerate(_states(st))]
        return sum(parts)

    loss(out, state).backward()
    loss(tout, tstate).backward()
    assert_close(x.grad, tx.grad, **tol)
    for h, th in zip(_states(hx), _states(thx)):
        assert_close(h.grad, th.grad, **tol)
    for (name, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert p.grad is not None, name
        assert_close(p.grad, tp.grad, **(tol if dtype is tc.float64 else {"atol": 1e-4, "rtol": 1e-4}))


def _x(*shape, seed=0):
    return tc.tensor(np.random.default_rng(seed).uniform(-1.0, 1.0, shape), dtype=tc.float64, requires_grad=True)


def _sequence_inputs(mode, proj=False, bias=True):
    """x (3, 2, 2), h0, [c0], w_ih, w_hh, [b_ih, b_hh], [w_hr] for hidden size 3 (projected to 2)."""
    gates = {"LSTM": 4, "GRU": 3}.get(mode, 1) * 3
    out_size = 2 if proj else 3
    tensors = {"x": _x(3, 2, 2), "h0": _x(2, out_size, seed=1), "c0": _x(2, 3, seed=2) if mode == "LSTM" else None,
               "w_ih": _x(gates, 2, seed=3), "w_hh": _x(gates, out_size, seed=4),
               "b_ih": _x(gates, seed=5) if bias else None, "b_hh": _x(gates, seed=6) if bias else None,
               "w_hr": _x(2, 3, seed=7) if proj else None}
    return tensors


SEQUENCE_CASES = [("LSTM", False, True, False), ("LSTM", True, False, True), ("GRU", False, True, True),
                  ("GRU", False, False, False), ("RNN_TANH", False, True, True), ("RNN_RELU", False, True, False)]


def _sequence_fn(mode, reverse, names, fixed, fused=True):
    def fn(*args):
        kw = dict(fixed, **dict(zip(names, args)))
        if not fused:
            outs = reference_sequence(mode, reverse, kw["x"], kw["h0"], kw["c0"], kw["w_ih"], kw["w_hh"],
                                      kw["b_ih"], kw["b_hh"], kw["w_hr"])
            return outs
        states = (kw["h0"], kw["c0"]) if mode == "LSTM" else (kw["h0"],)
        out, final = recurrent_sequence(mode, kw["x"], states, kw["w_ih"], kw["w_hh"], kw["b_ih"], kw["b_hh"],
                                        kw["w_hr"], reverse)
        return (out,) + final
    return fn


@pytest.mark.parametrize("mode,proj,bias,reverse", SEQUENCE_CASES)
def test_fused_sequence_gradcheck(mode, proj, bias, reverse):
    tensors = _sequence_inputs(mode, proj, bias)
    names = [k for k, v in tensors.items() if v is not None]
    fixed = {k: v for k, v in tensors.items() if v is None}
    assert gradcheck(_sequence_fn(mode, reverse, names, fixed), tuple(tensors[k] for k in names))


@pytest.mark.parametrize("mode,proj,bias,reverse", SEQUENCE_CASES[::2])
def test_double_backward_falls_back_to_the_unfused_layer(mode, proj, bias, reverse):
    tensors = _sequence_inputs(mode, proj, bias)
    wrt = ["x", "h0", "w_hh"]  # the rest held constant to keep the finite differences few
    fixed = {k: (None if v is None else v.detach()) for k, v in tensors.items() if k not in wrt}
    seq = _sequence_fn(mode, reverse, wrt, fixed)

    def fn(*args):  # one output tensor: the engine is given a single root
        return tc.cat([o.reshape(-1) for o in seq(*args)])

    assert gradgradcheck(fn, tuple(tensors[k] for k in wrt), eps=1e-6, atol=1e-4, rtol=1e-3)
    # and the second derivatives are those of the unfused computation
    firsts = []
    for fused in (True, False):
        args = tuple(tensors[k].detach().requires_grad_() for k in wrt)
        outs = _sequence_fn(mode, reverse, wrt, fixed, fused)(*args)
        g = tc.autograd.grad(sum((o * o).sum() for o in outs), args, create_graph=True)
        (sum((gi * gi).sum() for gi in g)).backward()
        firsts.append([a.grad for a in args])
    for a, b in zip(*firsts):
        assert tc.allclose(a, b, atol=1e-10)


def test_lstm_double_backward_matches_torch():
    ours, theirs = _make("LSTM(3, 4, num_layers=2)", tc.float64)
    x = tc.randn(5, 2, 3, dtype=tc.float64, requires_grad=True)
    tx = to_torch(x)
    (g,) = tc.autograd.grad(ours(x)[0].pow(2).sum(), x, create_graph=True)
    (tg,) = torch.autograd.grad(theirs(tx)[0].pow(2).sum(), tx, create_graph=True)
    g.pow(2).sum().backward()
    tg.pow(2).sum().backward()
    assert_close(x.grad, tx.grad, atol=1e-10, rtol=1e-8)
    for p, tp in zip(ours.parameters(), theirs.parameters()):
        assert_close(p.grad, tp.grad, atol=1e-10, rtol=1e-8)


def test_dropout_between_layers_gradcheck():
    gru = nn.GRU(2, 3, num_layers=3, dropout=0.5, bidirectional=True).double()
    x = _x(4, 1, 2)

    def fn(a):
        tc.manual_seed(0)  # the same masks at every evaluation
        return gru(a)[0]

    tc.manual_seed(0)
    first = gru(x)[0]
    gru.eval()
    assert not tc.allclose(first, gru(x)[0])  # the masks were applied in training
    gru.train()
    assert gradcheck(fn, (x,))


def test_no_saved_state_without_grad_and_same_values():
    lstm = nn.LSTM(3, 4, num_layers=2)
    x = tc.randn(5, 2, 3)
    with tc.no_grad():
        out, (h, c) = lstm(x)
    assert out.grad_fn is None and h.grad_fn is None
    out2, (h2, c2) = lstm(x.requires_grad_())
    assert out2.grad_fn is not None and out2.grad_fn.arrays is not None
    assert tc.equal(out, out2) and tc.equal(h, h2) and tc.equal(c, c2)


def test_in_place_change_of_a_weight_after_forward_is_an_error():
    gru = nn.GRU(3, 4)
    out, _ = gru(tc.randn(5, 2, 3))
    with tc.no_grad():
        gru.weight_hh_l0.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_backward_frees_the_forward_arrays_unless_the_graph_is_retained():
    lstm = nn.LSTM(3, 4)
    out, _ = lstm(tc.randn(5, 2, 3))
    node = out.grad_fn
    out.sum().backward(retain_graph=True)
    assert node.__dict__.get("arrays") is not None
    out.sum().backward()
    assert "arrays" not in node.__dict__  # freed with the other arrays the forward kept
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.sum().backward()


def test_retain_graph_allows_a_second_backward():
    rnn = nn.RNN(3, 4)
    x = tc.randn(5, 2, 3, requires_grad=True)
    out, _ = rnn(x)
    out.sum().backward(retain_graph=True)
    first = x.grad.clone()
    out.sum().backward()
    assert tc.allclose(x.grad, 2 * first)


# ---- packed sequences: finished sequences keep their states, inside the fused op -------------------------------

def _masks(lengths, steps):
    return tc.tensor([[[t < n] for n in lengths] for t in range(steps)])


@pytest.mark.parametrize("mode,proj,bias,reverse", SEQUENCE_CASES)
def test_fused_sequence_with_masks_gradcheck_and_matches_unfused(mode, proj, bias, reverse):
    tensors = _sequence_inputs(mode, proj, bias)
    masks = _masks([3, 1], 3)
    names = [k for k, v in tensors.items() if v is not None]
    fixed = {k: v for k, v in tensors.items() if v is None}
    args = tuple(tensors[k] for k in names)

    def fused(*a):
        kw = dict(fixed, **dict(zip(names, a)))
        states = (kw["h0"], kw["c0"]) if mode == "LSTM" else (kw["h0"],)
        out, final = recurrent_sequence(mode, kw["x"], states, kw["w_ih"], kw["w_hh"], kw["b_ih"], kw["b_hh"],
                                        kw["w_hr"], reverse, masks)
        return (out,) + final

    def unfused(*a):
        kw = dict(fixed, **dict(zip(names, a)))
        return reference_sequence(mode, reverse, kw["x"], kw["h0"], kw["c0"], kw["w_ih"], kw["w_hh"], kw["b_ih"],
                                  kw["b_hh"], kw["w_hr"], masks)

    for a, b in zip(fused(*args), unfused(*args)):
        assert tc.allclose(a, b, atol=1e-12)
    assert gradcheck(fused, args)


@pytest.mark.parametrize("spec", ["LSTM(3, 4, proj_size=2, num_layers=2, bidirectional=True)",
                                  "GRU(3, 4, num_layers=2, bidirectional=True)", "RNN(3, 4, nonlinearity='relu')"])
def test_packed_input_float64_matches_torch_through_one_node_per_direction(spec):
    ours, theirs = _make(spec, tc.float64)
    seqs = [tc.randn(n, 3, dtype=tc.float64, requires_grad=True) for n in (2, 5, 3)]
    tseqs = [to_torch(s) for s in seqs]
    packed = nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False)
    tpacked = torch.nn.utils.rnn.pack_sequence(tseqs, enforce_sorted=False)
    out, state = ours(packed)
    tout, tstate = theirs(tpacked)
    assert_close(out.data, tout.data, atol=1e-12, rtol=1e-10)
    for s, ts in zip(_states(state), _states(tstate)):
        assert_close(s, ts, atol=1e-12, rtol=1e-10)
    names = [n.name() for n in _graph_nodes(out.data)]
    assert sum(name.endswith("SequenceBackward0") for name in names) == ours.num_layers * (1 + ours.bidirectional)
    (out.data.sin().sum() + sum((s * s).sum() for s in _states(state))).backward()
    (tout.data.sin().sum() + sum((s * s).sum() for s in _states(tstate))).backward()
    for s, ts in zip(seqs, tseqs):
        assert_close(s.grad, ts.grad, atol=1e-12, rtol=1e-10)
    for p, tp in zip(ours.parameters(), theirs.parameters()):
        assert_close(p.grad, tp.grad, atol=1e-12, rtol=1e-10)


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_double_backward_with_masks(mode):
    t = _sequence_inputs(mode)
    masks = _masks([1, 3], 3)
    fixed = [None if t[k] is None else t[k].detach() for k in ("c0", "w_ih", "w_hh", "b_ih", "b_hh")]

    def fn(x, h0):
        states = (h0, fixed[0]) if mode == "LSTM" else (h0,)
        out, final = recurrent_sequence(mode, x, states, *fixed[1:], reverse=True, masks=masks)
        return tc.cat([out.reshape(-1)] + [s.reshape(-1) for s in final])

    assert gradgradcheck(fn, (t["x"], t["h0"]), eps=1e-6, atol=1e-4, rtol=1e-3)


@pytest.mark.parametrize("spec", ["LSTM(3, 4, num_layers=2)", "GRU(3, 4)", "RNN(3, 4, bidirectional=True)"])
def test_autocast_dtypes_match_torch(spec):
    """CPU autocast (bfloat16): PyTorch runs LSTM and RNN in it, GRU in float32."""
    ours, theirs = _make(spec, tc.float32)
    ours.to("cpu")
    x = tc.randn(5, 2, 3, device="cpu", requires_grad=True)
    tx = to_torch(x)
    with tc.autocast("cpu"):
        out, state = ours(x)
    with torch.autocast("cpu"):
        tout, tstate = theirs(tx)
    assert_close(out.float(), tout.float(), atol=3e-2, rtol=3e-2)
    for s, ts in zip(_states(state) + (out,), _states(tstate) + (tout,)):
        assert str(s.dtype).split(".")[-1] == str(ts.dtype).split(".")[-1]
    out.float().sum().backward()
    tout.float().sum().backward()
    assert x.grad.dtype is tc.float32 and ours.weight_hh_l0.grad.dtype is tc.float32
    assert_close(x.grad, tx.grad, atol=5e-2, rtol=5e-2)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("spec", ["LSTM(3, 4, bidirectional=True)", "GRU(3, 4)", "RNN(3, 4, nonlinearity='relu')"])
def test_16_bit_layers_keep_their_dtype_and_match_torch(spec, dtype):
    """16-bit inputs and weights: computed in float32 and rounded once, outputs and gradients in the 16-bit dtype."""
    ours, theirs = _make(spec, tc.float32)
    ours.to(getattr(tc, dtype))
    theirs.to(getattr(torch, dtype))
    data = np.random.default_rng(0).standard_normal((5, 2, 3)).astype(np.float32)
    x = tc.tensor(data).to(getattr(tc, dtype)).requires_grad_()
    tx = torch.tensor(data).to(getattr(torch, dtype)).requires_grad_()
    out, state = ours(x)
    tout, tstate = theirs(tx)
    assert all(str(s.dtype) == "tc." + dtype for s in (out,) + _states(state))
    assert_close(out.float(), tout.float(), atol=2e-2, rtol=2e-2)
    out.float().sum().backward()
    tout.float().sum().backward()
    assert str(x.grad.dtype) == str(ours.weight_ih_l0.grad.dtype) == "tc." + dtype
    assert_close(x.grad.float(), tx.grad.float(), atol=5e-2, rtol=5e-2)
    assert_close(ours.weight_hh_l0.grad.float(), theirs.weight_hh_l0.grad.float(), atol=5e-2, rtol=5e-2)
