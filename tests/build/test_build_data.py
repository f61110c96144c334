"""Chapter 04's components inside the framework: a learner's sampler or DataLoader runs where it applies (the
options it does not cover stay the reference's), and an error raised inside a learner's generator, mid-epoch,
names the component."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_course as tc
from tinygrad_course import seams
from tinygrad_course.build.components import BY_NAME
from tinygrad_course.build.package import Loaded
from tinygrad_course.build.session import install

from build_helpers import solution_cell


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
            self.__initialized = True

    installed("DataLoader.__init__", Chooser)
    loader = tc.utils.data.DataLoader(list(range(6)), batch_size=4)
    assert [b.tolist() for b in loader] == [[0, 1, 2, 3], [4, 5]] and loader.num_workers == 0
    assert loader.__dict__.get("_Chooser__initialized") and not loader.__dict__.get("_DataLoader__initialized")
    loader.batch_size = 2  # a constructor that never sets DataLoader's own flag leaves the pipeline open
    (learners,) = _solution_classes("ex04_9", ("DataLoader",))
    for name in ("DataLoader.__init__", "DataLoader.__setattr__"):
        installed(name, learners)
    loader = tc.utils.data.DataLoader(list(range(6)), batch_size=4)
    for attr, value in (("batch_size", 2), ("sampler", [0]), ("persistent_workers", True)):
        with pytest.raises(ValueError, match=f"^{attr} attribute should not be set after DataLoader is initialized"):
            setattr(loader, attr, value)
    loader.collate_fn = len
    assert [b for b in loader] == [4, 2]
    parallel = tc.utils.data.DataLoader(list(range(6)), batch_size=4, num_workers=1)  # built by the reference
    with pytest.raises(ValueError, match="drop_last attribute should not be set"):
        parallel.drop_last = True
    assert seams.calls().get("DataLoader.__setattr__", 0) > 0


def _solution_classes(grade_id, names):
    """The classes of chapter 04's solution cell `grade_id`, as a learner's package holds them."""
    namespace = {"tc": tc, "Sampler": tc.utils.data.Sampler}
    exec(compile(solution_cell("04_data.ipynb", grade_id), f"<{grade_id}>", "exec"), namespace)
    return [namespace[n] for n in names]


def _raised(build):
    """(exception type name, message) of build(), or None when it succeeds."""
    try:
        build()
    except (TypeError, ValueError) as error:
        return type(error).__name__, str(error)
    return None


SAMPLER_ERRORS = [  # (sampler class name, args, kwargs): each raises in PyTorch 2.13's constructor
    ("RandomSampler", (range(3),), dict(replacement=1)), ("RandomSampler", (range(3),), dict(num_samples=0)),
    ("RandomSampler", (range(3),), dict(num_samples=1.5)), ("RandomSampler", ([],), {}),
    ("RandomSampler", ([],), dict(replacement="yes")), ("RandomSampler", (range(3),), dict(num_samples=-2)),
    ("BatchSampler", (range(5), 0, False), {}), ("BatchSampler", (range(5), True, False), {}),
    ("BatchSampler", (range(5), 2.0, False), {}), ("BatchSampler", (range(5), np.int64(2), False), {}),
    ("BatchSampler", (range(5), 2, 1), {}), ("BatchSampler", (range(5), -1, None), {}),
]


def test_the_learners_sampler_constructors_raise_pytorchs_errors_inside_the_framework(installed):
    torch_data = pytest.importorskip("torch.utils.data")
    sequential, random = _solution_classes("ex04_2", ("SequentialSampler", "RandomSampler"))
    (batch,) = _solution_classes("ex04_8", ("BatchSampler",))
    for name, cls in (("SequentialSampler.__init__", sequential), ("RandomSampler.__init__", random),
                      ("RandomSampler.num_samples", random), ("BatchSampler.__init__", batch),
                      ("SequentialSampler.__len__", sequential), ("RandomSampler.__len__", random)):
        installed(name, cls)
    assert {"SequentialSampler.__init__", "RandomSampler.__init__", "RandomSampler.num_samples",
            "BatchSampler.__init__"} <= set(seams.installed())
    seams.reset_calls()
    for name, args, kwargs in SAMPLER_ERRORS:
        want = _raised(lambda: getattr(torch_data, name)(*args, **kwargs))
        assert want is not None, (name, args, kwargs)
        assert _raised(lambda: getattr(tc.utils.data, name)(*args, **kwargs)) == want, (name, args, kwargs)
    growing = [0, 1, 2]
    sampler = tc.utils.data.RandomSampler(growing, generator=tc.Generator().manual_seed(0))
    growing.append(3)
    assert sampler.num_samples == 4 and len(sampler) == 4 and sorted(sampler) == [0, 1, 2, 3]
    assert len(tc.utils.data.DataLoader(range(6), batch_size=None)) == 6
    loader = tc.utils.data.DataLoader(list(range(7)), batch_size=3, shuffle=True,
                                      generator=tc.Generator().manual_seed(1))
    assert type(loader.sampler).__name__ == "RandomSampler" and len(loader) == 3
    assert sorted(sum((b.tolist() for b in loader), [])) == list(range(7))
    calls = seams.calls()
    assert all(calls.get(n, 0) > 0 for n in ("RandomSampler.__init__", "RandomSampler.num_samples",
                                              "BatchSampler.__init__", "SequentialSampler.__init__",
                                              "RandomSampler.__len__", "SequentialSampler.__len__")), calls


def test_the_reference_sampler_constructors_match_pytorchs_errors():
    torch_data = pytest.importorskip("torch.utils.data")
    for name, args, kwargs in SAMPLER_ERRORS:
        want = _raised(lambda: getattr(torch_data, name)(*args, **kwargs))
        assert _raised(lambda: getattr(tc.utils.data, name)(*args, **kwargs)) == want, (name, args, kwargs)
