"""The CPU generator follows PyTorch's: after the same seed the same calls give the same values, bit for bit
(float32 and float64, sizes around the 16-element switch of the normal kernel, mixed sequences, states)."""
import numpy as np
import pytest
import torch

import tinygrad_course as tc

SIZES = (1, 2, 15, 16, 17, 31, 32, 33, 100)


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _same(ours, theirs):
    a, b = _np(ours), _np(theirs)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


def _calls(n, dt):
    return [
        lambda m: m.rand(n, dtype=getattr(m, dt)),
        lambda m: m.randn(n, dtype=getattr(m, dt)),
        lambda m: m.empty(n, dtype=getattr(m, dt)).normal_(0.3, 0.02),
        lambda m: m.empty(n, dtype=getattr(m, dt)).uniform_(-0.17, 0.4),
        lambda m: m.empty(n, dtype=getattr(m, dt)).exponential_(1.7),
        lambda m: m.empty(n, dtype=getattr(m, dt)).bernoulli_(0.3),
        lambda m: m.bernoulli(m.full((n,), 0.4, dtype=getattr(m, dt))),
        lambda m: m.empty(n, dtype=getattr(m, dt)).random_(),
        lambda m: m.empty(n, dtype=getattr(m, dt)).random_(3, 17),
        lambda m: m.randn_like(m.ones(n, dtype=getattr(m, dt))),
        lambda m: m.normal(2.0, 3.0, (n,), dtype=getattr(m, dt)),
    ]


def _int_calls(n):
    return [
        lambda m: m.randint(3, 10 ** 6, (n,)),
        lambda m: m.randint(-2 ** 40, 2 ** 40, (n,)),
        lambda m: m.randperm(n),
        lambda m: m.empty(n, dtype=m.int64).random_(),
        lambda m: m.empty(n, dtype=m.int32).random_(5),
        lambda m: m.multinomial(m.arange(1.0, n + 2), 1),
        lambda m: m.multinomial(m.arange(1.0, n + 2), 7, replacement=True),
        lambda m: m.multinomial(m.arange(1.0, n + 8), min(n, 5)),
        lambda m: m.multinomial(m.rand(3, n + 1, dtype=m.float64), 4, replacement=True),
    ]


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("n", SIZES)
def test_each_float_call_matches_pytorch(n, dt):
    for call in _calls(n, dt):
        torch.manual_seed(7)
        tc.manual_seed(7)
        _same(call(tc), call(torch))


@pytest.mark.parametrize("n", SIZES)
def test_each_integer_call_matches_pytorch(n):
    for call in _int_calls(n):
        torch.manual_seed(11)
        tc.manual_seed(11)
        _same(call(tc), call(torch))


def test_a_long_mixed_sequence_stays_in_step_and_so_does_the_state():
    torch.manual_seed(5)
    tc.manual_seed(5)
    for n in SIZES:
        for call in _calls(n, "float32") + _calls(n, "float64") + _int_calls(n):
            _same(call(tc), call(torch))
    _same(tc.get_rng_state(), torch.get_rng_state())


def test_a_million_normals_match_in_both_precisions():
    for dt in ("float32", "float64"):
        torch.manual_seed(1)
        tc.manual_seed(1)
        _same(tc.randn(1000003, dtype=getattr(tc, dt)), torch.randn(1000003, dtype=getattr(torch, dt)))
        _same(tc.empty(100003, dtype=getattr(tc, dt)).normal_(0.1, 0.02),
              torch.empty(100003, dtype=getattr(torch, dt)).normal_(0.1, 0.02))


def test_states_round_trip_and_cross_over_from_pytorch():
    tc.manual_seed(3)
    tc.randn(3)  # leaves a cached Box-Muller value in the state
    saved = tc.get_rng_state()
    assert saved.dtype == tc.uint8 and saved.shape == (5056,)
    first = tc.randn(5)
    tc.set_rng_state(saved)
    _same(tc.randn(5), first)
    torch.manual_seed(9)
    torch.rand(700)
    torch.randn(1)
    tc.set_rng_state(torch.get_rng_state())
    _same(tc.randn(7), torch.randn(7))
    _same(tc.get_rng_state(), torch.get_rng_state())
    g = tc.Generator().manual_seed(4)
    state = g.get_state()
    a = tc.rand(4, generator=g)
    g.set_state(state)
    _same(tc.rand(4, generator=g), a)


