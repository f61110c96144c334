"""The wider layer set (1-d/transposed convolutions, more pools, norms, dropouts, padding modes, interpolate,
pixel shuffle, fold, bilinear, parameter containers) against PyTorch: values, every gradient, reprs, errors."""
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
import torch.nn.functional as TF

import tinygrad_course as tc
import tinygrad_course.nn as nn
import tinygrad_course.nn.functional as F
from gradcheck_table import gradcheck_both_orders_test
from nn_helpers import assert_close, assert_layer_matches_torch, pair, seeded

LAYERS = [
    ("Conv1d(3, 4, 3)", (2, 3, 9)),
    ("Conv1d(3, 4, 3)", (3, 9)),
    ("Conv1d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2)", (2, 4, 11)),
    ("Conv1d(3, 4, 4, padding='same', bias=False)", (2, 3, 8)),
    ("Conv1d(3, 4, 3, padding='valid')", (2, 3, 8)),
    ("Conv1d(3, 4, 3, padding=1, padding_mode='reflect')", (2, 3, 8)),
    ("Conv1d(3, 4, 3, padding=2, padding_mode='circular')", (2, 3, 8)),
    ("Conv2d(3, 4, 3, padding=1, padding_mode='replicate')", (2, 3, 6, 5)),
    ("Conv2d(3, 2, 4, padding='same', padding_mode='reflect')", (2, 3, 6, 6)),
    ("ConvTranspose2d(3, 4, 3)", (2, 3, 5, 5)),
    ("ConvTranspose2d(3, 4, 3)", (3, 5, 5)),
    ("ConvTranspose2d(4, 6, (3, 2), stride=2, padding=1, output_padding=1, groups=2)", (2, 4, 4, 5)),
    ("ConvTranspose2d(2, 3, 3, stride=(2, 1), padding=(0, 1), dilation=2, bias=False)", (2, 2, 4, 4)),
    ("ConvTranspose2d(2, 2, 3, stride=1, dilation=3, output_padding=2)", (1, 2, 3, 3)),
    ("ConvTranspose1d(3, 4, 3, stride=2, output_padding=1)", (2, 3, 6)),
    ("ConvTranspose1d(4, 2, 2, groups=2, dilation=2, padding=1)", (4, 7)),
    ("MaxPool1d(2)", (2, 3, 8)),
    ("MaxPool1d(3, stride=2, padding=1, dilation=1)", (2, 3, 9)),
    ("AvgPool1d(3, stride=2, padding=1)", (2, 3, 9)),
    ("AvgPool1d(3, padding=1, count_include_pad=False)", (3, 9)),
    ("AdaptiveAvgPool1d(4)", (2, 3, 10)),
    ("AdaptiveMaxPool1d(3)", (2, 3, 10)),
    ("AdaptiveMaxPool2d((3, 2))", (2, 3, 7, 5)),
    ("AdaptiveMaxPool2d((None, 2))", (3, 4, 5)),
    ("AdaptiveMaxPool2d(4)", (1, 2, 4, 9)),
    ("LPPool1d(2, 3)", (2, 3, 9)),
    ("LPPool2d(3, 2, stride=1)", (2, 2, 5, 5)),
    ("GroupNorm(2, 4)", (3, 4, 5)),
    ("GroupNorm(3, 6, affine=False)", (2, 6, 3, 3)),
    ("GroupNorm(1, 3, eps=1e-3)", (2, 3)),
    ("InstanceNorm1d(3)", (2, 3, 6)),
    ("InstanceNorm1d(3, affine=True)", (3, 6)),
    ("InstanceNorm2d(3, affine=True, track_running_stats=True)", (2, 3, 4, 5)),
    ("BatchNorm3d(2)", (3, 2, 2, 3, 2)),
    ("RMSNorm(5)", (3, 5)),
    ("RMSNorm((4, 5), eps=1e-3)", (2, 4, 5)),
    ("RMSNorm(5, elementwise_affine=False)", (2, 3, 5)),
    ("LocalResponseNorm(3)", (2, 5, 4)),
    ("LocalResponseNorm(2, alpha=0.1, beta=0.5, k=2.0)", (2, 4, 3, 3)),
    ("ZeroPad1d(2)", (2, 3, 4)),
    ("ZeroPad2d((1, 2, 0, 3))", (2, 3, 4, 4)),
    ("ConstantPad1d((1, 3), 2.5)", (2, 3, 4)),
    ("ConstantPad2d(1, -1.0)", (3, 4, 4)),
    ("ReflectionPad1d((3, 1))", (2, 3, 5)),
    ("ReflectionPad2d((1, 2, 3, 0))", (2, 3, 4, 5)),
    ("ReflectionPad2d(2)", (3, 4, 5)),
    ("ReplicationPad1d((3, 1))", (2, 3, 2)),
    ("ReplicationPad2d((1, 2, 3, 0))", (2, 3, 4, 5)),
    ("ReplicationPad3d(1)", (1, 2, 3, 3, 2)),
    ("CircularPad1d((2, 1))", (2, 3, 4)),
    ("CircularPad2d((1, 2, 3, 0))", (2, 3, 4, 5)),
    ("Upsample(scale_factor=2)", (2, 3, 4)),
    ("Upsample(size=(5, 7))", (2, 3, 3, 4)),
    ("Upsample(scale_factor=(1.5, 2.3), mode='bilinear')", (2, 3, 4, 5)),
    ("Upsample(size=7, mode='linear', align_corners=True)", (2, 3, 4)),
    ("Upsample(size=(3, 2), mode='bilinear')", (1, 2, 7, 5)),
    ("Upsample(scale_factor=1.7, mode='nearest-exact')", (1, 2, 5, 3)),
    ("UpsamplingNearest2d(scale_factor=3)", (1, 2, 3, 2)),
    ("UpsamplingBilinear2d(size=(6, 4))", (1, 2, 3, 3)),
    ("PixelShuffle(2)", (2, 8, 3, 4)),
    ("PixelShuffle(3)", (9, 2, 2)),
    ("PixelUnshuffle(2)", (2, 2, 4, 6)),
    ("Fold((4, 5), 2)", (2, 12, 12)),
    ("Fold(5, (2, 3), stride=2, padding=1, dilation=1)", (1, 12, 9)),
    ("Unfold(2, padding=1)", (2, 3, 4, 4)),
]


