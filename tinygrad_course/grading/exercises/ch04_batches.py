"""Chapter 04, the DataLoader's batching: checks for the learner's batch_indices(sampler, batch_size,
drop_last), the generator every DataLoader's BatchSampler iterates (lists of indices, the last one shorter
unless drop_last, each yielded as soon as it is full)."""
import itertools

from ..registry import exercise


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


@exercise("04.8", title="grouping a sampler's indices into batches", points=2,
          forbidden=["tinygrad_course.utils.data.BatchSampler", "tinygrad_course.utils.data.sampler.BatchSampler"])
def batch_indices_check(t, batch_indices):
    cases = [(list(range(10)), 3, False), (list(range(10)), 3, True), (list(range(9)), 3, True),
             ([7, 2, 5, 0, 9], 2, False), ([], 4, False), ([4], 4, True)]
    for indices, batch_size, drop_last in cases:
        call = f"batch_indices({indices}, batch_size={batch_size}, drop_last={drop_last})"
        produced = batch_indices(iter(indices), batch_size, drop_last)
        t.true(hasattr(produced, "__next__") or hasattr(produced, "__iter__"),
               f"{call} to return an iterable of batches (got {type(produced).__name__})")
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
    try:
        first_two = list(itertools.islice(batch_indices(_Stream(6), 3, False), 2))
    except RuntimeError as error:
        t.fail("batch_indices over a sampler that yields indices one at a time",
               f"{error}: yield each batch as soon as it is full, without reading the whole sampler first",
               hint="a generator: `yield batch` inside the loop over the sampler")
    t.equal([list(b) for b in first_two], [[0, 1, 2], [3, 4, 5]],
            "the first two batches of batch_indices over a sampler yielding 0, 1, 2, ... with batch_size=3")
