"""Dataset classes, random_split, samplers and collation, compared with torch.utils.data where deterministic."""
import collections

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import tinygrad_course as tc
from tinygrad_course.utils import data as D


def _tensor_ds(n=10):
    return D.TensorDataset(tc.arange(2 * n).float().reshape(n, 2), tc.arange(n))


def test_tensor_dataset_rows_and_size_mismatch():
    ds = _tensor_ds()
    x, y = ds[3]
    assert x.tolist() == [6.0, 7.0] and y.item() == 3 and len(ds) == 10
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        D.TensorDataset(tc.zeros(3), tc.zeros(4))


def test_dataset_base_errors_and_addition():
    with pytest.raises(NotImplementedError):
        D.Dataset()[0]
    both = _tensor_ds(3) + _tensor_ds(4)
    assert isinstance(both, D.ConcatDataset) and len(both) == 7


def test_concat_dataset_indexing_matches_pytorch():
    a, b = list(range(3)), list(range(10, 15))
    ours, theirs = D.ConcatDataset([a, b]), tud.ConcatDataset([a, b])
    assert [ours[i] for i in range(-8, 8)] == [theirs[i] for i in range(-8, 8)]
    assert ours.cumulative_sizes == theirs.cumulative_sizes
    with pytest.raises(ValueError, match="absolute value of index"):
        ours[-9]
    with pytest.raises(AssertionError, match="empty iterable"):
        D.ConcatDataset([])


def test_subset_and_getitems():
    sub = D.Subset(list(range(100, 110)), [5, 1, 7])
    assert [sub[i] for i in range(3)] == [105, 101, 107]
    assert sub.__getitems__([2, 0]) == [107, 105]


@pytest.mark.parametrize("lengths,expected", [([3, 7], [3, 7]), ([0.3, 0.7], [3, 7]), ([0.5, 0.25, 0.25], [6, 2, 2])])
def test_random_split_lengths_like_pytorch(lengths, expected):
    parts = D.random_split(list(range(10)), lengths, generator=tc.Generator().manual_seed(0))
    theirs = tud.random_split(list(range(10)), lengths, generator=torch.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [len(p) for p in theirs] == expected
    assert sorted(i for p in parts for i in p.indices) == list(range(10))


def test_random_split_reproducible_with_generator_and_errors():
    a = D.random_split(range(20), [10, 10], generator=tc.Generator().manual_seed(3))
    b = D.random_split(range(20), [10, 10], generator=tc.Generator().manual_seed(3))
    assert a[0].indices == b[0].indices
    with pytest.raises(ValueError, match="Sum of input lengths"):
        D.random_split(range(5), [2, 2])


def test_sequential_and_random_sampler():
    assert list(D.SequentialSampler(range(5))) == [0, 1, 2, 3, 4]
    g = tc.Generator().manual_seed(1)
    order = list(D.RandomSampler(range(10), generator=g))
    assert sorted(order) == list(range(10)) and order != list(range(10))
    tc.manual_seed(5)
    first = list(D.RandomSampler(range(10)))
    tc.manual_seed(5)
    assert list(D.RandomSampler(range(10))) == first
    s = D.RandomSampler(range(4), num_samples=10)
    drawn = list(s)
    assert len(drawn) == len(s) == 10 and sorted(drawn[:4]) == [0, 1, 2, 3]
    with_repl = list(D.RandomSampler(range(3), replacement=True, num_samples=70))
    assert len(with_repl) == 70 and set(with_repl) == {0, 1, 2}
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        D.RandomSampler([], num_samples=0)


def test_weighted_random_sampler():
    s = D.WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 400, generator=tc.Generator().manual_seed(0))
    counts = collections.Counter(s)
    assert set(counts) == {1, 3} and 60 < counts[1] < 140 and len(s) == 400
    no_repl = list(D.WeightedRandomSampler([1, 1, 1, 1], 4, replacement=False))
    assert sorted(no_repl) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="weights should be a 1d sequence"):
        D.WeightedRandomSampler([[1.0]], 1)
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        D.WeightedRandomSampler([1.0], 0)


