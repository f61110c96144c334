"""Catalogue of wrong answers for exercises 04.1 and 04.3-04.5 and 06.1-06.4: each realistic mistake fails its first
check with a message that names it (the hint, when the check has one, waits for the second failure), and the
released stub fails as not implemented."""
import time

import numpy as np
import pytest

import tinygrad_course as tc
from tinygrad_course import transforms
from tinygrad_course.utils.data import DataLoader, Dataset

from .wrong_answers import assert_names_mistake, catalogue_tests


# ---- 04.1 a Dataset whose labels start at 0 ----------------------------------------------------------------
class DatasetLabelsInOrderSeen(Dataset):
    """Classes numbered in the order they first appear, not sorted."""

    def __init__(self, features, labels):
        self.features = tc.tensor(np.asarray(features), dtype=tc.float32)
        self.classes = list(dict.fromkeys(labels))
        self.targets = [self.classes.index(label) for label in labels]

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, index):
        return self.features[index], self.targets[index]


class DatasetFloat64Features(Dataset):
    """Features kept in NumPy's float64."""

    def __init__(self, features, labels):
        self.features = tc.tensor(np.asarray(features))
        self.classes = sorted(set(labels))
        self.targets = [self.classes.index(label) for label in labels]

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, index):
        return self.features[index], self.targets[index]


class DatasetLengthOfFeatureRow(DatasetFloat64Features):
    """len() of the wrong thing: the number of features per sample."""

    def __init__(self, features, labels):
        super().__init__(features, labels)
        self.features = self.features.float()

    def __len__(self):
        return self.features.shape[1]


# ---- 04.3 a collate_fn that pads sequences -----------------------------------------------------------------
def pad_at_the_start(batch):
    sequences, labels = zip(*batch)
    lengths = [len(s) for s in sequences]
    padded = tc.zeros(len(sequences), max(lengths), dtype=tc.int64)
    for i, seq in enumerate(sequences):
        padded[i, max(lengths) - len(seq):] = seq
    return padded, tc.tensor(lengths), tc.tensor(labels, dtype=tc.int64)


def pad_as_floats(batch):
    sequences, labels = zip(*batch)
    lengths = [len(s) for s in sequences]
    padded = tc.zeros(len(sequences), max(lengths))
    for i, seq in enumerate(sequences):
        padded[i, :len(seq)] = seq.float()
    return padded, tc.tensor(lengths), tc.tensor(labels, dtype=tc.int64)


def pad_without_lengths(batch):
    sequences, labels = zip(*batch)
    longest = max(len(s) for s in sequences)
    padded = tc.zeros(len(sequences), longest, dtype=tc.int64)
    for i, seq in enumerate(sequences):
        padded[i, :len(seq)] = seq
    return padded, tc.tensor(labels, dtype=tc.int64)


# ---- 04.4 a normalizing transform fitted on the training set -----------------------------------------------
def transform_on_the_0_255_scale(train_images):
    scaled = train_images.astype(np.float64)
    return transforms.Compose([transforms.ToTensor(), transforms.Normalize((scaled.mean(),), (scaled.std(),))])


def transform_without_normalize(train_images):
    return transforms.Compose([transforms.ToTensor()])


# ---- 04.5 train and validation loaders ---------------------------------------------------------------------
def loaders_dropping_last(train_set, val_set, batch_size, seed):
    generator = tc.Generator().manual_seed(seed)
    return (DataLoader(train_set, batch_size=batch_size, shuffle=True, generator=generator, drop_last=True),
            DataLoader(val_set, batch_size=batch_size))


def loaders_shuffling_validation(train_set, val_set, batch_size, seed):
    generator = tc.Generator().manual_seed(seed)
    return (DataLoader(train_set, batch_size=batch_size, shuffle=True, generator=generator),
            DataLoader(val_set, batch_size=batch_size, shuffle=True, generator=generator))


def loaders_unseeded(train_set, val_set, batch_size, seed):
    return DataLoader(train_set, batch_size=batch_size, shuffle=True), DataLoader(val_set, batch_size=batch_size)


def loaders_not_shuffled(train_set, val_set, batch_size, seed):
    return DataLoader(train_set, batch_size=batch_size), DataLoader(val_set, batch_size=batch_size)


# ---- 06.1 move a whole batch to a device -------------------------------------------------------------------
def to_device_tensors_only(obj, device):
    return obj.to(device) if isinstance(obj, tc.Tensor) else obj


def to_device_tuple_as_list(obj, device):
    if isinstance(obj, tc.Tensor):
        return obj.to(device)
    if isinstance(obj, (tuple, list)):
        return [to_device_tuple_as_list(item, device) for item in obj]
    if isinstance(obj, dict):
        return {key: to_device_tuple_as_list(value, device) for key, value in obj.items()}
    return obj


def to_device_dict_not_recursive(obj, device):
    if isinstance(obj, tc.Tensor):
        return obj.to(device)
    if isinstance(obj, (tuple, list)):
        return type(obj)(to_device_dict_not_recursive(item, device) for item in obj)
    if isinstance(obj, dict):
        return {key: value.to(device) if isinstance(value, tc.Tensor) else value for key, value in obj.items()}
    return obj


# ---- 06.2 time a GPU operation honestly --------------------------------------------------------------------
def time_without_warm_up(fn, repeats, synchronize):
    synchronize()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    synchronize()
    return (time.perf_counter() - start) / repeats


def time_without_final_sync(fn, repeats, synchronize):
    fn()
    synchronize()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - start) / repeats


