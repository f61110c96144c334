"""A catalogue of wrong answers for the DataLoader's pipeline: 04.2 (SequentialSampler and RandomSampler),
04.8 (BatchSampler) and 04.9 (the DataLoader's loop). Each realistic mistake fails its check with a message
that names it, the released stub fails, and the solution passes. The wrong answers are the solution cell
with one change each."""
import numpy as np
import pytest

import tinygrad_course as tc
from tinygrad_course.grading import check
from tinygrad_course.utils.data import Dataset, Sampler

from .test_wrong_answers_ch04_06 import _fails
from .wrong_answers import edited_cell

CELLS = {"04.2": ("ex04_2", ("SequentialSampler", "RandomSampler")), "04.8": ("ex04_8", ("BatchSampler",)),
         "04.9": ("ex04_9", ("DataLoader",))}


def _define(exercise, *changes, folder="solutions"):
    grade_id, names = CELLS[exercise]
    namespace = edited_cell("04_data.ipynb", grade_id, changes,
                            {"tc": tc, "np": np, "Sampler": Sampler, "Dataset": Dataset}, folder)
    return tuple(namespace[n] for n in names)


@pytest.mark.parametrize("exercise", sorted(CELLS))
def test_the_solution_passes(exercise):
    check(exercise, *_define(exercise))


