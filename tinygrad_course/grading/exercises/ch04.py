"""Chapter 04 (data): checks for a Dataset, a padding collate_fn, a transform, the loaders, default_collate
(the samplers, BatchSampler and the DataLoader's loop are in ch04_samplers.py, ch04_batches.py, ch04_loader.py).

The dataset, the collate function and the loaders are also run inside a real DataLoader that feeds a
model for a few training steps.
"""
import warnings

import numpy as np

import tinygrad_course as tc

from .. import mistakes
from ..registry import exercise
from . import ch04_batches  # noqa: F401  (registers 04.8: BatchSampler)
from . import ch04_loader  # noqa: F401  (registers 04.9: the DataLoader's loop)
from . import ch04_random  # noqa: F401  (registers 04.10: a Generator's uniform, normal and permutation)
from . import ch04_samplers  # noqa: F401  (registers 04.2: SequentialSampler and RandomSampler)
from .ch03 import _digits_arrays


def _label_int(label):
    return int(label.item()) if hasattr(label, "item") else label


# --- 04.1 -------------------------------------------------------------------------------------------------
@exercise("04.1", title="a Dataset whose labels start at 0", points=2)
def dataset_check(t, ClassificationDataset):
    features = np.arange(12, dtype=np.float64).reshape(4, 3)
    ds = ClassificationDataset(features, ["dog", "cat", "emu", "cat"])
    t.true(isinstance(ds, tc.utils.data.Dataset), "ClassificationDataset to subclass tc.utils.data.Dataset")
    t.equal(len(ds), 4, what="len(ds)", hint="__len__ returns the number of samples",
            why="len(ds) counts the classes, not the samples" if len(ds) == 3 else None)
    t.equal(list(ds.classes), ["cat", "dog", "emu"], what="ds.classes", hint="the sorted distinct labels",
            why=("the classes are in order of first appearance, not sorted (the order then depends on the file)"
                 if sorted(ds.classes) == ["cat", "dog", "emu"] else None))
    x, label = ds[1]
    t.true(isinstance(x, tc.Tensor) and x.dtype == tc.float32,
           f"ds[1][0] to be a float32 tensor (got {type(x).__name__} {getattr(x, 'dtype', '')})",
           hint="convert the features with tc.tensor(..., dtype=tc.float32): models compute in float32")
    t.close(x, features[1], what="features of ds[1]")
    labels = [_label_int(ds[i][1]) for i in range(4)]
    t.equal(labels, [1, 0, 2, 0], what="labels of ds[0..3] for ['dog', 'cat', 'emu', 'cat']",
            hint="map each label to its position in ds.classes")
    X, y = _digits_arrays()
    digits = ClassificationDataset(X[:300], (y[:300] + 1).tolist())  # names 1..10, as in many raw files
    got = np.array([_label_int(digits[i][1]) for i in range(len(digits))])
    t.close(got, y[:300], what="labels for raw labels 1..10", mistakes=[mistakes.off_by_one(
        "labels must start at 0 (the largest is num_classes - 1): cross_entropy indexes its logits with them")])
    # the real run: batches from a DataLoader over the learner's dataset train a classifier
    tc.manual_seed(0)
    loader = tc.utils.data.DataLoader(ClassificationDataset(X[:512], y[:512].tolist()), batch_size=64, shuffle=True,
                                      generator=tc.Generator().manual_seed(0))
    model = tc.nn.Sequential(tc.nn.Linear(64, 32), tc.nn.ReLU(), tc.nn.Linear(32, 10))
    opt = tc.optim.Adam(model.parameters(), lr=0.01)
    for _ in range(5):
        for xb, yb in loader:
            opt.zero_grad()
            loss = tc.nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
    t.true(float(loss.item()) < 0.5, f"a classifier trained for 5 epochs on your dataset to reach a loss below 0.5 "
                                     f"(got {float(loss.item()):.3f})")


# --- 04.3 -------------------------------------------------------------------------------------------------
def _sequence_data(n, seed):
    rng = np.random.default_rng(seed)
    seqs, labels = [], []
    for _ in range(n):
        length = int(rng.integers(2, 12))
        seq = rng.integers(1, 10, size=length)
        label = int(rng.random() < 0.5)
        if label and 7 not in seq:
            seq[rng.integers(length)] = 7
        if not label:
            seq[seq == 7] = 8
        seqs.append(tc.tensor(seq, dtype=tc.int64))
        labels.append(label)
    return list(zip(seqs, labels))


@exercise("04.3", title="a collate_fn that pads sequences", points=3,
          forbidden=["tinygrad_course.nn.utils.rnn.pad_sequence"])
