"""RNN, LSTM, GRU and their cells against PyTorch (copied weights: outputs, final states, input and parameter
gradients, reprs, parameter layout, errors), nn.utils.rnn padding/packing, and a gradcheck table."""
import math
import warnings

import numpy as np
import pytest
import torch

import tinygrad_course as tc
import tinygrad_course.nn as nn
import tinygrad_course.nn.functional as F
from nn_helpers import assert_close, error_of, seeded, to_torch
from tinygrad_course.autograd import gradcheck, gradgradcheck
from gradcheck_table import gradcheck_test
from tinygrad_course.nn.modules.rnn_cells import _gru_step, _lstm_step, _rnn_step
from tinygrad_course.nn.utils import rnn as rnn_utils


def _states(out):
    return out if isinstance(out, tuple) else (out,)


def _run_both(spec, shape, dtype=tc.float32, with_hx=False):
    ours, theirs = seeded(spec)
    if dtype is tc.float64:
        ours, theirs = ours.double(), theirs.double()
    x = tc.randn(*shape, dtype=dtype).requires_grad_()
    args, targs = [x], [to_torch(x)]
    if with_hx:
        unbatched = len(shape) == 2
        batch = () if unbatched else (shape[0] if ours.batch_first else shape[1],)
        layers = ours.num_layers * (2 if ours.bidirectional else 1)
        sizes = ours._state_sizes()
        hx = tuple(tc.randn(layers, *batch, s, dtype=dtype).requires_grad_() for s in sizes)
        hx = hx if ours.mode == "LSTM" else hx[0]
        args.append(hx)
        targs.append(tuple(to_torch(h) for h in hx) if isinstance(hx, tuple) else to_torch(hx))
    return ours, theirs, args, targs


RNN_CONFIGS = [
    ("RNN(3, 5)", (4, 2, 3)),
    ("RNN(3, 5, 2, nonlinearity='relu', bidirectional=True)", (4, 2, 3)),
    ("RNN(3, 5, bias=False, batch_first=True)", (2, 4, 3)),
    ("RNN(3, 5, num_layers=2)", (4, 3)),  # unbatched
    ("LSTM(3, 5)", (4, 2, 3)),
    ("LSTM(3, 5, num_layers=2, bidirectional=True, batch_first=True)", (2, 4, 3)),
    ("LSTM(3, 5, proj_size=2, num_layers=2, bidirectional=True)", (4, 2, 3)),
    ("LSTM(3, 5, bias=False)", (4, 3)),
    ("GRU(3, 5)", (4, 2, 3)),
    ("GRU(3, 5, num_layers=3, bidirectional=True)", (4, 2, 3)),
    ("GRU(3, 5, batch_first=True, bias=False)", (4, 3)),
]


@pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")
@pytest.mark.parametrize("with_hx", [False, True])
@pytest.mark.parametrize("spec,shape", RNN_CONFIGS)
def test_recurrent_layer_matches_torch(spec, shape, with_hx):
    ours, theirs, args, targs = _run_both(spec, shape, with_hx=with_hx)
    out, state = ours(*args)
    tout, tstate = theirs(*targs)
    assert_close(out, tout)
    assert len(_states(state)) == len(_states(tstate))
    for s, ts in zip(_states(state), _states(tstate)):
        assert_close(s, ts)
    loss = (out * out).sum() + sum((s * s.sin()).sum() for s in _states(state))
    tloss = (tout * tout).sum() + sum((s * s.sin()).sum() for s in _states(tstate))
    loss.backward()
    tloss.backward()
    for a, ta in zip(args, targs):
        for g, tg in zip(_states(a), _states(ta)):
            assert_close(g.grad, tg.grad)
    for (name, p), (tname, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert name == tname
        assert_close(p.grad, tp.grad, atol=1e-4)


@pytest.mark.parametrize("spec", ["LSTM(3, 4, num_layers=2, bidirectional=True)", "GRU(3, 4, batch_first=True)"])
def test_float64_is_exact(spec):
    ours, theirs, args, targs = _run_both(spec, (3, 2, 3), dtype=tc.float64, with_hx=True)
    out, tout = ours(*args)[0], theirs(*targs)[0]
    assert_close(out, tout, atol=1e-12, rtol=1e-12)


CELLS = ["RNNCell(3, 4)", "RNNCell(3, 4, bias=False, nonlinearity='relu')", "LSTMCell(3, 4)",
         "LSTMCell(3, 4, bias=False)", "GRUCell(3, 4)", "GRUCell(3, 4, bias=False)"]


@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_hx", [False, True])
@pytest.mark.parametrize("spec", CELLS)
def test_cell_matches_torch(spec, with_hx, batched):
    ours, theirs = seeded(spec)
    lead = (2,) if batched else ()
    x = tc.randn(*lead, 3, requires_grad=True)
    args, targs = [x], [to_torch(x)]
    if with_hx:
        hx = tuple(tc.randn(*lead, 4, requires_grad=True) for _ in range(2 if "LSTM" in spec else 1))
        args.append(hx if "LSTM" in spec else hx[0])
        targs.append(tuple(map(to_torch, hx)) if "LSTM" in spec else to_torch(hx[0]))
    out, tout = ours(*args), theirs(*targs)
    for o, t in zip(_states(out), _states(tout)):
        assert_close(o, t)
    sum((o * o).sum() for o in _states(out)).backward()
    sum((t * t).sum() for t in _states(tout)).backward()
    assert_close(x.grad, targs[0].grad)
    for p, tp in zip(ours.parameters(), theirs.parameters()):
        assert_close(p.grad, tp.grad)


ALL_SPECS = [spec for spec, _ in RNN_CONFIGS] + CELLS + ["RNN(3, 4, dropout=0.5, num_layers=2)"]


@pytest.mark.parametrize("spec", ALL_SPECS)
def test_repr_and_parameter_layout_match_torch(spec):
    ours, theirs = eval("nn." + spec), eval("torch.nn." + spec)
    assert repr(ours) == repr(theirs)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
           [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]


@pytest.mark.parametrize("spec", ["LSTM(20, 16, num_layers=2)", "GRUCell(10, 25)"])
def test_initialisation_is_uniform_in_one_over_sqrt_hidden(spec):
    module = eval("nn." + spec)
    bound = 1 / math.sqrt(module.hidden_size)
    values = np.concatenate([p.detach().cpu().numpy().ravel() for p in module.parameters()])
    assert values.min() >= -bound and values.max() <= bound
    assert values.min() < -0.9 * bound and values.max() > 0.9 * bound  # spread over the whole range
    assert abs(values.mean()) < 0.1 * bound


def test_dropout_between_layers_only_in_training():
    ours, theirs = seeded("GRU(3, 4, num_layers=2, dropout=0.5)")
    x = tc.randn(5, 2, 3)
    train_a, train_b = ours(x)[0], ours(x)[0]
    assert not tc.allclose(train_a, train_b)  # a fresh mask each call
    ours.eval()
    theirs.eval()
    assert_close(ours(x)[0], theirs(to_torch(x))[0])
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.LSTM(3, 4, dropout=0.2)


def test_all_weights_and_flatten_parameters():
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    lstm.flatten_parameters()
    assert [[tuple(w.shape) for w in ws] for ws in lstm.all_weights] == \
           [[tuple(w.shape) for w in ws] for ws in torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True).all_weights]


ERROR_CASES = [
    ("LSTM(3, 4)", lambda m, T: m(T.randn(2, 3, 4, 3))),
    ("GRU(3, 4)", lambda m, T: m(T.randn(2, 3, 4, 3))),
    ("RNN(3, 4)", lambda m, T: m(T.randn(5, 2, 4))),
    ("RNN(3, 4)", lambda m, T: m(T.randn(5, 2, 3), T.randn(1, 3, 4))),
    ("RNN(3, 4)", lambda m, T: m(T.randn(5, 2, 3), T.randn(2, 4))),
    ("LSTM(3, 4)", lambda m, T: m(T.randn(5, 2, 3), (T.randn(1, 2, 4), T.randn(1, 3, 4)))),
    ("LSTM(3, 4)", lambda m, T: m(T.randn(5, 3), (T.randn(1, 1, 4), T.randn(1, 1, 4)))),
    ("GRU(3, 4)", lambda m, T: m(T.randn(5, 2, 3, dtype=T.float64))),
    ("RNNCell(3, 4)", lambda m, T: m(T.randn(2, 5))),
    ("RNNCell(3, 4)", lambda m, T: m(T.randn(2, 3), T.randn(3, 4))),
    ("RNNCell(3, 4)", lambda m, T: m(T.randn(1, 2, 3))),
    ("LSTMCell(3, 4)", lambda m, T: m(T.randn(2, 3), (T.randn(2, 4), T.randn(2, 5)))),
    ("GRUCell(3, 4)", lambda m, T: m(T.randn(2, 3), T.randn(1, 2, 4))),
]


@pytest.mark.parametrize("spec,call", ERROR_CASES)
def test_errors_match_torch(spec, call):
    ours = error_of(lambda: call(eval("nn." + spec), tc))
    theirs = error_of(lambda: call(eval("torch.nn." + spec), torch))
    assert theirs is not None and ours is not None
    assert ours[0] is theirs[0]
    assert ours[1] == theirs[1].replace("torch.", "tc.")


