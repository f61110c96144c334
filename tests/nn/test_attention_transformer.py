"""scaled_dot_product_attention, MultiheadAttention and the Transformer layers against PyTorch (copied weights:
outputs, attention weights, input and parameter gradients, reprs, parameter layout, errors), and a gradcheck
table."""
import math
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import tinygrad_course as tc
import tinygrad_course.nn as nn
import tinygrad_course.nn.functional as F
from nn_helpers import assert_close, copy_weights, error_of, to_torch
from tinygrad_course.autograd import gradgradcheck
from gradcheck_table import gradcheck_test


def _rand(*shape, dtype=tc.float32):
    return tc.randn(*shape, dtype=dtype).requires_grad_()


def _torch_kwargs(kwargs):
    return {k: to_torch(v) if isinstance(v, tc.Tensor) else v for k, v in kwargs.items()}


# ---- scaled_dot_product_attention ---------------------------------------------------------------------------

KEEP = tc.tensor([[True, False, True, True, False, True]] * 3 + [[False] * 6])  # the last query sees nothing

SDPA_CASES = [
    ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7), {}),
    ((4, 5), (6, 5), (6, 3), {}),  # unbatched
    ((2, 4, 5), (2, 6, 5), (2, 6, 5), {"is_causal": True}),
    ((2, 6, 5), (2, 4, 5), (2, 4, 5), {"is_causal": True, "scale": 0.7}),
    ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5), {"attn_mask": KEEP}),
    ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5), {"attn_mask": "float"}),
    ((2, 4, 4, 5), (2, 2, 6, 5), (2, 2, 6, 3), {"enable_gqa": True}),
    ((2, 4, 5), (1, 6, 5), (1, 6, 5), {}),  # batch dims broadcast
]


@pytest.mark.parametrize("qs,ks,vs,kwargs", SDPA_CASES)
def test_sdpa_matches_torch(qs, ks, vs, kwargs):
    q, k, v = _rand(*qs), _rand(*ks), _rand(*vs)
    if kwargs.get("attn_mask") == "float":
        kwargs = dict(kwargs, attn_mask=tc.randn(qs[-2], ks[-2]))
    tq, tk, tv = map(to_torch, (q, k, v))
    out = F.scaled_dot_product_attention(q, k, v, **kwargs)
    tout = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, **_torch_kwargs(kwargs))
    assert_close(out, tout)
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    for a, b in ((q, tq), (k, tk), (v, tv)):
        assert_close(a.grad, b.grad)


@given(batch=st.lists(st.integers(1, 3), max_size=2), length=st.integers(1, 4), source=st.integers(1, 4),
       dims=st.tuples(st.integers(1, 4), st.integers(1, 4)), causal=st.booleans())
def test_sdpa_shapes_match_torch(batch, length, source, dims, causal):
    q, k, v = tc.randn(*batch, length, dims[0]), tc.randn(*batch, source, dims[0]), tc.randn(*batch, source, dims[1])
    out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    assert_close(out, torch.nn.functional.scaled_dot_product_attention(to_torch(q), to_torch(k), to_torch(v),
                                                                       is_causal=causal))


def test_sdpa_fully_masked_rows_give_zeros_and_finite_gradients():
    q, k, v = _rand(1, 4, 5, dtype=tc.float64), _rand(1, 6, 5, dtype=tc.float64), _rand(1, 6, 5, dtype=tc.float64)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=KEEP)
    assert tc.equal(out[0, 3], tc.zeros(5, dtype=tc.float64))
    out.sum().backward()
    assert bool(tc.isfinite(q.grad).all()) and bool(tc.isfinite(k.grad).all())
    assert tc.equal(q.grad[0, 3], tc.zeros(5, dtype=tc.float64))


def test_sdpa_dropout():
    q, k, v = tc.randn(2, 4, 5), tc.randn(2, 6, 5), tc.randn(2, 6, 5)
    assert tc.equal(F.scaled_dot_product_attention(q, k, v, dropout_p=1.0), tc.zeros(2, 4, 5))
    a, b = (F.scaled_dot_product_attention(q, k, v, dropout_p=0.5) for _ in range(2))
    assert not tc.allclose(a, b)


