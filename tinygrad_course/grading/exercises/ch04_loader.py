"""Chapter 04, the DataLoader's own loop: checks for the learner's DataLoader.__iter__ (each batch of
indices from the batch sampler -> the samples from the dataset -> collate_fn; one sample at a time without
batching; PyTorch's per-epoch draw from the loader's generator) and DataLoader.__len__."""
import contextlib

import numpy as np

import tinygrad_course as tc
from tinygrad_course import seams

from ..registry import exercise


@contextlib.contextmanager
def _reference():
    """The framework's own data pipeline for the block (the expected batches), whatever is installed."""
    installed = seams.installed()
    seams.uninstall()
    try:
        yield
    finally:
        for name, implementation in installed.items():
            seams.install(name, implementation)


@contextlib.contextmanager
def _own_code_only():
    """While the learner's loader runs: calling the framework's DataLoader.__iter__/__len__ (super()) is named."""
    def trap(name):
        def called(*args, **kwargs):
            raise RuntimeError(f"your DataLoader called the framework's DataLoader.{name} (super().{name}()); "
                               f"write the loop yourself")
        return called

    before = {name: seams.installed().get(name) for name in ("DataLoader.__iter__", "DataLoader.__len__")}
    for name in before:
        seams.install(name, trap(name.split(".")[1]))
    try:
        yield
    finally:
        for name, previous in before.items():
            seams.uninstall(name)
            if previous is not None:
                seams.install(name, previous)


class _IndexOnly(tc.utils.data.Dataset):
    """Samples (features, label) that can be read one index at a time only, as a Dataset promises."""

    def __init__(self, n):
        self.x = tc.arange(2 * n, dtype=tc.float32).reshape(n, 2)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        if not isinstance(index, int):
            raise TypeError(f"this dataset is read one sample at a time: dataset[{index!r}] is not an index")
        return self.x[index], index % 3


def _plain(batch):
    """A batch as plain Python data, to compare."""
    if isinstance(batch, tc.Tensor):
        return batch.tolist()
    if isinstance(batch, (list, tuple)):
        return [_plain(b) for b in batch]
    if isinstance(batch, dict):
        return {k: _plain(v) for k, v in batch.items()}
    return batch


def _epoch(loader):
    with _own_code_only():
        return [_plain(b) for b in loader]


@exercise("04.9", title="the DataLoader's loop: sampler, batch sampler, fetch, collate", points=3)
def dataloader_check(t, DataLoader):
    t.true(issubclass(DataLoader, tc.utils.data.DataLoader) and "__iter__" in vars(DataLoader)
           and "__len__" in vars(DataLoader), "DataLoader to subclass tc.utils.data.DataLoader and define "
                                             "__iter__ and __len__ itself")
    data = _IndexOnly(10)
    call = "DataLoader(10 samples (features (2,), label int), batch_size=4)"
    with _reference():
        want = [_plain(b) for b in tc.utils.data.DataLoader(data, batch_size=4)]
    try:
        got = _epoch(DataLoader(data, batch_size=4))
    except TypeError as error:
        t.fail(f"the batches of {call}", f"raised TypeError: {error}",
               hint="fetch the samples one index at a time: [self.dataset[i] for i in indices]")
    t.equal(got, want, what=f"the batches of {call}",
            hint="for each list of indices from self.batch_sampler: yield self.collate_fn([self.dataset[i] for i in "
                 "indices])")
    counted = _epoch(DataLoader(data, batch_size=4, collate_fn=len))
    t.equal(counted, [4, 4, 2], what=f"the batches of {call[:-1]}, collate_fn=len)",
            why="the samples were not merged by the loader's own collate_fn" if counted != [4, 4, 2] else None,
            hint="self.collate_fn is the one to call: the constructor set it (default_collate unless one was given)")
    with _reference():
        want = [_plain(b) for b in tc.utils.data.DataLoader([np.array([i, -i]) for i in range(3)], batch_size=None)]
    try:
        got = _epoch(DataLoader([np.array([i, -i]) for i in range(3)], batch_size=None))
    except TypeError as error:
        t.fail("the batches of DataLoader(3 arrays (2,), batch_size=None)", f"raised TypeError: {error}",
               hint="without batching self.batch_sampler is None: take each index from self.sampler, fetch "
                    "self.dataset[index] and pass that one sample to self.collate_fn")
    t.equal(got, want, what="the batches of DataLoader(3 arrays (2,), batch_size=None)",
            why="each sample was put in a batch of one: with batch_size=None a sample goes to collate_fn alone"
                if got == [[w] for w in want] else None,
            hint="without batching self.batch_sampler is None: take each index from self.sampler, fetch "
                 "self.dataset[index] and pass that one sample to self.collate_fn")
    given = [[3, 1], [7], [0, 2, 4]]
    t.equal(_epoch(DataLoader(list(range(100, 110)), batch_sampler=given)), [[103, 101], [107], [100, 102, 104]],
            what=f"the batches of DataLoader(100..109, batch_sampler={given})",
            hint="iterate self.batch_sampler: it is the one given, or a BatchSampler over self.sampler")

    shuffled = "DataLoader(range(10), batch_size=4, shuffle=True, generator=tc.Generator().manual_seed(1))"
    with _reference():
        reference = tc.utils.data.DataLoader(range(10), batch_size=4, shuffle=True,
                                             generator=tc.Generator().manual_seed(1))
        want = [[_plain(b) for b in reference] for _ in range(2)]
        g = tc.Generator().manual_seed(1)
        no_draw = [[_plain(b) for b in tc.utils.data.BatchSampler(tc.utils.data.RandomSampler(range(10), generator=g),
                                                                  4, False)] for _ in range(2)]
    loader = DataLoader(range(10), batch_size=4, shuffle=True, generator=tc.Generator().manual_seed(1))
    got = [_epoch(loader) for _ in range(2)]
    t.equal(sorted(sum(got[0], [])), list(range(10)), what=f"the samples of one epoch of {shuffled} (sorted)")
    t.equal(got, want, what=f"the batches of two epochs of {shuffled}",
            why="the order is not PyTorch's: at the start of every epoch PyTorch's iterator draws one int64 from "
                "the loader's generator (its worker processes' base seed), even without workers, and the shuffle "
                "comes after that draw" if got == no_draw else None,
            hint="first tc.empty((), dtype=tc.int64).random_(generator=self.generator), then the loop")

    lengths = {"DataLoader(10 samples, batch_size=4)": (DataLoader(data, batch_size=4), 3),
               "DataLoader(10 samples, batch_size=4, drop_last=True)": (DataLoader(data, batch_size=4, drop_last=True), 2),
               "DataLoader(10 samples, batch_size=None)": (DataLoader(data, batch_size=None), 10),
               f"DataLoader(100..109, batch_sampler={given})": (DataLoader(list(range(100, 110)), batch_sampler=given),
                                                                3)}
    for what, (loader, expected) in lengths.items():
        with _own_code_only():
            got = len(loader)
        t.equal(got, expected, what=f"len({what})",
                why="len(loader) counted the samples; it counts the batches of an epoch" if got == len(loader.dataset)
                and got != expected else None,
                hint="the length of what __iter__ walks: self.batch_sampler, or self.sampler without batching")
