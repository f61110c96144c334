"""Chapter 04, the DataLoader: checks for the learner's DataLoader.__init__ (the sampler, the batch sampler and
the collate_fn it chooses, PyTorch's errors for options that contradict each other), __setattr__ (the pipeline's
attributes frozen once built), __iter__ (each batch of
indices from the batch sampler -> the samples from the dataset -> collate_fn; one sample at a time without
batching; PyTorch's per-epoch draw from the loader's generator) and __len__."""
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
    """While the learner's loader runs: calling the framework's DataLoader methods (super()) is named."""
    def trap(name):
        def called(*args, **kwargs):
            raise RuntimeError(f"your DataLoader called the framework's DataLoader.{name} (super().{name}(...)); "
                               f"write it yourself")
        return called

    with seams.replaced({f"DataLoader.{name}": trap(name) for name in ("__init__", "__iter__", "__len__")}):
        yield


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


_ERRORS = [
    ("DataLoader(range(10), sampler=[0, 1], shuffle=True)", dict(sampler=[0, 1], shuffle=True),
     "sampler option is mutually exclusive with shuffle"),
    ("DataLoader(range(10), batch_sampler=[[0, 1]], batch_size=2)", dict(batch_sampler=[[0, 1]], batch_size=2),
     "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last"),
    ("DataLoader(range(10), batch_sampler=[[0, 1]], drop_last=True)", dict(batch_sampler=[[0, 1]], drop_last=True),
     "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last"),
    ("DataLoader(range(10), batch_size=None, drop_last=True)", dict(batch_size=None, drop_last=True),
     "batch_size=None option disables auto-batching and is mutually exclusive with drop_last"),
]


def _constructor(t, DataLoader):
    """The pieces the learner's constructor chooses, and its errors."""
    data = list(range(10))
    call = "DataLoader(10 samples, batch_size=4)"
    loader = DataLoader(data, batch_size=4)
    fw = tc.utils.data
    t.true(type(loader.sampler) is fw.SequentialSampler,
           f"{call}.sampler to be a tc.utils.data.SequentialSampler (got {type(loader.sampler).__name__} from "
           f"{type(loader.sampler).__module__})",
           hint="construct the framework's tc.utils.data.SequentialSampler(dataset): your 04.2 __iter__ runs inside it")
    t.true(type(loader.batch_sampler) is fw.BatchSampler and loader.batch_sampler.sampler is loader.sampler,
           f"{call}.batch_sampler to be a tc.utils.data.BatchSampler over loader.sampler (got "
           f"{type(loader.batch_sampler).__name__})",
           hint="self.batch_sampler = tc.utils.data.BatchSampler(sampler, batch_size, drop_last)")
    t.equal((loader.batch_sampler.batch_size, loader.batch_sampler.drop_last, loader.batch_size, loader.drop_last),
            (4, False, 4, False), what=f"(batch_sampler.batch_size, batch_sampler.drop_last, batch_size, drop_last) of "
                                       f"{call}")
    t.true(loader.collate_fn is fw.default_collate, f"{call}.collate_fn to be tc.utils.data.default_collate",
           hint="without a collate_fn and with batching: tc.utils.data.default_collate")
    t.true(loader.dataset is data, f"{call}.dataset to be the dataset given")
    g = tc.Generator().manual_seed(0)
    shuffled = DataLoader(data, batch_size=4, shuffle=True, generator=g)
    t.true(type(shuffled.sampler) is fw.RandomSampler and shuffled.sampler.generator is g and shuffled.generator is g,
           "DataLoader(..., shuffle=True, generator=g).sampler to be a tc.utils.data.RandomSampler drawing from g, "
           f"and loader.generator to be g (got {type(shuffled.sampler).__name__})",
           why="the loader does not shuffle: shuffle=True must choose a RandomSampler"
           if type(shuffled.sampler) is fw.SequentialSampler else None,
           hint="tc.utils.data.RandomSampler(dataset, generator=generator) when shuffle, and keep self.generator")
    own = [3, 1, 2]
    t.true(DataLoader(data, batch_size=2, sampler=own).batch_sampler.sampler is own,
           "DataLoader(..., sampler=[3, 1, 2]) to batch the sampler given")
    single = DataLoader(data, batch_size=None)
    t.true(single.batch_sampler is None and single.collate_fn is fw.default_convert,
           "DataLoader(..., batch_size=None) to have no batch sampler (None) and tc.utils.data.default_convert as "
           f"its collate_fn (got {type(single.batch_sampler).__name__}, {getattr(single.collate_fn, '__name__', '?')})",
           why="batch_size=None turns batching off, so there is nothing to collate: each sample is only converted"
           if single.batch_sampler is None and single.collate_fn is fw.default_collate else None,
           hint="a BatchSampler only when batch_size is not None; then default_convert instead of default_collate")
    given = DataLoader(data, batch_sampler=[[3, 1], [7]])
    t.equal((given.batch_sampler, given.batch_size, given.drop_last), ([[3, 1], [7]], None, False),
            what="(batch_sampler, batch_size, drop_last) of DataLoader(10 samples, batch_sampler=[[3, 1], [7]])",
            hint="a given batch_sampler decides the batches: keep it, and set batch_size to None, drop_last to False")
    for what, options, message in _ERRORS:
        try:
            DataLoader(data, **options)
        except ValueError as error:
            t.equal(str(error), message, what=f"the ValueError of {what}")
        else:
            t.fail(what, f"did not raise; PyTorch raises ValueError({message!r})",
                   hint="check the contradicting options before choosing the pieces")
    _frozen(t, DataLoader, data)


def _frozen(t, DataLoader, data):
    """Once built, the pipeline's attributes refuse to change (PyTorch's ValueError); the others do not."""
    call = "DataLoader(10 samples, batch_size=2)"
    for attr, value in (("batch_size", 3), ("sampler", [0]), ("drop_last", True), ("dataset", [])):
        loader = DataLoader(data, batch_size=2)
        message = f"{attr} attribute should not be set after DataLoader is initialized"
        try:
            setattr(loader, attr, value)
        except ValueError as error:
            t.equal(str(error), message, what=f"the ValueError of loader.{attr} = {value!r} for loader = {call}")
        else:
            t.fail(f"loader.{attr} = {value!r} for loader = {call}", f"did not raise; PyTorch raises "
                   f"ValueError({message!r}): the batch sampler was built from it",
                   hint="end __init__ with self.__initialized = True; __setattr__ raises for the pipeline's "
                        "attributes once self.__initialized is set")
    loader = DataLoader(data, batch_size=2)
    try:
        loader.collate_fn = len
        loader.note = "kept"
    except ValueError as error:
        t.fail(f"loader.collate_fn = len for loader = {call}", f"raised ValueError: {error}; PyTorch freezes only "
               "batch_size, batch_sampler, sampler, drop_last, dataset and persistent_workers, every other attribute "
               "can still be set",
               hint="raise only when attr is one of those six; else super().__setattr__(attr, val)")
    t.true(loader.collate_fn is len and loader.note == "kept",
           f"loader.collate_fn = len and loader.note = 'kept' to be set on {call}",
           hint="set the other attributes with super().__setattr__(attr, val)")


@exercise("04.9", title="the DataLoader: choosing the pieces, then the loop", points=4)
def dataloader_check(t, DataLoader):
    t.true(all(name in vars(DataLoader) for name in ("__init__", "__setattr__", "__iter__", "__len__")),
           "your DataLoader to define __init__, __setattr__, __iter__ and __len__ itself")
    with _own_code_only():
        _constructor(t, DataLoader)
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