def test_seeds_are_kept_as_pytorch_keeps_them():
    for seed in (0, 2147483647, -5, 2 ** 64 - 3, 67280421310721):
        assert tc.Generator().manual_seed(seed).initial_seed() == torch.Generator().manual_seed(seed).initial_seed()
        _same(tc.rand(3, generator=tc.Generator().manual_seed(seed)),
              torch.rand(3, generator=torch.Generator().manual_seed(seed)))
    assert tc.manual_seed(12).initial_seed() == 12 and tc.initial_seed() == 12
    s = tc.seed()
    assert tc.initial_seed() == s
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        tc.set_rng_state(tc.zeros(5056, dtype=tc.uint8))


def _module_calls(m):
    return [
        lambda: list(m.nn.Linear(20, 7).parameters()),
        lambda: list(m.nn.Conv2d(3, 4, 3).parameters()),
        lambda: list(m.nn.Embedding(10, 5).parameters()),
        lambda: list(m.nn.LSTM(4, 6).parameters()),
        lambda: list(m.nn.GRU(4, 6, num_layers=2).parameters()),
        lambda: list(m.nn.MultiheadAttention(8, 2).parameters()),
        lambda: [m.nn.init.xavier_uniform_(m.empty(5, 7)), m.nn.init.xavier_normal_(m.empty(5, 7))],
        lambda: [m.nn.init.kaiming_normal_(m.empty(5, 7)), m.nn.init.trunc_normal_(m.empty(5, 7), std=0.02)],
        lambda: [m.nn.init.sparse_(m.empty(6, 4), 0.5)],
        lambda: [m.nn.functional.dropout(m.ones(40, 3), 0.3), m.nn.Dropout(0.1)(m.arange(20.0))],
        lambda: [m.nn.functional.dropout2d(m.ones(4, 6, 2, 2), 0.3),
                 m.nn.functional.alpha_dropout(m.ones(30), 0.2, training=True)],
        lambda: [m.nn.functional.rrelu(m.tensor([-1.0, 0.5, -0.25, -3.0, 2.0]), training=True)],
        lambda: [m.cat([b for _ in range(2) for b in m.utils.data.DataLoader(m.arange(50), batch_size=8,
                                                                             shuffle=True)]), m.rand(2)],
        lambda: [m.tensor(list(s.indices)) for s in m.utils.data.random_split(range(30), [0.5, 0.3, 0.2])],
        lambda: [m.tensor(list(s.indices))
                 for s in m.utils.data.random_split(range(30), [10, 20], generator=m.Generator().manual_seed(42))],
        lambda: [m.tensor(list(m.utils.data.RandomSampler(range(40), replacement=True, num_samples=70)))],
    ]


def test_layers_init_dropout_and_data_order_match_pytorch():
    for i in range(len(_module_calls(tc))):
        torch.manual_seed(3)
        tc.manual_seed(3)
        ours, theirs = _module_calls(tc)[i](), _module_calls(torch)[i]()
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same(a, b)


def test_half_precision_uniforms_and_the_value_that_rounds_up_to_the_bound():
    for dt in ("float16", "bfloat16", "float32", "float64"):
        for lo, hi in ((0, 1), (-1, 2), (0.1, 0.3), (1000, 1001)):
            torch.manual_seed(0)
            tc.manual_seed(0)
            _same(tc.empty(20000, dtype=getattr(tc, dt)).uniform_(lo, hi).double(),
                  torch.empty(20000, dtype=getattr(torch, dt)).uniform_(lo, hi).double())
        _same(tc.rand(50, dtype=getattr(tc, dt)).double(), torch.rand(50, dtype=getattr(torch, dt)).double())


@pytest.mark.parametrize("seed", [0, 42, 2147483647])
def test_normals_across_the_kernel_blocks_match_pytorch(seed):
    rows = tc._random_math._ROWS  # blocks of 16 words the float32 kernel transforms at a time
    for n in (16 * rows - 16, 16 * rows, 16 * rows + 21, 2 * 16 * rows + 7):
        for dt in ("float32", "float16", "bfloat16"):
            torch.manual_seed(seed)
            tc.manual_seed(seed)
            _same(tc.randn(n, dtype=getattr(tc, dt)).float(), torch.randn(n, dtype=getattr(torch, dt)).float())
        _same(tc.empty(n).normal_(-0.7, 0.02), torch.empty(n).normal_(-0.7, 0.02))
        _same(tc.empty(n).uniform_(-0.3, 1.1), torch.empty(n).uniform_(-0.3, 1.1))
    _same(tc.get_rng_state(), torch.get_rng_state())