def _outputs(result):
    return result if isinstance(result, tuple) else (result,)


@pytest.mark.parametrize("spec,shape", LAYERS)
def test_layer_matches_torch(spec, shape):
    ours, theirs = seeded(spec)
    assert repr(ours) == repr(theirs)
    assert_layer_matches_torch(ours, theirs, shape)


def test_eval_mode_instance_norm_uses_running_stats():
    ours, theirs = nn.InstanceNorm1d(3, track_running_stats=True), torch.nn.InstanceNorm1d(3, track_running_stats=True)
    for _ in range(2):
        x, tx = pair(2, 3, 5, scale=3.0)
        ours(x + 1)
        theirs(tx + 1)
    ours.eval(), theirs.eval()
    x, tx = pair(2, 3, 5)
    assert_close(ours(x), theirs(tx))
    assert_close(ours.running_var, theirs.running_var)


def test_parameter_shapes_and_init_ranges():
    for spec in ["Conv1d(3, 4, 5, groups=1)", "ConvTranspose2d(6, 4, 3, groups=2)", "ConvTranspose1d(3, 8, 2)",
                 "Bilinear(3, 4, 5)", "GroupNorm(2, 4)", "RMSNorm((2, 3))"]:
        ours, theirs = eval("nn." + spec), eval("torch.nn." + spec)
        assert repr(ours) == repr(theirs)
        for (name, p), (tname, tp) in zip(ours.named_parameters(), theirs.named_parameters(), strict=True):
            assert name == tname and tuple(p.shape) == tuple(tp.shape) and p.dtype is tc.float32
    conv_t = nn.ConvTranspose2d(6, 4, 3, groups=2)  # fan_in = weight.shape[1] * 9 = 18, as PyTorch computes it
    bound = 1 / np.sqrt(18)
    assert np.abs(conv_t.bias.detach().cpu().numpy()).max() <= bound
    assert np.abs(conv_t.weight.detach().cpu().numpy()).max() <= bound
    bil = nn.Bilinear(4, 3, 2)
    assert np.abs(bil.weight.detach().cpu().numpy()).max() <= 0.5 and np.abs(bil.bias.detach().cpu().numpy()).max() <= 0.5