def collate_check(t, pad_collate):
    batch = [(tc.tensor([5, 6, 7]), 1), (tc.tensor([8]), 0), (tc.tensor([1, 2, 3, 4]), 1)]
    result = pad_collate(batch)
    t.true(isinstance(result, tuple) and len(result) == 3, "pad_collate to return a tuple (padded, lengths, labels)")
    padded, lengths, labels = result
    expected = np.array([[5, 6, 7, 0], [8, 0, 0, 0], [1, 2, 3, 4]])
    left = np.array([[0, 5, 6, 7], [0, 0, 0, 8], [1, 2, 3, 4]])
    t.close(padded, expected, what="padded batch", mistakes=[
        mistakes.custom(lambda g, e: np.array_equal(g, left), "the padding was put at the start (left) of each "
                        "sequence", "pad at the end (right), so position 0 is the first token")], given={"batch": batch})
    t.true(padded.dtype == tc.int64, f"padded to keep the int64 token dtype (got {padded.dtype})")
    t.close(lengths, [3, 1, 4], what="lengths")
    t.close(labels, [1, 0, 1], what="labels")
    t.true(labels.dtype == tc.int64, f"labels to be an int64 tensor (got {labels.dtype}), as cross_entropy expects")
    # the real run: a DataLoader with the learner's collate_fn feeds a bag-of-embeddings classifier
    tc.manual_seed(0)
    loader = tc.utils.data.DataLoader(_sequence_data(256, 0), batch_size=16, shuffle=True, collate_fn=pad_collate,
                                      generator=tc.Generator().manual_seed(0))
    embed, head = tc.nn.Embedding(10, 8), tc.nn.Linear(8, 2)
    opt = tc.optim.Adam([*embed.parameters(), *head.parameters()], lr=0.05)

    def forward(tokens, lens):
        mask = (tc.arange(tokens.shape[1]).unsqueeze(0) < lens.unsqueeze(1)).float().unsqueeze(2)
        return head((embed(tokens) * mask).sum(dim=1))

    for _ in range(6):
        for tokens, lens, yb in loader:
            opt.zero_grad()
            tc.nn.functional.cross_entropy(forward(tokens, lens), yb).backward()
            opt.step()
    tokens, lens, yb = pad_collate(_sequence_data(200, 1))
    with tc.no_grad():
        acc = float((forward(tokens, lens).argmax(dim=1) == yb).float().mean().item())
    t.true(acc > 0.9, f"a sequence classifier trained through your collate_fn to reach > 90% accuracy (got {acc:.1%})")


# --- 04.4 -------------------------------------------------------------------------------------------------
@exercise("04.4", title="a normalizing transform fitted on the training set", points=2)
def transform_check(t, make_transform):
    X, _ = _digits_arrays()
    images = (X.reshape(-1, 8, 8, 1) * 255).round().astype(np.uint8)  # H x W x C uint8, like image files
    train, test = images[:1200], images[1200:]
    transform = make_transform(train)
    out = transform(train[0])
    t.true(isinstance(out, tc.Tensor), f"transform(image) to return a tensor (got {type(out).__name__})")
    t.equal(tuple(out.shape), (1, 8, 8), what="transform(image).shape for an 8x8x1 uint8 image",
            hint="ToTensor turns H x W x C into C x H x W")
    t.true(out.dtype == tc.float32, f"a float32 result (got {out.dtype})")
    batch = np.stack([transform(im).numpy() for im in train])
    mean, std = float(batch.mean()), float(batch.std())
    hint = "compute mean and std of the training images on the [0, 1] scale that ToTensor produces"
    if abs(mean) > 10:
        hint = "ToTensor already divides by 255: compute mean and std on the [0, 1] scale"
    t.true(abs(mean) < 1e-3 and abs(std - 1) < 1e-2,
           f"the transformed training images to have mean 0 and std 1 (got mean {mean:.4f}, std {std:.4f})", hint=hint)
    full = np.stack([transform(im).numpy() for im in images])
    t.true(abs(float(full.mean())) > 1e-4, "mean and std to come from the training images only (not the test images)",
           hint="fit on the images make_transform receives; the test set must stay unseen")
    tc.manual_seed(0)
    dataset = [(transform(im), 0) for im in test[:8]]
    xb, _ = next(iter(tc.utils.data.DataLoader(dataset, batch_size=8)))
    t.equal(tuple(xb.shape), (8, 1, 8, 8), what="a DataLoader batch of transformed images")