def time_total_not_per_call(fn, repeats, synchronize):
    fn()
    synchronize()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    synchronize()
    return time.perf_counter() - start


# ---- 06.3 a fused SGD-momentum update ----------------------------------------------------------------------
def momentum_buffer_rebound(p, g, buf, lr, momentum):
    buf = momentum * buf + g
    p -= lr * buf


def momentum_sign_flipped(p, g, buf, lr, momentum):
    buf *= momentum
    buf += g
    p += lr * buf


def kernel_body():
    return "buf = momentum * buf + grad;\nparam = param - lr * buf;"


# ---- 06.4 the loss scaler's update rule --------------------------------------------------------------------
def scale_without_reset(scale, tracker, found_inf, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
    if found_inf:
        return scale * backoff_factor, tracker
    tracker += 1
    if tracker == growth_interval:
        return scale * growth_factor, 0
    return scale, tracker


def scale_growing_without_reset(scale, tracker, found_inf, growth_factor=2.0, backoff_factor=0.5,
                                growth_interval=2000):
    if found_inf:
        return scale * backoff_factor, 0
    tracker += 1
    if tracker == growth_interval:
        return scale * growth_factor, tracker
    return scale, tracker


def scale_with_default_factors(scale, tracker, found_inf, growth_factor=2.0, backoff_factor=0.5,
                               growth_interval=2000):
    if found_inf:
        return scale * 0.5, 0
    tracker += 1
    if tracker == growth_interval:
        return scale * 2.0, 0
    return scale, tracker


CATALOGUE = [
    ("04.1", (DatasetLabelsInOrderSeen,), ["ds.classes: expected ['cat', 'dog', 'emu'], got ['dog', 'cat', 'emu']",
                                            "order of first appearance, not sorted"]),
    ("04.1", (DatasetFloat64Features,), ["ds[1][0] to be a float32 tensor (got Tensor tc.float64)"]),
    ("04.1", (DatasetLengthOfFeatureRow,), ["len(ds): expected 4, got 3", "counts the classes, not the samples"]),
    ("04.3", (pad_at_the_start,), ["padded batch", "the padding was put at the start (left)", "input: batch = "]),
    ("04.3", (pad_as_floats,), ["padded to keep the int64 token dtype (got tc.float32)"]),
    ("04.3", (pad_without_lengths,), ["pad_collate to return a tuple (padded, lengths, labels)"]),
    ("04.4", (transform_on_the_0_255_scale,), ["the transformed training images to have mean 0 and std 1"]),
    ("04.4", (transform_without_normalize,), ["the transformed training images to have mean 0 and std 1 "
                                                    "(got mean 0.3"]),
    ("04.5", (loaders_dropping_last,), ["len(train_loader) for 100 samples, batch 32: expected 4, got 3",
                                           "the last, smaller batch was dropped"]),
    ("04.5", (loaders_shuffling_validation,), ["validation order", "the validation loader shuffles"]),
    ("04.5", (loaders_unseeded,), ["first epoch of a second make_loaders(..., seed=0)",
                                   "the shuffle does not depend on `seed`"]),
    ("04.5", (loaders_not_shuffled,), ["the training loader to shuffle"]),
    ("06.1", (to_device_tensors_only,), ["the devices passed to .to() for two tensors nested in a dict: "
                                         "expected ['cuda', 'cuda'], got []"]),
    ("06.1", (to_device_tuple_as_list,), ["a (inputs, labels) tuple to stay a tuple of two"]),
    ("06.1", (to_device_dict_not_recursive,), ["two tensors nested in a dict: expected ['cuda', 'cuda'], got []"]),
    ("06.2", (time_without_warm_up,), ["how many times fn was called (1 warm-up + repeats=4): expected 5, got 4"]),
    ("06.2", (time_without_final_sync,), ["synchronize() between the last call of fn and reading the clock"]),
    ("06.2", (time_total_not_per_call,), ["you returned the total time of the 4 timed calls", "input: time_op("]),
    ("06.3", (momentum_buffer_rebound, kernel_body), ["buf did not change"]),
    ("06.3", (momentum_sign_flipped, kernel_body), ["p after one step", "the sign of the step is flipped",
                                                     "input: p = "]),
    ("06.4", (scale_without_reset,), ["update_scale(1024.0, tracker=5, found_inf=True): expected (512.0, 0), got "
                                      "(512.0, 5)", "the count of clean steps was kept"]),
    ("06.4", (scale_growing_without_reset,), ["expected (2048.0, 0), got (2048.0, 2000)",
                                                "the count of clean steps was not restarted"]),
    ("06.4", (scale_with_default_factors,), ["growth_interval=3): expected (32.0, 0), got (16.0, 0)",
                                               "the default factors were used"]),
]


@pytest.mark.parametrize("exercise, wrong, phrases", CATALOGUE,
                         ids=[f"{e}-{'-'.join(w.__name__ for w in ws)}" for e, ws, _ in CATALOGUE])
def test_a_wrong_answer_fails_naming_its_mistake(exercise, wrong, phrases):
    assert_names_mistake(exercise, wrong, *phrases)


NAMES = {"04.1": ("04", "ClassificationDataset"), "04.3": ("04", "pad_collate"),
         "04.4": ("04", "make_transform"), "04.5": ("04", "make_loaders"), "06.1": ("06", "to_device"),
         "06.2": ("06", "time_op"), "06.3": ("06", "momentum_update", "momentum_kernel_body"),
         "06.4": ("06", "update_scale")}


test_the_stub_fails, test_every_exercise_has_two_wrong_answers = catalogue_tests(NAMES, CATALOGUE)
