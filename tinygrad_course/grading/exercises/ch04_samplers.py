"""Chapter 04, the samplers a DataLoader draws its indices from: checks for the learner's
SequentialSampler (0, 1, ..., n-1 on every pass) and RandomSampler (its constructor's checks and num_samples
property as PyTorch's; PyTorch's permutations from `tc.randperm` with the sampler's generator, or with a fresh
one seeded from the default generator)."""
import tinygrad_course as tc

from ..registry import exercise

_SAMPLERS = ["tinygrad_course.utils.data.SequentialSampler", "tinygrad_course.utils.data.RandomSampler",
             "tinygrad_course.utils.data.sampler.SequentialSampler", "tinygrad_course.utils.data.sampler.RandomSampler"]


def _pytorch_epochs(n, num_samples, generator, epochs=2):
    """PyTorch's RandomSampler without replacement: each epoch num_samples // n whole permutations, then the
    first num_samples % n indices of one more, all from `generator`."""
    out = []
    for _ in range(epochs):
        order = []
        for _ in range(num_samples // n):
            order += tc.randperm(n, generator=generator).tolist()
        order += tc.randperm(n, generator=generator).tolist()[:num_samples % n]
        out.append(order)
    return out


def _ints(values):
    return [int(v) for v in values]


def constructor_errors(t, build, cases, *, hint=None):
    """Each (call, kwargs, exception type, PyTorch's message): building with kwargs raises exactly that."""
    for call, kwargs, kind, message in cases:
        try:
            build(**kwargs)
        except (TypeError, ValueError) as error:
            t.true(type(error) is kind, f"{call} to raise {kind.__name__} (got {type(error).__name__}: {error})",
                   why=f"PyTorch raises {kind.__name__} here" + (": a wrong type is a TypeError for replacement, "
                       "a ValueError for the counts" if "replacement" in message else ""), hint=hint)
            t.equal(str(error), message, what=f"the message of {call}", hint=hint)
        else:
            t.fail(call, f"did not raise; PyTorch raises {kind.__name__}({message!r})", hint=hint)


def _random_sampler_constructor(t, RandomSampler, data):
    """RandomSampler's attributes, its num_samples property and PyTorch's checks."""
    t.equal(RandomSampler(data, num_samples=3).num_samples, 3, what="RandomSampler(7 samples, num_samples=3).num_samples")
    growing = list(range(4))
    sampler = RandomSampler(growing)
    growing.append(4)
    got = sampler.num_samples
    t.equal(got, 5, what="num_samples of RandomSampler(4 samples) after the dataset grew to 5 samples",
            why="num_samples was fixed when the sampler was built; PyTorch's property reads len(self.data_source) "
                "every time it is asked" if got == 4 else None,
            hint="keep num_samples as given in self._num_samples; the property returns len(self.data_source) when "
                 "it is None")
    g = tc.Generator()
    kept = RandomSampler(data, generator=g)
    t.equal((kept.data_source is data, kept.replacement, kept._num_samples, kept.generator is g),
            (True, False, None, True), what="(data_source is data, replacement, _num_samples, generator is g) of "
                                           "RandomSampler(data, generator=g)",
            hint="keep the options as self.data_source, self.replacement, self._num_samples, self.generator")
    constructor_errors(t, lambda **kw: RandomSampler(**kw), [
        ("RandomSampler(7 samples, replacement=1)", dict(data_source=data, replacement=1), TypeError,
         "replacement should be a boolean value, but got replacement=1"),
        ("RandomSampler(7 samples, num_samples=0)", dict(data_source=data, num_samples=0), ValueError,
         "num_samples should be a positive integer value, but got num_samples=0"),
        ("RandomSampler(7 samples, num_samples=2.5)", dict(data_source=data, num_samples=2.5), ValueError,
         "num_samples should be a positive integer value, but got num_samples=2.5"),
        ("RandomSampler([]) (an empty dataset)", dict(data_source=[]), ValueError,
         "num_samples should be a positive integer value, but got num_samples=0"),
        ("RandomSampler([], replacement='yes')", dict(data_source=[], replacement="yes"), TypeError,
         "replacement should be a boolean value, but got replacement=yes"),
    ], hint="after keeping the options: isinstance(self.replacement, bool), else TypeError; then "
            "isinstance(self.num_samples, int) and self.num_samples > 0, else ValueError")
    t.true(RandomSampler(data, replacement=True, num_samples=30).replacement is True,
           "RandomSampler(7 samples, replacement=True, num_samples=30) to keep replacement=True")


@exercise("04.2", title="the samplers: in order, and shuffled by a generator", points=2, forbidden=_SAMPLERS)
def samplers_check(t, SequentialSampler, RandomSampler):
    data = [f"sample {i}" for i in range(7)]
    sequential = SequentialSampler(data)
    t.true(isinstance(sequential, tc.utils.data.Sampler), "SequentialSampler to subclass tc.utils.data.Sampler")
    first = list(sequential)
    t.equal(_ints(first) if all(isinstance(i, int) for i in first) else first, list(range(7)),
            what="list(SequentialSampler(7 samples))", hint="yield the indices range(len(self.data_source))",
            why="the sampler yields the samples themselves: a sampler yields indices, the DataLoader fetches the "
                "samples" if first == data else None)
    t.equal(_ints(list(sequential)), list(range(7)), what="a second pass over the same SequentialSampler",
            hint="return a new iterator from __iter__ every time (iter(range(...))), not one made in __init__",
            why="the second pass is empty: the iterator was made once and used up by the first epoch")
    t.equal(len(sequential), 7, what="len(SequentialSampler(7 samples))")
    t.true(sequential.data_source is data, "SequentialSampler(data).data_source to be data",
           hint="self.data_source = data_source")
    _random_sampler_constructor(t, RandomSampler, data)

    call = "RandomSampler(7 samples, generator=tc.Generator().manual_seed(5))"
    sampler = RandomSampler(data, generator=tc.Generator().manual_seed(5))
    t.true(isinstance(sampler, tc.utils.data.Sampler), "RandomSampler to subclass tc.utils.data.Sampler")
    got = [_ints(list(sampler)) for _ in range(2)]
    t.equal(sorted(got[0]), list(range(7)), what=f"the indices of one epoch of {call} (sorted)",
            hint="a permutation: every index exactly once per epoch")
    want = _pytorch_epochs(7, 7, tc.Generator().manual_seed(5))
    again = _ints(list(RandomSampler(data, generator=tc.Generator().manual_seed(5))))
    t.true(again == got[0], f"two samplers with generators seeded alike to give the same order (got {got[0]} and "
                            f"{again})", hint="permute with the sampler's own generator: tc.randperm(n, "
                                              "generator=self.generator)")
    t.equal(got[0], want[0], what=f"the first epoch of {call}",
            why="a permutation, but not the one tc.randperm draws from the sampler's generator: a seed gives "
                "PyTorch's order only through PyTorch's draws",
            hint="tc.randperm(len(self.data_source), generator=self.generator).tolist(): PyTorch's permutation")
    one_draw = _pytorch_epochs(7, 14, tc.Generator().manual_seed(5), epochs=1)[0][7:]
    t.equal(got[1], want[1], what=f"the second epoch of {call}",
            why=("every epoch has the same order: the generator was seeded again in __iter__" if got[1] == got[0] else
                 "after its whole permutations PyTorch draws one more and keeps its first num_samples % n indices "
                 "(none here): each epoch takes two permutations from the generator, so without that draw every "
                 "later epoch differs from PyTorch's" if got[1] == one_draw else None),
            hint="yield from tc.randperm(n, generator=...).tolist() num_samples // n times, then "
                 "tc.randperm(n, generator=...).tolist()[:num_samples % n]")
    longer = RandomSampler(data, num_samples=10, generator=tc.Generator().manual_seed(6))
    t.equal(_ints(list(longer)), _pytorch_epochs(7, 10, tc.Generator().manual_seed(6), epochs=1)[0],
            what="RandomSampler(7 samples, num_samples=10, generator=tc.Generator().manual_seed(6))",
            hint="num_samples // n whole permutations, then the first num_samples % n of one more")
    t.equal(len(longer), 10, what="len(RandomSampler(7 samples, num_samples=10))", hint="return self.num_samples")

    tc.manual_seed(3)
    unseeded = _ints(list(RandomSampler(data)))
    tc.manual_seed(3)
    seed = int(tc.empty((), dtype=tc.int64).random_().item())
    expected = _pytorch_epochs(7, 7, tc.Generator().manual_seed(seed), epochs=1)[0]
    tc.manual_seed(3)
    direct = tc.randperm(7).tolist()
    t.equal(unseeded, expected, what="RandomSampler(7 samples) without a generator, after tc.manual_seed(3)",
            why=("the permutation came from the default generator itself; PyTorch seeds a new tc.Generator with "
                 "one int64 drawn from it and permutes with that one" if unseeded == direct else None),
            hint="without self.generator: seed = int(tc.empty((), dtype=tc.int64).random_().item()), then "
                 "generator = tc.Generator(); generator.manual_seed(seed)")
    # the real run: a DataLoader drawing its batches with the learner's sampler
    loader = tc.utils.data.DataLoader(list(range(100, 110)), batch_size=4,
                                      sampler=RandomSampler(range(10), generator=tc.Generator().manual_seed(8)))
    batches = [_ints(b.tolist()) for b in loader]
    order = _pytorch_epochs(10, 10, tc.Generator().manual_seed(8), epochs=1)[0]
    t.equal(batches, [[100 + i for i in order[s:s + 4]] for s in range(0, 10, 4)],
            what="the batches of DataLoader(10 samples, batch_size=4, sampler=your RandomSampler(..., seed 8))")