# --- 04.5 -------------------------------------------------------------------------------------------------
@exercise("04.5", title="train and validation loaders", points=2)
def loaders_check(t, make_loaders):
    train_set = tc.utils.data.TensorDataset(tc.arange(100))
    val_set = tc.utils.data.TensorDataset(tc.arange(100, 130))
    train_loader, val_loader = make_loaders(train_set, val_set, batch_size=32, seed=0)
    t.equal(len(train_loader), 4, what="len(train_loader) for 100 samples, batch 32",
            hint="keep the last, smaller batch (drop_last=False): every sample counts",
            why="the last, smaller batch was dropped (drop_last=True?)" if len(train_loader) == 3 else None)
    t.equal(len(val_loader), 1, what="len(val_loader) for 30 samples, batch 32")

    def epoch(loader):
        return [int(v) for (b,) in loader for v in b.tolist()]

    first, second = epoch(train_loader), epoch(train_loader)
    t.equal(sorted(first), list(range(100)), what="the samples of one training epoch (sorted)")
    t.true(first != list(range(100)), "the training loader to shuffle", hint="shuffle=True for training")
    t.true(first != second, "a new order every epoch", hint="pass a generator, not a fixed permutation")
    t.equal(epoch(val_loader), list(range(100, 130)), what="validation order",
            hint="never shuffle validation data: shuffle=False keeps evaluation reproducible",
            why="the validation loader shuffles" if sorted(epoch(val_loader)) == list(range(100, 130)) else None)
    again, _ = make_loaders(train_set, val_set, batch_size=32, seed=0)
    t.equal(epoch(again), first, what="first epoch of a second make_loaders(..., seed=0)",
            hint="seed the shuffle: generator=tc.Generator().manual_seed(seed)",
            why="the same seed gave a different order: the shuffle does not depend on `seed`")
    other, _ = make_loaders(train_set, val_set, batch_size=32, seed=1)
    t.true(epoch(other) != first, "a different seed to give a different order")


# --- 04.6 -------------------------------------------------------------------------------------------------
def _index_batches(loader):
    return [[int(i) for i in batch] for batch in loader.batch_sampler]