@pytest.mark.parametrize("ctor", ["RNN(3, 4, nonlinearity='gelu')", "GRU(3, 4, proj_size=2)", "LSTM(3, 4, proj_size=4)",
                                  "LSTM(3, 0)", "RNN(3, 4, dropout=1.5)", "LSTM(3, 4, num_layers=0)",
                                  "GRU(3.0, 4)", "RNN(3, 4, bias=1)"])
def test_constructor_errors_match_torch(ctor):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = error_of(lambda: eval("nn." + ctor)), error_of(lambda: eval("torch.nn." + ctor))
    assert theirs is not None and ours == theirs


# ---- nn.utils.rnn --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_matches_torch(batch_first, padding_side):
    seqs = [tc.randn(n, 2, 3, requires_grad=True) for n in (3, 1, 4)]
    tseqs = [to_torch(s) for s in seqs]
    out = rnn_utils.pad_sequence(seqs, batch_first, -1.5, padding_side)
    tout = torch.nn.utils.rnn.pad_sequence(tseqs, batch_first, -1.5, padding_side)
    assert_close(out, tout)
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    for s, ts in zip(seqs, tseqs):
        assert_close(s.grad, ts.grad)
    assert error_of(lambda: rnn_utils.pad_sequence(seqs, padding_side="up")) == \
        error_of(lambda: torch.nn.utils.rnn.pad_sequence(tseqs, padding_side="up"))


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_and_pad_round_trip_matches_torch(enforce_sorted):
    lengths = [5, 3, 2] if enforce_sorted else [2, 5, 3]
    x = tc.randn(3, 5, 4, requires_grad=True)
    tx = to_torch(x)
    packed = rnn_utils.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=enforce_sorted)
    tpacked = torch.nn.utils.rnn.pack_padded_sequence(tx, lengths, batch_first=True, enforce_sorted=enforce_sorted)
    assert_close(packed.data, tpacked.data)
    assert packed.batch_sizes.tolist() == tpacked.batch_sizes.tolist()
    assert packed.batch_sizes.device.type == "cpu"
    for ours, theirs in ((packed.sorted_indices, tpacked.sorted_indices),
                         (packed.unsorted_indices, tpacked.unsorted_indices)):
        assert (ours is None and theirs is None) or ours.tolist() == theirs.tolist()
    padded, lens = rnn_utils.pad_packed_sequence(packed, batch_first=True, padding_value=9.0, total_length=6)
    tpadded, tlens = torch.nn.utils.rnn.pad_packed_sequence(tpacked, batch_first=True, padding_value=9.0,
                                                            total_length=6)
    assert_close(padded, tpadded)
    assert lens.tolist() == tlens.tolist() and lens.dtype is tc.int64
    (padded * padded).sum().backward()
    (tpadded * tpadded).sum().backward()
    assert_close(x.grad, tx.grad)


def test_packing_errors_match_torch():
    x, tx = tc.randn(3, 2), torch.randn(3, 2)
    for lengths in ([2, 3], [3, 0], [3]):
        assert error_of(lambda: rnn_utils.pack_padded_sequence(x, lengths)) == \
            error_of(lambda: torch.nn.utils.rnn.pack_padded_sequence(tx, lengths))
    packed = rnn_utils.pack_padded_sequence(x, [3, 2])
    tpacked = torch.nn.utils.rnn.pack_padded_sequence(tx, [3, 2])
    assert error_of(lambda: rnn_utils.pad_packed_sequence(packed, total_length=2)) == \
        error_of(lambda: torch.nn.utils.rnn.pad_packed_sequence(tpacked, total_length=2))


@pytest.mark.parametrize("spec", ["LSTM(3, 4, num_layers=2, bidirectional=True)", "GRU(3, 4, bidirectional=True)",
                                  "RNN(3, 4)"])