@pytest.mark.parametrize("n,bs,drop", [(10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False)])
def test_batch_sampler_matches_pytorch(n, bs, drop):
    ours = D.BatchSampler(D.SequentialSampler(range(n)), bs, drop)
    theirs = tud.BatchSampler(tud.SequentialSampler(range(n)), bs, drop)
    assert list(ours) == list(theirs) and len(ours) == len(theirs)
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        D.BatchSampler(range(3), 0, False)


@pytest.mark.parametrize("n,replicas,drop", [(10, 3, False), (10, 3, True), (2, 5, False), (12, 4, False)])
def test_distributed_sampler_shards_like_pytorch(n, replicas, drop):
    for shuffle in (False, True):
        shards = [list(D.DistributedSampler(range(n), replicas, r, shuffle=shuffle, drop_last=drop))
                  for r in range(replicas)]
        theirs = [tud.DistributedSampler(range(n), replicas, r, shuffle=shuffle, drop_last=drop)
                  for r in range(replicas)]
        assert [len(s) for s in shards] == [len(t) for t in theirs]
        if not shuffle:
            assert shards == [list(t) for t in theirs]
        flat = [i for s in shards for i in s]
        assert set(flat) <= set(range(n))
        if not drop:
            assert set(flat) == set(range(n))
        else:
            assert len(set(flat)) == len(flat)


def test_distributed_sampler_set_epoch_reshuffles_consistently():
    s0 = D.DistributedSampler(range(20), 2, 0, seed=7)
    s1 = D.DistributedSampler(range(20), 2, 1, seed=7)
    e0 = list(s0) + list(s1)
    assert sorted(e0) == list(range(20))
    s0.set_epoch(1)
    s1.set_epoch(1)
    e1 = list(s0) + list(s1)
    assert sorted(e1) == list(range(20)) and e1 != e0
    with pytest.raises(ValueError, match="Invalid rank"):
        D.DistributedSampler(range(4), 2, 2)


Point = collections.namedtuple("Point", "x y")


@pytest.mark.parametrize("batch", [
    [np.zeros((2, 3), np.float32), np.ones((2, 3), np.float32)],
    [1.5, 2.5],
    [1, 2, 3],
    [True, False],
    [np.float32(1.0), np.float32(2.0)],
    [np.int64(4), np.int64(5)],
    ["a", "b"],
    [(np.ones(2, np.float32), 1), (np.zeros(2, np.float32), 0)],
    [{"img": np.ones(2), "label": 3}, {"img": np.zeros(2), "label": 4}],
    [Point(1, 2.0), Point(3, 4.0)],
    [[1, 2], [3, 4]],
])
def test_default_collate_matches_pytorch(batch):
    ours, theirs = D.default_collate(batch), tud.default_collate(batch)
    _compare(ours, theirs)


def _compare(ours, theirs):
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, tc.Tensor)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    elif isinstance(theirs, dict):
        assert type(ours) is type(theirs) and ours.keys() == theirs.keys()
        for k in theirs:
            _compare(ours[k], theirs[k])
    elif isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _compare(a, b)
    else:
        assert ours == theirs


def test_default_collate_stacks_tensors_and_reports_bad_types():
    out = D.default_collate([tc.ones(2), tc.zeros(2)])
    assert out.shape == (2, 2)
    with pytest.raises(TypeError, match="default_collate: batch must contain"):
        D.default_collate([object(), object()])
    with pytest.raises(RuntimeError, match="equal size"):
        D.default_collate([[1, 2], [3]])


def test_default_convert_matches_pytorch():
    sample = (np.zeros(2), {"a": np.ones(1, np.float32)}, 3)
    _compare(D.default_convert(sample), tud.default_convert(sample))