SDPA_ERRORS = [
    lambda T: T.nn.functional.scaled_dot_product_attention(T.randn(4), T.randn(4), T.randn(4)),
    lambda T: T.nn.functional.scaled_dot_product_attention(T.randn(3, 4), T.randn(3, 4, dtype=T.float64),
                                                           T.randn(3, 4)),
    lambda T: T.nn.functional.scaled_dot_product_attention(T.randn(3, 4), T.randn(3, 4), T.randn(3, 4),
                                                           attn_mask=T.zeros(3, 3, dtype=T.int64)),
    lambda T: T.nn.functional.scaled_dot_product_attention(T.randn(2, 3, 3, 4), T.randn(2, 2, 5, 4),
                                                           T.randn(2, 2, 5, 4), enable_gqa=True),
    lambda T: T.nn.functional.scaled_dot_product_attention(T.randn(3, 4, requires_grad=True), T.randn(3, 4),
                                                           T.randn(3, 4), attn_mask=T.ones(3, 3, dtype=T.bool),
                                                           is_causal=True),
]


@pytest.mark.parametrize("call", SDPA_ERRORS)
def test_sdpa_errors_match_torch(call):
    theirs = error_of(lambda: call(torch))
    assert theirs is not None and error_of(lambda: call(tc)) == theirs


# ---- MultiheadAttention -------------------------------------------------------------------------------------

MHA_CONFIGS = [
    ("MultiheadAttention(8, 2)", {}, {}),
    ("MultiheadAttention(8, 4, bias=False)", {"self": True}, {"average_attn_weights": False}),
    ("MultiheadAttention(8, 2, kdim=3, vdim=5)", {}, {"key_padding_mask": "bool"}),
    ("MultiheadAttention(8, 2, add_bias_kv=True, add_zero_attn=True)", {}, {"attn_mask": "float"}),
    ("MultiheadAttention(8, 2, batch_first=True)", {}, {"attn_mask": "bool", "key_padding_mask": "bool"}),
    ("MultiheadAttention(8, 2, batch_first=True)", {"self": True}, {"need_weights": False, "attn_mask": "causal",
                                                                     "is_causal": True}),
    ("MultiheadAttention(8, 2, kdim=3, vdim=5, add_bias_kv=True)", {}, {"need_weights": False,
                                                                         "key_padding_mask": "bool"}),
    ("MultiheadAttention(8, 2)", {"unbatched": True}, {"key_padding_mask": "bool", "attn_mask": "bool"}),
    ("MultiheadAttention(8, 2, add_zero_attn=True)", {"unbatched": True}, {"need_weights": False,
                                                                           "average_attn_weights": False}),
]


def _mha_inputs(module, self_attention, unbatched, length=4, source=6):
    if self_attention:
        source = length
    lead = lambda n: (n,) if unbatched else ((2, n) if module.batch_first else (n, 2))  # noqa: E731
    q = _rand(*lead(length), module.embed_dim)
    if self_attention:
        return (q, q, q), length, source
    return (q, _rand(*lead(source), module.kdim), _rand(*lead(source), module.vdim)), length, source


def _masks(options, length, source, unbatched):
    out = dict(options)
    for name, kind in options.items():
        if name == "key_padding_mask":
            pad = tc.tensor([[False] * (source - 2) + [True] * 2, [False] * source])
            out[name] = pad[0] if unbatched else pad
        elif name == "attn_mask" and kind == "bool":
            out[name] = tc.rand(length, source) > 0.7
            out[name][:, 0] = False  # every query keeps at least one key
        elif name == "attn_mask" and kind == "float":
            out[name] = tc.randn(length, source)
        elif name == "attn_mask" and kind == "causal":
            out[name] = nn.Transformer.generate_square_subsequent_mask(length)
    return out