def test_bilinear_matches_torch():
    ours, theirs = seeded("Bilinear(3, 4, 5)")
    a, ta = pair(2, 6, 3)
    b, tb = pair(2, 6, 4)
    y, ty = ours(a, b), theirs(ta, tb)
    assert_close(y, ty)
    y.sum().backward(), ty.sum().backward()
    for t, r in ((a, ta), (b, tb), (ours.weight, theirs.weight), (ours.bias, theirs.bias)):
        assert_close(t.grad, r.grad)


def test_conv_transpose_output_size_argument():
    ours, theirs = seeded("ConvTranspose2d(2, 3, 3, stride=2, padding=1)")
    x, tx = pair(1, 2, 4, 4)
    assert_close(ours(x, output_size=(8, 8)), theirs(tx, output_size=(8, 8)))
    with pytest.raises(ValueError):
        ours(x, output_size=(10, 10))


# ---- functional parity (F is tc's or torch's nn.functional) ---------------------------------------------------

FUNCTIONS = [
    ("conv1d_same_dilated", lambda F, x, w: F.conv1d(x, w, padding="same", dilation=2), [(2, 3, 8), (4, 3, 3)]),
    ("conv_transpose2d_bias", lambda F, x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1),
     [(2, 3, 4, 4), (3, 2, 3, 3), (2,)]),
    ("conv_transpose1d", lambda F, x, w: F.conv_transpose1d(x, w, stride=3, groups=3), [(2, 3, 4), (3, 1, 2)]),
    ("max_pool1d_indices", lambda F, x: F.max_pool1d(x, 3, 2, 1, return_indices=True), [(2, 3, 9)]),
    ("max_pool2d_indices", lambda F, x: F.max_pool2d(x, 2, return_indices=True), [(2, 3, 4, 6)]),
    ("adaptive_max_pool2d_indices", lambda F, x: F.adaptive_max_pool2d(x, (3, 4), return_indices=True),
     [(2, 2, 5, 7)]),
    ("adaptive_max_pool1d_indices", lambda F, x: F.adaptive_max_pool1d(x, 4, return_indices=True), [(3, 9)]),
    ("adaptive_avg_pool1d", lambda F, x: F.adaptive_avg_pool1d(x, 3), [(2, 3, 7)]),
    ("lp_pool1d_p1", lambda F, x: F.lp_pool1d(x.abs() + 0.1, 1, 2), [(2, 3, 8)]),
    ("max_unpool2d", lambda F, x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2), [(2, 3, 4, 6)]),
    ("max_unpool1d_size", lambda F, x: F.max_unpool1d(*F.max_pool1d(x, 2, return_indices=True), 2, output_size=[9]),
     [(2, 3, 9)]),
    ("group_norm_affine", lambda F, x, w, b: F.group_norm(x, 2, w, b), [(2, 4, 3, 2), (4,), (4,)]),
    ("instance_norm", lambda F, x, w, b: F.instance_norm(x, weight=w, bias=b), [(2, 3, 5), (3,), (3,)]),
    ("rms_norm", lambda F, x, w: F.rms_norm(x, (3,), w), [(2, 4, 3), (3,)]),
    ("rms_norm_eps", lambda F, x: F.rms_norm(x, [2, 3], eps=0.1), [(2, 2, 3)]),
    ("local_response_norm", lambda F, x: F.local_response_norm(x, 4, alpha=0.5), [(2, 6, 3, 2)]),
    ("pad_reflect_3d", lambda F, x: F.pad(x, (1, 2, 2, 1, 1, 0), mode="reflect"), [(1, 2, 3, 3, 4)]),
    ("pad_replicate_crop", lambda F, x: F.pad(x, (-1, 2), mode="replicate"), [(2, 3, 4)]),
    ("pad_circular_crop", lambda F, x: F.pad(x, (-1, 2, 1, -2), mode="circular"), [(2, 3, 4, 5)]),
    ("pad_circular_unbatched", lambda F, x: F.pad(x, (3, 3), mode="circular"), [(3, 3)]),
    ("interpolate_bilinear_corners", lambda F, x: F.interpolate(x, scale_factor=2.5, mode="bilinear",
                                                                align_corners=True), [(1, 2, 3, 4)]),
    ("interpolate_linear_down", lambda F, x: F.interpolate(x, size=3, mode="linear"), [(2, 2, 8)]),
    ("interpolate_nearest_recompute", lambda F, x: F.interpolate(x, scale_factor=1.7, recompute_scale_factor=True),
     [(1, 2, 5, 3)]),
    ("interpolate_nearest_down", lambda F, x: F.interpolate(x, size=(2, 3)), [(1, 2, 5, 7)]),
    ("interpolate_area", lambda F, x: F.interpolate(x, size=(2, 3), mode="area"), [(1, 2, 5, 7)]),
    ("pixel_shuffle_batched5d", lambda F, x: F.pixel_shuffle(x, 2), [(2, 2, 4, 2, 3)]),
    ("pixel_unshuffle_roundtrip", lambda F, x: F.pixel_shuffle(F.pixel_unshuffle(x, 3), 3), [(1, 2, 3, 6)]),
    ("fold_unbatched", lambda F, x: F.fold(x, (3, 4), 2), [(8, 6)]),
    ("bilinear_1d", lambda F, a, b, w: F.bilinear(a, b, w), [(3, 2), (3, 4), (5, 2, 4)]),
]