def test_packed_input_matches_torch(spec):
    ours, theirs = seeded(spec)
    seqs = [tc.randn(n, 3, requires_grad=True) for n in (2, 5, 3)]
    tseqs = [to_torch(s) for s in seqs]
    packed = rnn_utils.pack_sequence(seqs, enforce_sorted=False)
    tpacked = torch.nn.utils.rnn.pack_sequence(tseqs, enforce_sorted=False)
    hx = tc.randn(ours.num_layers * (2 if ours.bidirectional else 1), 3, 4, requires_grad=True)
    args = (hx, tc.zeros_like(hx)) if "LSTM" in spec else hx
    targs = (to_torch(hx), torch.zeros(tuple(hx.shape))) if "LSTM" in spec else to_torch(hx)
    out, state = ours(packed, args)
    tout, tstate = theirs(tpacked, targs)
    assert isinstance(out, rnn_utils.PackedSequence)
    assert_close(out.data, tout.data)
    for s, ts in zip(_states(state), _states(tstate)):
        assert_close(s, ts)
    padded, _ = rnn_utils.pad_packed_sequence(out)
    tpadded, _ = torch.nn.utils.rnn.pad_packed_sequence(tout)
    (padded.sin().sum() + _states(state)[0].sum()).backward()
    (tpadded.sin().sum() + _states(tstate)[0].sum()).backward()
    for s, ts in zip(seqs + [hx], tseqs + [targs[0] if isinstance(targs, tuple) else targs]):
        assert_close(s.grad, ts.grad)
    for p, tp in zip(ours.parameters(), theirs.parameters()):
        assert_close(p.grad, tp.grad, atol=1e-4)


# ---- gradcheck (float64, finite differences) ------------------------------------------------------------------

def _x(*shape, seed=0):
    return tc.tensor(np.random.default_rng(seed).uniform(-1.0, 1.0, shape), dtype=tc.float64, requires_grad=True)


def _cell_inputs(chunks, batch=(2,), states=1):
    h = tuple(_x(*batch, 3, seed=1 + i) for i in range(states))
    return (_x(*batch, 2), *h, _x(chunks * 3, 2, seed=5), _x(chunks * 3, 3, seed=6), _x(chunks * 3, seed=7),
            _x(chunks * 3, seed=8))


def _gru_two_steps(x0, x1, h, w_ih, w_hh, b_ih, b_hh):
    h = _gru_step(F.linear(x0, w_ih, b_ih), h, w_hh, b_hh)
    return _gru_step(F.linear(x1, w_ih, b_ih), h, w_hh, b_hh)


# name -> (function, inputs factory)
CASES = {
    "rnn_tanh_cell": (lambda x, h, wi, wh, bi, bh: _rnn_step(F.linear(x, wi, bi), h, wh, bh),
                      lambda: _cell_inputs(1)),
    "rnn_relu_cell": (lambda x, h, wi, wh, bi, bh: _rnn_step(F.linear(x, wi, bi), h, wh, bh, relu=True),
                      lambda: _cell_inputs(1)),
    "lstm_cell_h": (lambda x, h, c, wi, wh, bi, bh: _lstm_step(F.linear(x, wi, bi), h, c, wh, bh)[0],
                    lambda: _cell_inputs(4, states=2)),
    "lstm_cell_c": (lambda x, h, c, wi, wh, bi, bh: _lstm_step(F.linear(x, wi, bi), h, c, wh, bh)[1],
                    lambda: _cell_inputs(4, states=2)),
    "lstm_cell_proj": (lambda x, h, c, wi, wh, bi, bh, wr: _lstm_step(F.linear(x, wi, bi), h, c, wh, bh, wr)[0],
                       lambda: _cell_inputs(4, states=2)[:1] + (_x(2, 2, seed=2),) + _cell_inputs(4, states=2)[2:3]
                       + (_x(12, 2, seed=5), _x(12, 2, seed=6), _x(12, seed=7), _x(12, seed=8), _x(2, 3, seed=9))),
    "gru_cell": (lambda x, h, wi, wh, bi, bh: _gru_step(F.linear(x, wi, bi), h, wh, bh), lambda: _cell_inputs(3)),
    "gru_two_steps": (_gru_two_steps, lambda: (_x(2, 2), _x(2, 2, seed=3)) + _cell_inputs(3)[1:]),
}


test_gradcheck = gradcheck_test(CASES, eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("name,differentiated", [("rnn_tanh_cell", 6), ("lstm_cell_h", 3), ("gru_cell", 2)])
def test_gradgradcheck(name, differentiated):
    fn, make = CASES[name]
    inputs = make()  # the later inputs (weights) are held constant to keep the finite differences few
    inputs = inputs[:differentiated] + tuple(t.detach() for t in inputs[differentiated:])
    assert gradgradcheck(fn, inputs, eps=1e-6, atol=1e-4, rtol=1e-3)


def test_lstm_layer_gradcheck_through_time():
    lstm = nn.LSTM(2, 3, num_layers=2, bidirectional=True).double()
    x, h0, c0 = _x(2, 1, 2), _x(4, 1, 3, seed=1), _x(4, 1, 3, seed=2)
    assert gradcheck(lambda a, b, c: lstm(a, (b, c))[0], (x, h0, c0))