@pytest.mark.parametrize("spec,layout,options", MHA_CONFIGS)
def test_multihead_attention_matches_torch(spec, layout, options):
    ours, theirs = eval("nn." + spec), eval("torch.nn." + spec)
    copy_weights(ours, theirs)
    (q, k, v), length, source = _mha_inputs(ours, layout.get("self", False), layout.get("unbatched", False))
    kwargs = _masks(options, length, source, layout.get("unbatched", False))
    targs = [to_torch(t) for t in (q, k, v)]
    if q is k:
        targs = [targs[0]] * 3
    out, weights = ours(q, k, v, **kwargs)
    tout, tweights = theirs(*targs, **_torch_kwargs(kwargs))
    assert_close(out, tout)
    assert (weights is None) == (tweights is None)
    if weights is not None:
        assert_close(weights, tweights)
    loss = (out * out).sum() + (0 if weights is None else weights.sin().sum())
    tloss = (tout * tout).sum() + (0 if tweights is None else tweights.sin().sum())
    loss.backward()
    tloss.backward()
    assert_close(q.grad, targs[0].grad)
    for (name, p), (tname, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert name == tname
        assert_close(p.grad, tp.grad)


def test_multihead_attention_eval_matches_torch_fast_path():
    ours, theirs = nn.MultiheadAttention(8, 2, batch_first=True).eval(), torch.nn.MultiheadAttention(
        8, 2, batch_first=True).eval()
    copy_weights(ours, theirs)
    x = tc.randn(2, 5, 8)
    pad = tc.tensor([[False] * 3 + [True] * 2, [False] * 5])
    with tc.no_grad(), torch.no_grad():  # PyTorch takes its fused inference kernel here
        out, weights = ours(x, x, x, key_padding_mask=pad)
        tx = to_torch(x)
        tout, tweights = theirs(tx, tx, tx, key_padding_mask=to_torch(pad))
    assert_close(out, tout)
    assert_close(weights, tweights)


@pytest.mark.parametrize("spec", [c[0] for c in MHA_CONFIGS])
def test_multihead_attention_repr_and_layout_match_torch(spec):
    ours, theirs = eval("nn." + spec), eval("torch.nn." + spec)
    assert repr(ours) == repr(theirs)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
           [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]


def test_multihead_attention_initialisation():
    mha = nn.MultiheadAttention(16, 4, add_bias_kv=True)
    assert tc.equal(mha.in_proj_bias, tc.zeros(48)) and tc.equal(mha.out_proj.bias, tc.zeros(16))
    bound = math.sqrt(6 / (16 + 48))  # Xavier-uniform over the packed (3E, E) weight
    w = mha.in_proj_weight.detach().cpu().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert mha.bias_k.shape == (1, 1, 16) and float(mha.bias_k.abs().sum()) > 0


MHA_ERRORS = [
    lambda T: T.nn.MultiheadAttention(8, 3),
    lambda T: T.nn.MultiheadAttention(0, 2),
    lambda T: T.nn.MultiheadAttention(8, 2)(T.randn(4, 2, 8), T.randn(6, 2, 8), T.randn(6, 8)),
    lambda T: T.nn.MultiheadAttention(8, 2)(T.randn(4, 2, 8), T.randn(6, 2, 8), T.randn(6, 2, 8),
                                            attn_mask=T.zeros(4, 5)),
    lambda T: T.nn.MultiheadAttention(8, 2)(T.randn(4, 2, 8), T.randn(6, 2, 8), T.randn(6, 2, 8),
                                            key_padding_mask=T.zeros(2, 5, dtype=T.bool)),
    lambda T: T.nn.MultiheadAttention(8, 2)(T.randn(4, 2, 8), T.randn(6, 2, 8), T.randn(6, 2, 8),
                                            attn_mask=T.zeros(4, 6, dtype=T.int64)),
    lambda T: T.nn.MultiheadAttention(8, 2)(T.randn(4, 2, 8), T.randn(6, 2, 8), T.randn(6, 2, 8), is_causal=True),
    lambda T: T.nn.MultiheadAttention(8, 2)(T.randn(4, 2, 2, 8), T.randn(6, 2, 8), T.randn(6, 2, 8)),
]


@pytest.mark.parametrize("call", MHA_ERRORS)
def test_multihead_attention_errors_match_torch(call):
    theirs = error_of(lambda: call(torch))
    assert theirs is not None
    assert error_of(lambda: call(tc)) == (theirs[0], theirs[1].replace("torch.Size", "tc.Size"))


# ---- Transformer layers -------------------------------------------------------------------------------------

TRANSFORMER_CONFIGS = [
    ("TransformerEncoderLayer(8, 2, 16, dropout=0.0)", "enc", {"src_mask": "causal"}),
    ("TransformerEncoderLayer(8, 2, 16, activation='gelu', norm_first=True, batch_first=True, bias=False)", "enc",
     {"src_key_padding_mask": "pad"}),
    ("TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2, norm=nn.LayerNorm(8))", "enc",
     {"mask": "causal", "src_key_padding_mask": "pad"}),
    ("TransformerDecoderLayer(8, 2, 16, norm_first=True)", "dec", {"tgt_mask": "causal", "tgt_is_causal": True}),
    # (PyTorch's decoder-layer copies drop a module activation such as nn.GELU() for F.relu: a string here)
    ("TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16, batch_first=True, activation='gelu'), 2)", "dec",
     {"memory_key_padding_mask": "pad"}),
    ("TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, activation=nn.GELU()), 2, enable_nested_tensor=False)",
     "enc", {}),
    ("Transformer(8, 2, 2, 1, 16)", "full", {"tgt_mask": "causal"}),
    ("Transformer(8, 2, 1, 2, 16, batch_first=True, norm_first=True)", "full",
     {"src_key_padding_mask": "pad", "memory_key_padding_mask": "pad"}),
]


def _transformer_call(module, kind, options):
    batch_first = "batch_first=True" in repr(module) or getattr(module, "batch_first", False) or (
        kind != "full" and _first_attention(module).batch_first)
    shape = (lambda n: (2, n, 8)) if batch_first else (lambda n: (n, 2, 8))
    src, tgt = _rand(*shape(5)), _rand(*shape(4))
    args = {"enc": (src,), "dec": (tgt, src), "full": (src, tgt)}[kind]
    kwargs = {}
    for name, kind_ in options.items():
        if kind_ == "causal":
            n = args[0].shape[1 if batch_first else 0] if kind != "full" else 4
            kwargs[name] = nn.Transformer.generate_square_subsequent_mask(n)
        elif kind_ == "pad":
            kwargs[name] = tc.tensor([[False] * 3 + [True] * 2, [False] * 5])
        else:
            kwargs[name] = kind_
    return args, kwargs


def _first_attention(module):
    return next(m for m in module.modules() if isinstance(m, nn.MultiheadAttention))


def _torch_twin(spec):
    with warnings.catch_warnings():  # PyTorch warns that its nested-tensor fast path is unavailable
        warnings.simplefilter("ignore")
        return eval("torch.nn." + spec.replace("nn.", "torch.nn."))


@pytest.mark.filterwarnings("ignore:Support for mismatched")  # float causal mask with a bool padding mask
@pytest.mark.parametrize("spec,kind,options", TRANSFORMER_CONFIGS)
def test_transformer_matches_torch_in_eval_mode(spec, kind, options):
    ours, theirs = eval("nn." + spec), _torch_twin(spec)
    copy_weights(ours, theirs)
    ours.eval()
    theirs.eval()
    args, kwargs = _transformer_call(ours, kind, options)
    targs = [to_torch(a) for a in args]
    out = ours(*args, **kwargs)
    tout = theirs(*targs, **_torch_kwargs(kwargs))
    assert_close(out, tout)
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    for a, ta in zip(args, targs):
        assert_close(a.grad, ta.grad, atol=1e-4)
    for (name, p), (tname, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert name == tname
        assert_close(p.grad, tp.grad, atol=1e-4)


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors is in prototype stage")
def test_encoder_matches_torch_inference_fast_path():
    spec = "TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2)"
    ours, theirs = eval("nn." + spec).eval(), _torch_twin(spec).eval()
    copy_weights(ours, theirs)
    x = tc.randn(2, 5, 8)
    pad = tc.tensor([[False] * 3 + [True] * 2, [False] * 5])
    with tc.no_grad(), torch.no_grad():  # PyTorch converts to nested tensors here: padded rows come back as 0
        out = ours(x, src_key_padding_mask=pad)
        tout = theirs(to_torch(x), src_key_padding_mask=to_torch(pad))
    keep = ~pad.cpu().numpy()
    np.testing.assert_allclose(out.cpu().numpy()[keep], tout.numpy()[keep], atol=1e-5, rtol=1e-4)


def test_transformer_dropout_is_active_in_training():
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.5)
    x = tc.randn(5, 2, 8)
    assert not tc.allclose(layer(x), layer(x))
    layer.eval()
    assert tc.equal(layer(x), layer(x))


@pytest.mark.parametrize("spec", [c[0] for c in TRANSFORMER_CONFIGS] + ["TransformerEncoderLayer(8, 2, activation=F.gelu)"])
def test_transformer_repr_and_layout_match_torch(spec):
    ours = eval("nn." + spec)
    theirs = _torch_twin(spec.replace("F.gelu", "torch.nn.functional.gelu"))
    assert repr(ours) == repr(theirs)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
           [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]


def test_encoder_layers_are_independent_copies():
    layer = nn.TransformerEncoderLayer(8, 2, 16)
    encoder = nn.TransformerEncoder(layer, 2)
    assert encoder.layers[0].linear1.weight is not encoder.layers[1].linear1.weight
    assert tc.equal(encoder.layers[0].linear1.weight, encoder.layers[1].linear1.weight)
    assert encoder.layers[0].linear1.weight is not layer.linear1.weight


def test_generate_square_subsequent_mask_matches_torch():
    ours = nn.Transformer.generate_square_subsequent_mask(4, dtype=tc.float64)
    theirs = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    assert_close(ours, theirs)


TRANSFORMER_ERRORS = [
    lambda T: T.nn.TransformerEncoderLayer(8, 2, activation="tanh"),
    lambda T: T.nn.Transformer(8, 2, 1, 1, 16)(T.randn(5, 2, 8), T.randn(4, 3, 8)),
    lambda T: T.nn.Transformer(8, 2, 1, 1, 16)(T.randn(5, 2, 8), T.randn(4, 2, 6)),
]


@pytest.mark.parametrize("call", TRANSFORMER_ERRORS)
def test_transformer_errors_match_torch(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = error_of(lambda: call(torch))
    assert theirs is not None and error_of(lambda: call(tc)) == theirs


# ---- gradcheck (float64, finite differences) ------------------------------------------------------------------

def _x(*shape, seed=0):
    return tc.tensor(np.random.default_rng(seed).uniform(-1.0, 1.0, shape), dtype=tc.float64, requires_grad=True)


SMALL_KEEP = tc.tensor([[True, False, True], [True, True, False]])
FLOAT_MASK = tc.tensor([[0.0, -1.0, 0.5], [-0.5, 0.0, float("-inf")]], dtype=tc.float64)
PADDING = tc.tensor([[0.0, 0.0, float("-inf")], [0.0, 0.0, 0.0]], dtype=tc.float64)


def _mha(q, k, v, w_in, b_in, w_out, b_out):
    return F.multi_head_attention_forward(q, k, v, 4, 2, w_in, b_in, None, None, False, 0.0, w_out, b_out,
                                          key_padding_mask=PADDING, attn_mask=FLOAT_MASK[:, :3])[0]


def _mha_inputs_factory():
    return (_x(2, 2, 4), _x(3, 2, 4, seed=1), _x(3, 2, 4, seed=2), _x(12, 4, seed=3), _x(12, seed=4),
            _x(4, 4, seed=5), _x(4, seed=6))


# name -> (function, inputs factory)
CASES = {
    "sdpa": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
             lambda: (_x(2, 2, 3), _x(2, 3, 3, seed=1), _x(2, 3, 2, seed=2))),
    "sdpa_bool_mask": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=SMALL_KEEP),
                       lambda: (_x(2, 2, 3), _x(2, 3, 3, seed=1), _x(2, 3, 2, seed=2))),
    "sdpa_float_mask_scale": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=FLOAT_MASK,
                                                                             scale=0.3),
                              lambda: (_x(2, 3), _x(3, 3, seed=1), _x(3, 2, seed=2))),
    "sdpa_causal": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                    lambda: (_x(1, 3, 2), _x(1, 3, 2, seed=1), _x(1, 3, 2, seed=2))),
    "mha_forward": (_mha, _mha_inputs_factory),
    "mha_weights": (lambda q, k, v, w_in, b_in, w_out, b_out: F.multi_head_attention_forward(
        q, k, v, 4, 2, w_in, b_in, None, None, False, 0.0, w_out, b_out, attn_mask=SMALL_KEEP[:, :3])[1],
        _mha_inputs_factory),
}


test_gradcheck = gradcheck_test(CASES, eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("name", ["sdpa", "sdpa_bool_mask"])
def test_gradgradcheck(name):
    fn, make = CASES[name]
    q, k, v = (t[:1].detach().requires_grad_() for t in make())  # one batch item keeps the differences few
    assert gradgradcheck(fn, (q, k, v), eps=1e-6, atol=1e-4, rtol=1e-3)