@pytest.mark.parametrize("name,fn,shapes", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_function_matches_torch(name, fn, shapes):
    xs = [pair(*s, dtype=tc.float64) for s in shapes]
    ours = _outputs(fn(F, *[x for x, _ in xs]))
    theirs = _outputs(fn(TF, *[t for _, t in xs]))
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert_close(o, t, atol=1e-10, rtol=1e-7)
    grads = [pair(*t.shape, dtype=tc.float64, requires_grad=False) for t in theirs[:1]]
    ours[0].backward(grads[0][0])
    theirs[0].backward(grads[0][1])
    for (x, tx) in xs:
        assert_close(x.grad, tx.grad, atol=1e-10, rtol=1e-7)


@given(st.data())
def test_padding_modes_match_torch_on_random_shapes(data):
    k = data.draw(st.integers(1, 2))
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=k + 1, max_size=k + 2)))
    mode = data.draw(st.sampled_from(["reflect", "replicate", "circular"]))
    pads = []
    for size in reversed(shape[-k:]):
        top = size - 1 if mode == "reflect" else size
        pads += [data.draw(st.integers(0, top)), data.draw(st.integers(0, top))]
    x, tx = pair(*shape, dtype=tc.float64)
    y, ty = F.pad(x, pads, mode=mode), TF.pad(tx, pads, mode=mode)
    assert_close(y, ty)
    g, tg = pair(*ty.shape, dtype=tc.float64, requires_grad=False)
    y.backward(g), ty.backward(tg)
    assert_close(x.grad, tx.grad, atol=1e-10)


