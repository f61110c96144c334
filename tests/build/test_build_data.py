"""Chapter 04's components inside the framework: a learner's sampler or DataLoader runs where it applies (the
options it does not cover stay the reference's), and an error raised inside a learner's generator, mid-epoch,
names the component."""
from __future__ import annotations

import pytest

import tinygrad_course as tc
from tinygrad_course import seams
from tinygrad_course.build.components import BY_NAME
from tinygrad_course.build.package import Loaded
from tinygrad_course.build.session import install


@pytest.fixture
def installed():
    def put(name, obj):
        install([Loaded(BY_NAME[name], obj=obj, file="ch04_test.py")])

    yield put
    seams.uninstall()


class LoopRaisingAtTheSecondBatch:
    def __iter__(self):
        for k, indices in enumerate(self.batch_sampler):
            if k == 1:
                raise IndexError("the second batch")
            yield self.collate_fn([self.dataset[i] for i in indices])


class SamplerRefusing:
    def __iter__(self):
        raise AssertionError("the learner's sampler ran")


class LoaderRefusing:
    def __init__(self, *args, **kwargs):
        raise AssertionError("the learner's constructor ran")

    def __iter__(self):
        raise AssertionError("the learner's loop ran")

    def __len__(self):
        raise AssertionError("the learner's len ran")


def test_an_error_inside_a_learners_loop_names_the_component_at_the_step_that_raised(installed):
    installed("DataLoader.__iter__", LoopRaisingAtTheSecondBatch)
    batches = iter(tc.utils.data.DataLoader(list(range(10)), batch_size=4))
    assert next(batches).tolist() == [0, 1, 2, 3]
    with pytest.raises(IndexError, match="the second batch") as raised:
        next(batches)
    assert any("raised by your DataLoader.__iter__ (ch04_test.py)" in note for note in raised.value.__notes__)


def test_sampling_with_replacement_stays_the_references(installed):
    installed("RandomSampler.__iter__", SamplerRefusing)
    sampler = tc.utils.data.RandomSampler(range(5), replacement=True, num_samples=40,
                                          generator=tc.Generator().manual_seed(0))
    drawn = list(sampler)
    assert len(drawn) == 40 and set(drawn) <= set(range(5))
    with pytest.raises(AssertionError, match="the learner's sampler ran"):
        list(tc.utils.data.RandomSampler(range(5)))


class Stream(tc.utils.data.IterableDataset):
    def __iter__(self):
        return iter(range(5))

    def __len__(self):
        return 5


def test_workers_and_iterable_datasets_stay_the_references_loader(installed):
    for name in ("DataLoader.__init__", "DataLoader.__iter__", "DataLoader.__len__"):
        installed(name, LoaderRefusing)
    stream = tc.utils.data.DataLoader(Stream(), batch_size=2)
    assert [b.tolist() for b in stream] == [[0, 1], [2, 3], [4]] and len(stream) == 3
    parallel = tc.utils.data.DataLoader(list(range(6)), batch_size=2, num_workers=1)
    assert parallel.num_workers == 1 and type(parallel.sampler).__name__ == "SequentialSampler"
    with pytest.raises(AssertionError, match="the learner's constructor ran"):
        tc.utils.data.DataLoader(list(range(6)), batch_size=2)


def test_a_learners_constructor_leaves_the_pipeline_frozen_as_pytorch_does(installed):
    class Chooser:
        def __init__(self, dataset, batch_size=1, shuffle=False, sampler=None, batch_sampler=None, collate_fn=None,
                     drop_last=False, generator=None):
            self.dataset, self.batch_size, self.drop_last, self.generator = dataset, batch_size, drop_last, generator
            self.sampler = tc.utils.data.SequentialSampler(dataset)
            self.batch_sampler = tc.utils.data.BatchSampler(self.sampler, batch_size, drop_last)
            self.collate_fn = collate_fn or tc.utils.data.default_collate

    installed("DataLoader.__init__", Chooser)
    loader = tc.utils.data.DataLoader(list(range(6)), batch_size=4)
    assert [b.tolist() for b in loader] == [[0, 1, 2, 3], [4, 5]] and loader.num_workers == 0
    with pytest.raises(ValueError, match="batch_size attribute should not be set after DataLoader is initialized"):
        loader.batch_size = 2
