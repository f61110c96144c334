"""Chapter 04, the DataLoader's batching: checks for the learner's BatchSampler, whose constructor checks its
options as PyTorch's, whose `__iter__` every
DataLoader with a batch_size iterates (lists of indices, the last one shorter unless drop_last, each yielded
as soon as it is full) and whose `__len__` is len(DataLoader): the optimizer steps of an epoch."""
import itertools

from ..registry import exercise
from .ch04_samplers import constructor_errors


class _Stream:
    """A sampler that can be read once, lazily: it refuses to be read past `limit` indices (a loop that
    collects everything before yielding reads too far)."""

    def __init__(self, limit):
        self.limit = limit

    def __iter__(self):
        for i in itertools.count():
            if i >= self.limit:
                raise RuntimeError(f"read past index {self.limit - 1} of a sampler that yields indices one at a time")
            yield i


def _expected(indices, batch_size, drop_last):
    batches = [list(indices[i:i + batch_size]) for i in range(0, len(indices), batch_size)]
    return batches[:-1] if batches and drop_last and len(batches[-1]) < batch_size else batches


@exercise("04.8", title="BatchSampler: a sampler's indices in batches, and how many", points=3,
          forbidden=["tinygrad_course.utils.data.BatchSampler", "tinygrad_course.utils.data.sampler.BatchSampler"])
def batch_sampler_check(t, BatchSampler):
    kept = BatchSampler(range(5), 2, True)
    t.equal((list(kept.sampler), kept.batch_size, kept.drop_last), ([0, 1, 2, 3, 4], 2, True),
            what="(list(sampler), batch_size, drop_last) of BatchSampler(range(5), 2, True)",
            hint="keep the three as self.sampler, self.batch_size, self.drop_last")
    constructor_errors(t, lambda **kw: BatchSampler(range(5), **kw), [
        ("BatchSampler(range(5), batch_size=0, drop_last=False)", dict(batch_size=0, drop_last=False), ValueError,
         "batch_size should be a positive integer value, but got batch_size=0"),
        ("BatchSampler(range(5), batch_size=True, drop_last=False)", dict(batch_size=True, drop_last=False),
         ValueError, "batch_size should be a positive integer value, but got batch_size=True"),
        ("BatchSampler(range(5), batch_size=2.0, drop_last=False)", dict(batch_size=2.0, drop_last=False),
         ValueError, "batch_size should be a positive integer value, but got batch_size=2.0"),
        ("BatchSampler(range(5), batch_size=2, drop_last=1)", dict(batch_size=2, drop_last=1), ValueError,
         "drop_last should be a boolean value, but got drop_last=1"),
        ("BatchSampler(range(5), batch_size=-1, drop_last=1)", dict(batch_size=-1, drop_last=1), ValueError,
         "batch_size should be a positive integer value, but got batch_size=-1"),
    ], hint="first batch_size: isinstance(batch_size, int), not a bool (True is an int), > 0; then "
            "isinstance(drop_last, bool); each failing one raises ValueError with PyTorch's message")
    cases = [(list(range(10)), 3, False), (list(range(10)), 3, True), (list(range(9)), 3, True),
             ([7, 2, 5, 0, 9], 2, False), ([], 4, False), ([4], 4, True)]
    for indices, batch_size, drop_last in cases:
        call = f"BatchSampler({indices}, batch_size={batch_size}, drop_last={drop_last})"
        produced = iter(BatchSampler(indices, batch_size, drop_last))
        batches = list(produced)
        same_object = len(batches) > 1 and all(b is batches[0] for b in batches)
        got = [list(b) for b in batches]
        want = _expected(indices, batch_size, drop_last)
        last_dropped = _expected(indices, batch_size, True)
        last_kept = _expected(indices, batch_size, False)
        t.equal(got, want, f"the batches of {call}",
                why=("every batch is the same list object, emptied and refilled: a new list for each batch"
                     if same_object else
                     "the last, shorter batch is missing although drop_last=False" if got == last_dropped != want else
                     "drop_last=True must leave out the last, shorter batch" if got == last_kept != want else None),
                hint="collect indices in a list; when it holds batch_size of them yield it and start a new list; "
                     "after the loop yield what is left unless drop_last")
    sampler = BatchSampler([5, 6, 7, 8, 9], 2, False)
    t.equal([list(b) for b in sampler], [[5, 6], [7, 8], [9]], "a second pass over the same BatchSampler",
            hint="iterate self.sampler inside __iter__, so that every epoch starts again")
    try:
        first_two = list(itertools.islice(iter(BatchSampler(_Stream(6), 3, False)), 2))
    except RuntimeError as error:
        t.fail("iterating a BatchSampler over a sampler that yields indices one at a time",
               f"{error}: yield each batch as soon as it is full, without reading the whole sampler first",
               hint="make __iter__ a generator: `yield batch` inside the loop over self.sampler")
    t.equal([list(b) for b in first_two], [[0, 1, 2], [3, 4, 5]],
            "the first two batches of a BatchSampler over a sampler yielding 0, 1, 2, ... with batch_size=3")
    for n, b in ((1797, 64), (1000, 100), (10, 3), (5, 8), (0, 4)):
        expected = len(_expected(list(range(n)), b, False))
        got = len(BatchSampler(range(n), b, False))
        t.equal(got, expected, what=f"len(BatchSampler(range({n}), {b}, drop_last=False))",
                hint="the last, smaller batch is a step too: ceil(n / batch_size) with integer arithmetic",
                why="the last, smaller batch was not counted" if got == expected - 1 else None)
    for n, b in ((1797, 64), (10, 3), (5, 8)):
        expected = len(_expected(list(range(n)), b, True))
        got = len(BatchSampler(range(n), b, True))
        t.equal(got, expected, what=f"len(BatchSampler(range({n}), {b}, drop_last=True))",
                hint="drop_last=True drops the incomplete batch: floor(n / batch_size)",
                why="the incomplete last batch was still counted with drop_last=True" if got == expected + 1 else None)
    t.equal(len(BatchSampler(range(1797), 64, False)) * 10, 290,
            what="optimizer steps in 10 epochs of 1,797 samples, batch 64")