@given(st.integers(1, 3), st.integers(1, 3), st.integers(0, 2), st.integers(1, 2), st.integers(1, 2), st.data())
def test_conv_transpose2d_matches_torch_on_random_settings(kernel, stride, padding, dilation, groups, data):
    out_pad = data.draw(st.integers(0, max(stride, dilation) - 1))
    size = data.draw(st.integers(1, 4))
    x, tx = pair(2, 2 * groups, size, size + 1, dtype=tc.float64)
    w, tw = pair(2 * groups, 3, kernel, kernel, dtype=tc.float64)
    args = (None, stride, padding, out_pad, groups, dilation)
    try:
        ty = TF.conv_transpose2d(tx, tw, *args)
    except RuntimeError as e:  # an empty or negative output size: both refuse it
        with pytest.raises(RuntimeError, match="Output size is too small"):
            F.conv_transpose2d(x, w, *args)
        assert "Output size is too small" in str(e)
        return
    y = F.conv_transpose2d(x, w, *args)
    assert_close(y, ty, atol=1e-10)
    g, tg = pair(*ty.shape, dtype=tc.float64, requires_grad=False)
    y.backward(g), ty.backward(tg)
    assert_close(x.grad, tx.grad, atol=1e-10)
    assert_close(w.grad, tw.grad, atol=1e-10)


@pytest.mark.parametrize("scale", [0.5, 1.3, 2.0, 3.0, 0.7])
@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "bilinear"])
def test_interpolate_scale_factors(scale, mode):
    x, tx = pair(1, 2, 7, 9)
    assert_close(F.interpolate(x, scale_factor=scale, mode=mode), TF.interpolate(tx, scale_factor=scale, mode=mode))


def test_grad_fn_names():
    x = tc.randn(1, 2, 5, 5, requires_grad=True)
    assert type(F.conv_transpose2d(x, tc.randn(2, 3, 2, 2)).grad_fn).__name__ == "ConvolutionBackward0"
    assert type(F.pad(x, (1, 1, 1, 1), mode="reflect").grad_fn).__name__ == "ReflectionPad2DBackward0"
    assert type(F.pad(x[0], (1, 1), mode="replicate").grad_fn).__name__ == "ReplicationPad1DBackward0"
    assert type(F.adaptive_max_pool2d(x, 2).grad_fn).__name__ == "AdaptiveMaxPool2DBackward0"
    assert F.adaptive_max_pool2d(x, 2, return_indices=True)[1].dtype is tc.int64


# ---- errors -----------------------------------------------------------------------------------------------------