WRONG = [
    # 04.2 the samplers
    ("04.2", [("        return iter(range(len(self.data_source)))", "        return iter(self.data_source)")],
     r"the sampler yields the samples themselves"),
    ("04.2", [("        self.data_source = data_source\n        ### END SOLUTION\n\n    def __iter__",
               "        self.data_source = data_source\n        self.order = iter(range(len(data_source)))\n"
               "        ### END SOLUTION\n\n    def __iter__"),
              ("        return iter(range(len(self.data_source)))", "        return self.order")],
     r"the second pass is empty"),
    ("04.2", [("            yield from tc.randperm(n, generator=generator).tolist()\n"
               "        yield from tc.randperm(n, generator=generator).tolist()[:self.num_samples % n]",
               "            yield from tc.randperm(n, generator=generator).tolist()\n"
               "        if self.num_samples % n:\n"
               "            yield from tc.randperm(n, generator=generator).tolist()[:self.num_samples % n]")],
     r"each epoch takes two permutations from the generator"),
    ("04.2", [("            generator = self.generator\n",
               "            generator = tc.Generator().manual_seed(self.generator.initial_seed())\n")],
     r"every epoch has the same order: the generator was seeded again"),
    ("04.2", [("            seed = int(tc.empty((), dtype=tc.int64).random_().item())\n"
               "            generator = tc.Generator()\n            generator.manual_seed(seed)\n",
               "            generator = None\n")],
     r"the permutation came from the default generator itself"),
    ("04.2", [("yield from tc.randperm(n, generator=generator).tolist()\n",
               "yield from np.random.default_rng(0).permutation(n).tolist()\n")],
     r"a permutation, but not the one tc.randperm draws from the sampler's generator"),
    ("04.2", [("            raise TypeError(f\"replacement should", "            raise ValueError(f\"replacement should")],
     r"RandomSampler\(7 samples, replacement=1\) to raise TypeError \(got ValueError.*PyTorch raises TypeError here"),
    ("04.2", [("        self._num_samples = num_samples\n",
               "        self._num_samples = len(data_source) if num_samples is None else num_samples\n")],
     r"num_samples was fixed when the sampler was built"),
    ("04.2", [("        if not isinstance(self.num_samples, int) or self.num_samples <= 0:",
               "        if self.num_samples <= 0:")],
     r"RandomSampler\(7 samples, num_samples=2.5\): did not raise; PyTorch raises ValueError"),
    ("04.2", [("        if not isinstance(self.replacement, bool):\n", "        if False:\n")],
     r"RandomSampler\(7 samples, replacement=1\): did not raise; PyTorch raises TypeError"),
    # 04.8 BatchSampler
    ("04.8", [(" or isinstance(batch_size, bool)", "")],
     r"batch_size=True, drop_last=False\): did not raise; PyTorch raises ValueError.*True is an int"),
    ("04.8", [("            raise ValueError(f\"drop_last should", "            raise TypeError(f\"drop_last should")],
     r"drop_last=1\) to raise ValueError \(got TypeError.*PyTorch raises ValueError here"),
    ("04.8", [("        if not isinstance(drop_last, bool):\n", "        if False:\n")],
     r"drop_last=1\): did not raise"),
    ("04.8", [("                batch = []\n", "                batch.clear()\n")], r"every batch is the same list object"),
    ("04.8", [("        if batch and not self.drop_last:\n            yield batch\n", "")],
     r"the last, shorter batch is missing although drop_last=False"),
    ("04.8", [("        if batch and not self.drop_last:", "        if batch:")],
     r"drop_last=True must leave out the last, shorter batch"),
    ("04.8", [("        for index in self.sampler:", "        for index in list(self.sampler):")],
     r"read past index 5 of a sampler.*yield each batch as soon as it is full"),
    ("04.8", [("        return (len(self.sampler) + self.batch_size - 1) // self.batch_size",
               "        return len(self.sampler) // self.batch_size")],
     r"len\(BatchSampler\(range\(1797\), 64, drop_last=False\)\): expected 29, got 28.*the last, smaller batch was "
     r"not counted"),
    ("04.8", [("        if self.drop_last:\n            return len(self.sampler) // self.batch_size\n", "")],
     r"the incomplete last batch was still counted with drop_last=True"),
    # 04.9 the DataLoader's loop
    ("04.9", [("        tc.empty((), dtype=tc.int64).random_(generator=self.generator)", "        pass")],
     r"the order is not PyTorch's: at the start of every epoch PyTorch's iterator draws one int64"),
    ("04.9", [("self.collate_fn([self.dataset[i] for i in indices])",
               "tc.utils.data.default_collate([self.dataset[i] for i in indices])")],
     r"the samples were not merged by the loader's own collate_fn"),
    ("04.9", [("self.collate_fn([self.dataset[i] for i in indices])", "self.collate_fn(self.dataset[indices])")],
     r"fetch the samples one index at a time"),
    ("04.9", [("                yield self.collate_fn(self.dataset[index])",
               "                yield self.collate_fn([self.dataset[index]])")],
     r"each sample was put in a batch of one"),
    ("04.9", [("        if self.batch_sampler is not None:\n", "        if True:\n")],
     r"without batching self.batch_sampler is None"),
    ("04.9", [("        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)",
               "        return len(self.dataset)")],
     r"len\(loader\) counted the samples; it counts the batches of an epoch"),
    ("04.9", [("            if shuffle:\n                sampler = tc.utils.data.RandomSampler(dataset, generator=generator)\n"
               "            else:\n                sampler = tc.utils.data.SequentialSampler(dataset)",
               "            sampler = tc.utils.data.SequentialSampler(dataset)")],
     r"the loader does not shuffle: shuffle=True must choose a RandomSampler"),
    ("04.9", [("tc.utils.data.default_collate if batch_sampler is not None else tc.utils.data.default_convert",
               "tc.utils.data.default_collate")],
     r"batch_size=None turns batching off, so there is nothing to collate"),
    ("04.9", [("        if sampler is not None and shuffle:\n"
               "            raise ValueError(\"sampler option is mutually exclusive with shuffle\")\n", "")],
     r"DataLoader\(range\(10\), sampler=\[0, 1\], shuffle=True\): did not raise"),
    ("04.9", [("        self.__initialized = True\n", "")],
     r"loader.batch_size = 3 for loader = DataLoader\(10 samples, batch_size=2\): did not raise.*end __init__ with "
     r"self.__initialized = True"),
    ("04.9", [("        if self.__initialized and attr in (\"batch_size\", \"batch_sampler\", \"sampler\", \"drop_last\", "
               "\"dataset\",\n                                           \"persistent_workers\"):",
               "        if self.__initialized:")],
     r"loader.collate_fn = len.*raised ValueError.*PyTorch freezes only batch_size"),
    ("04.9", [("            raise ValueError(f\"{attr} attribute should not be set after {self.__class__.__name__} is "
               "initialized\")", "            raise ValueError(f\"{attr} cannot be changed\")")],
     r"the ValueError of loader.batch_size = 3.*attribute should not be set after DataLoader is initialized"),
    ("04.9", [("                sampler = tc.utils.data.RandomSampler(dataset, generator=generator)",
               "                sampler = tc.utils.data.RandomSampler(dataset)")],
     r"a tc.utils.data.RandomSampler drawing from g"),
]


@pytest.mark.parametrize("exercise, changes, phrase", WRONG, ids=[f"{e}-{i}" for i, (e, _, _) in enumerate(WRONG)])
def test_a_wrong_answer_fails_naming_its_mistake(exercise, changes, phrase):
    _fails(exercise, *_define(exercise, *changes), phrase=phrase)


@pytest.mark.parametrize("exercise", sorted(CELLS))
def test_the_stub_is_not_implemented_yet(exercise):
    _fails(exercise, *_define(exercise, folder="exercises"), phrase=r"not implemented yet")