@exercise("04.6", title="a loader that loads in parallel", points=2)
def parallel_loader_check(t, make_parallel_loader):
    dataset = tc.utils.data.TensorDataset(tc.arange(40))
    call = "make_parallel_loader(dataset of 40, batch_size=8, num_workers=2, device='cpu')"
    loader = make_parallel_loader(dataset, 8, 2, "cpu")
    t.true(isinstance(loader, tc.utils.data.DataLoader), f"{call} to return a DataLoader (got {type(loader).__name__})")
    t.equal(loader.num_workers, 2, what=f"loader.num_workers for {call}", hint="pass num_workers on to the DataLoader")
    t.equal(loader.persistent_workers, True, what=f"loader.persistent_workers for {call}",
            hint="without persistent_workers=True the worker processes are started again for every epoch")
    t.equal(loader.prefetch_factor, 4, what=f"loader.prefetch_factor for {call}",
            hint="prefetch_factor is the number of batches each worker keeps ready ahead of the model")
    t.equal(loader.pin_memory, False, what=f"loader.pin_memory for {call}",
            hint="pinned (page-locked) memory only speeds up copies to a GPU; on the CPU it is wasted work")
    expected = [list(range(s, s + 8)) for s in range(0, 40, 8)]
    t.equal(_index_batches(loader), expected, what=f"the sample indices of each batch for {call}",
            hint="keep the dataset's order (shuffle=False), so results with and without workers can be compared")
    for device in ("cuda", tc.device("cuda", 0)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # no GPU here: the DataLoader warns that pinning is skipped
            gpu_loader = make_parallel_loader(dataset, 8, 2, device)
        t.equal(gpu_loader.pin_memory, True, what=f"loader.pin_memory for device={device!r}",
                hint="for a CUDA device pin the batches: the copy to the GPU can then run asynchronously")
    serial_call = "make_parallel_loader(dataset of 40, batch_size=8, num_workers=0, device='cpu')"
    try:
        serial = make_parallel_loader(dataset, 8, 0, "cpu")
    except ValueError as exc:
        t.fail(serial_call, f"raised ValueError: {exc}\n  hint: persistent_workers and prefetch_factor "
                            f"only make sense with worker processes; with num_workers=0 leave them at their defaults")
    t.equal(serial.num_workers, 0, what=f"loader.num_workers for {serial_call}")
    got = [b.tolist() for (b,) in serial]
    t.equal(got, expected, what=f"the batches of {serial_call}", hint="keep the dataset's order (shuffle=False)")


# --- 04.7 -------------------------------------------------------------------------------------------------
def _describe_batch(value):
    """A short structural description of a collated batch: container types, tensor shapes and dtypes."""
    if isinstance(value, tc.Tensor):
        return f"tensor{tuple(value.shape)} {str(value.dtype).replace('tc.', '')}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_describe_batch(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_describe_batch(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner},)" if len(value) == 1 else f"({inner})"
    return repr(value)


def _compare_batch(t, got, expected, what):
    """Compare a collated batch with the reference part by part, naming the first part that differs."""
    if isinstance(expected, tc.Tensor):
        t.true(isinstance(got, tc.Tensor), f"{what} to be a tensor (got {_describe_batch(got)})")
        if got.dim() == expected.dim() - 1:
            t.fail(what, f"expected shape {tuple(expected.shape)}, got {tuple(got.shape)}: the samples were joined "
                         f"end to end, without a new batch dimension\n  hint: tc.cat joins "
                         f"along an existing dimension; tc.stack adds the new batch dimension in front")
        hint = None
        if expected.dtype == tc.float64 and got.dtype == tc.float32:
            hint = "Python floats are double precision: collate them into a float64 tensor, as PyTorch does"
        t.equal(str(got.dtype), str(expected.dtype), what=f"the dtype of {what}", hint=hint,
                why="Python floats were collated into float32, the framework's default, not float64" if hint else None)
        t.close(got, expected, what=what)
    elif isinstance(expected, dict):
        t.true(isinstance(got, dict), f"{what} to be a dict (got {_describe_batch(got)})",
               hint="a batch of dicts becomes one dict: each key collated over the samples")
        t.equal(sorted(got), sorted(expected), what=f"the keys of {what}")
        for key in expected:
            _compare_batch(t, got[key], expected[key], f"{what}[{key!r}]")
    else:
        hint = "a tuple of fields becomes a list with one batch per field (PyTorch's default_collate does the same)"
        t.true(isinstance(got, list), f"{what} to be a list (got {_describe_batch(got)})",
               hint=hint if isinstance(got, tuple) else None)
        t.equal(len(got), len(expected), what=f"the number of fields in {what}",
                hint="transpose first: one entry per field (zip(*batch)), not one per sample")
        for i, (g, e) in enumerate(zip(got, expected)):
            _compare_batch(t, g, e, f"{what}[{i}]")


@exercise("04.7", title="collate samples into a batch", points=2,
          forbidden=["tinygrad_course.utils.data.default_collate", "tinygrad_course.utils.data.collate.default_collate"])
def default_collate_check(t, collate):
    reference = tc.utils.data.default_collate
    cases = [
        ("3 samples (features (2,) float32, label int)", [(tc.tensor([1.0, 2.0]), 1), (tc.tensor([3.0, 4.0]), 0),
                                                           (tc.tensor([5.0, 6.0]), 1)]),
        ("2 ints", [3, 7]),
        ("2 floats", [0.5, 1.5]),
        ("2 samples (image (1, 2, 2), label int, weight float)", [(tc.ones(1, 2, 2), 4, 0.25), (tc.zeros(1, 2, 2), 2, 1.0)]),
        ("2 dict samples {'x': tensor (3,), 'y': int}", [{"x": tc.arange(3), "y": 1}, {"x": tc.arange(3, 6), "y": 0}]),
        ("2 samples of (int64 tokens (2,), [int, int])", [(tc.tensor([1, 2]), [5, 6]), (tc.tensor([3, 4]), [7, 8])]),
    ]
    for name, batch in cases:
        try:
            got = collate(batch)
        except NotImplementedError:
            raise
        except Exception as exc:  # noqa: BLE001 -- any error of the learner's code, reported with its input
            hint = "transpose first: zip(*batch) gives one tuple per field" if isinstance(batch[0], (tuple, list)) else None
            t.fail(f"collate({name})", f"raised {type(exc).__name__}: {exc}" + (f"\n  hint: {hint}" if hint else ""))
        _compare_batch(t, got, reference(batch), f"collate({name})")
    # the real run: a DataLoader with the learner's collate_fn trains a classifier on the digits
    X, y = _digits_arrays()
    samples = [(tc.tensor(X[i]), int(y[i])) for i in range(512)]
    tc.manual_seed(0)
    loader = tc.utils.data.DataLoader(samples, batch_size=64, shuffle=True, collate_fn=collate,
                                      generator=tc.Generator().manual_seed(0))
    model = tc.nn.Sequential(tc.nn.Linear(64, 32), tc.nn.ReLU(), tc.nn.Linear(32, 10))
    opt = tc.optim.Adam(model.parameters(), lr=0.01)
    for _ in range(5):
        for xb, yb in loader:
            opt.zero_grad()
            loss = tc.nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
    t.true(float(loss.item()) < 0.5, f"a classifier trained for 5 epochs through your collate_fn to reach a loss "
                                     f"below 0.5 (got {float(loss.item()):.3f})")