ERRORS = [
    lambda F, t: F.max_pool1d(t(1, 2, 5), 2, padding=2),
    lambda F, t: F.interpolate(t(1, 2, 5), size=3, scale_factor=2),
    lambda F, t: F.interpolate(t(1, 2, 5)),
    lambda F, t: F.interpolate(t(1, 2, 5), size=3, align_corners=True),
    lambda F, t: F.interpolate(t(1, 2, 5), size=3, mode="bilinear"),
    lambda F, t: F.interpolate(t(1, 2, 5, 5), size=3, mode="linear"),
    lambda F, t: F.pixel_shuffle(t(1, 5, 2, 2), 2),
    lambda F, t: F.pixel_unshuffle(t(1, 1, 3, 2), 2),
    lambda F, t: F.group_norm(t(2, 5, 3), 2),
    lambda F, t: F.fold(t(1, 4, 5), (4, 4), 2),
    lambda F, t: F.dropout1d(t(2, 3, 4, 5)),
    lambda F, t: F.conv_transpose2d(t(1, 2, 3, 3), t(2, 2, 3, 3), stride=2, output_padding=2),
    lambda F, t: F.conv1d(t(1, 2, 5), t(3, 3, 2)),
    lambda F, t: F.rms_norm(t(1, 2, 5), (4,)),
    lambda F, t: F.local_response_norm(t(2, 3), 2),
    lambda F, t: F.pad(t(1, 2, 3), (3, 3), mode="reflect"),
    lambda F, t: F.pad(t(3), (1, 1), mode="reflect"),
    lambda F, t: F.pad(t(1, 2, 3), (4, 4), mode="circular"),
    lambda F, t: F.pad(t(1, 2, 3), (1, 1), mode="reflect", value=2.0),
    lambda F, t: F.pad(t(1, 2, 3), (1, 1), mode="bogus"),
    lambda F, t: F.dropout2d(t(2, 3, 4, 4), p=1.5),
    lambda F, t: F.conv_transpose2d(t(1, 1, 1, 1), t(1, 1, 1, 1), padding=1),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_torch(case):
    fn = ERRORS[case]
    with pytest.raises(Exception) as theirs:
        fn(TF, lambda *s: torch.randn(*s))
    with pytest.raises(type(theirs.value)) as ours:
        fn(F, lambda *s: tc.randn(*s))
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("make", [
    lambda nn: nn.GroupNorm(2, 3), lambda nn: nn.Conv1d(3, 4, 3, padding_mode="bogus"),
    lambda nn: nn.ConvTranspose2d(3, 4, 3, padding_mode="reflect"), lambda nn: nn.Conv1d(3, 4, 3, groups=2),
])
def test_constructor_errors_match_torch(make):
    with pytest.raises(Exception) as theirs:
        make(torch.nn)
    with pytest.raises(type(theirs.value)) as ours:
        make(nn)
    if "{" in str(theirs.value):  # a set, printed in hash order: compare the set's members, not their order
        def members(msg):
            return msg.split("{")[0], set(msg.split("{")[1].split("}")[0].split(", ")), msg.split("}")[1]
        assert members(str(ours.value)) == members(str(theirs.value))
    else:
        assert str(ours.value) == str(theirs.value)


def test_module_input_dim_errors():
    for ours, theirs, shape in [(nn.InstanceNorm1d(3), torch.nn.InstanceNorm1d(3), (2, 3, 4, 5)),
                                (nn.CircularPad1d(1), torch.nn.CircularPad1d(1), (2, 3, 4, 5))]:
        with pytest.raises(ValueError) as e_theirs:
            theirs(torch.randn(*shape))
        with pytest.raises(ValueError) as e_ours:
            ours(tc.randn(*shape))
        assert str(e_ours.value) == str(e_theirs.value)


# ---- dropout variants (random: compared by structure, not value) -------------------------------------------------

def test_channel_dropout_zeroes_whole_channels_and_rescales():
    x = tc.ones(8, 16, 5, 5, requires_grad=True)
    y = F.dropout2d(x, 0.25)
    per_channel = y.detach().cpu().numpy().reshape(8, 16, -1)
    np.testing.assert_allclose(np.unique(per_channel), [0.0, 1 / 0.75], rtol=1e-6)
    assert (per_channel.min(-1) == per_channel.max(-1)).all()  # one decision per channel
    assert 0 < (per_channel[..., 0] == 0).sum() < 8 * 16
    y.sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), y.detach().cpu().numpy())
    y1 = nn.Dropout1d(0.5)(tc.ones(4, 6, 3)).cpu().numpy()
    assert (y1.min(-1) == y1.max(-1)).all()
    assert nn.Dropout2d().eval()(x) is x
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        F.dropout2d(tc.ones(2, 3, 4))
    assert "Received a 3D input to dropout2d" in str(w[0].message)


def test_alpha_dropout_keeps_mean_and_variance():
    x = tc.randn(200, 100)
    y = F.alpha_dropout(x, 0.3, training=True).cpu().numpy()
    assert abs(y.mean()) < 0.05 and abs(y.std() - 1) < 0.05
    a = 1 / np.sqrt((1.7580993408473766 ** 2 * 0.3 + 1) * 0.7)
    dropped = np.isclose(y, -1.7580993408473766 * a * 0.7)  # dropped units all take SELU's scaled saturation value
    assert 0.25 < dropped.mean() < 0.35
    assert F.alpha_dropout(x, 0.3) is x  # training=False by default, as in PyTorch
    assert (F.alpha_dropout(x, 1.0, training=True).cpu().numpy() == 0).all()
    yf = F.feature_alpha_dropout(tc.zeros(4, 8, 3, 3), 0.5, training=True).cpu().numpy()
    assert (yf.reshape(4, 8, -1).min(-1) == yf.reshape(4, 8, -1).max(-1)).all()
    assert repr(nn.AlphaDropout(0.2)) == "AlphaDropout(p=0.2, inplace=False)"
    assert repr(nn.FeatureAlphaDropout()) == "FeatureAlphaDropout(p=0.5, inplace=False)"


# ---- parameter containers -----------------------------------------------------------------------------------------

def test_parameter_list_registers_like_torch():
    """Host tensors, so the reprs carry no device suffix."""
    ours = nn.ParameterList([nn.Parameter(tc.zeros(2, 3, device="cpu")), tc.ones(3, device="cpu")])
    theirs = torch.nn.ParameterList([torch.nn.Parameter(torch.zeros(2, 3)), torch.ones(3)])
    assert repr(ours) == repr(theirs).replace("torch.", "tc.")
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["0", "1"]
    assert isinstance(ours[1], nn.Parameter) and len(ours) == 2 and ours[-1] is ours[1]
    ours.append(nn.Parameter(tc.zeros(1, device="cpu")))
    ours += [tc.zeros(4, device="cpu")]
    assert [tuple(p.shape) for p in ours.parameters()] == [(2, 3), (3,), (1,), (4,)]
    assert len(ours[1:3]) == 2
    ours[0] = tc.ones(5, device="cpu")
    assert tuple(ours.state_dict()["0"].shape) == (5,)
    assert repr(nn.ParameterList()) == "ParameterList()"
    model = nn.Module()
    model.ps = ours
    assert [n for n, _ in model.named_parameters()] == ["ps.0", "ps.1", "ps.2", "ps.3"]


def test_parameter_dict_registers_like_torch():
    ours = nn.ParameterDict({"b": nn.Parameter(tc.zeros(2, device="cpu")), "a": tc.ones(3, 1, device="cpu")})
    theirs = torch.nn.ParameterDict({"b": torch.nn.Parameter(torch.zeros(2)), "a": torch.ones(3, 1)})
    assert repr(ours) == repr(theirs).replace("torch.", "tc.")
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["a", "b"]  # a plain dict's keys get sorted
    assert list(ours) == ["a", "b"] and "a" in ours and isinstance(ours["a"], nn.Parameter)
    ours["c"] = nn.Parameter(tc.zeros(1, device="cpu"))
    assert len(ours) == 3 and [k for k, _ in ours.named_parameters()] == ["a", "b", "c"]
    assert tuple(ours.pop("b").shape) == (2,)
    assert list(ours.keys()) == ["a", "c"] and len(list(ours.parameters())) == 2
    with pytest.raises(TypeError):
        ours[1] = nn.Parameter(tc.zeros(1, device="cpu"))
    single = nn.ParameterDict({"a": nn.Parameter(tc.zeros(2, device="cpu"))})
    assert repr(single) == "ParameterDict(  (a): Parameter containing: [tc.FloatTensor of size 2])"


# ---- gradcheck -----------------------------------------------------------------------------------------------------

def _x(*shape, positive=False, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 2.0, shape) if positive else rng.uniform(-2.0, 2.0, shape)
    return tc.tensor(a, dtype=tc.float64, requires_grad=True)


# name -> (function, inputs factory); float64 inputs
CASES = {
    "conv1d": (lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1, dilation=2),
               lambda: (_x(1, 2, 6), _x(2, 2, 2, seed=1), _x(2, seed=2))),
    "conv1d_groups_same": (lambda x, w: F.conv1d(x, w, padding="same", groups=2),
                           lambda: (_x(1, 4, 4), _x(2, 2, 2, seed=1))),
    "conv_transpose2d": (lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
                         lambda: (_x(1, 2, 2, 2), _x(2, 2, 3, 2, seed=1), _x(2, seed=2))),
    "conv_transpose2d_groups_dilation": (lambda x, w: F.conv_transpose2d(x, w, groups=2, dilation=2),
                                         lambda: (_x(1, 2, 2, 2), _x(2, 1, 2, 2, seed=1))),
    "conv_transpose1d": (lambda x, w: F.conv_transpose1d(x, w, stride=3, padding=1),
                         lambda: (_x(1, 2, 3), _x(2, 1, 3, seed=1))),
    "max_pool1d": (lambda x: F.max_pool1d(x, 3, 2, 1), lambda: (_x(2, 2, 7),)),
    "avg_pool1d": (lambda x: F.avg_pool1d(x, 3, 2, 1, count_include_pad=False), lambda: (_x(2, 2, 7),)),
    "adaptive_avg_pool1d": (lambda x: F.adaptive_avg_pool1d(x, 3), lambda: (_x(2, 2, 7),)),
    "adaptive_max_pool1d": (lambda x: F.adaptive_max_pool1d(x, 3), lambda: (_x(2, 2, 7),)),
    "adaptive_max_pool2d": (lambda x: F.adaptive_max_pool2d(x, (2, 3)), lambda: (_x(1, 2, 5, 7),)),
    "lp_pool2d": (lambda x: F.lp_pool2d(x, 2, 2), lambda: (_x(1, 2, 4, 4, positive=True),)),
    "max_unpool2d": (lambda x: F.max_unpool2d(x, tc.tensor([[[[0, 3], [9, 14]]]]), 2), lambda: (_x(1, 1, 2, 2),)),
    "group_norm": (lambda x, w, b: F.group_norm(x, 2, w, b), lambda: (_x(1, 4, 2), _x(4, seed=1), _x(4, seed=2))),
    "instance_norm": (lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
                      lambda: (_x(1, 2, 2, 2), _x(2, seed=1), _x(2, seed=2))),
    "rms_norm": (lambda x, w: F.rms_norm(x, (3,), w), lambda: (_x(2, 3), _x(3, seed=1))),
    "local_response_norm": (lambda x: F.local_response_norm(x, 3, alpha=0.5), lambda: (_x(1, 4, 2),)),
    "pad_reflect": (lambda x: F.pad(x, (2, 1, 1, 2), mode="reflect"), lambda: (_x(1, 2, 3, 4),)),
    "pad_replicate": (lambda x: F.pad(x, (2, 3), mode="replicate"), lambda: (_x(2, 3),)),
    "pad_circular": (lambda x: F.pad(x, (1, 2, 2, 0), mode="circular"), lambda: (_x(1, 1, 3, 3),)),
    "interpolate_nearest": (lambda x: F.interpolate(x, scale_factor=1.5), lambda: (_x(1, 2, 3, 4),)),
    "interpolate_bilinear": (lambda x: F.interpolate(x, size=(4, 5), mode="bilinear"), lambda: (_x(1, 2, 3, 3),)),
    "interpolate_linear_corners": (lambda x: F.interpolate(x, size=5, mode="linear", align_corners=True),
                                   lambda: (_x(1, 2, 3),)),
    "pixel_shuffle": (lambda x: F.pixel_shuffle(x, 2), lambda: (_x(1, 8, 2, 3),)),
    "pixel_unshuffle": (lambda x: F.pixel_unshuffle(x, 2), lambda: (_x(1, 2, 4, 2),)),
    "fold": (lambda x: F.fold(x, (3, 4), 2, stride=1), lambda: (_x(1, 4, 6),)),
    "bilinear": (lambda a, b, w, c: F.bilinear(a, b, w, c),
                 lambda: (_x(2, 2), _x(2, 3, seed=1), _x(2, 2, 3, seed=2), _x(2, seed=3))),
    "dropout2d_fixed_mask": (lambda x: F.dropout2d(x, 0.0), lambda: (_x(2, 3, 2, 2),)),
}


test_gradcheck = gradcheck_both_orders_test(CASES)
